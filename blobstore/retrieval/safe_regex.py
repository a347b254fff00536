"""User-supplied regular expressions that cannot hang the agent.

The model writes grep patterns; a pattern such as ``(a+)+$`` backtracks
exponentially and would freeze the process.  Guards, in order:

* refuse before compiling: empty, NUL, longer than ``max_len`` (default 256),
  or counted repeats whose nested product is huge (compile itself would hang,
  see :mod:`.regex_budget`);
* every match call passes a ``timeout`` to the ``regex`` module;
* long subjects are searched in **bounded windows** (not truncated): windows of
  ``window_chars`` overlapping by ``overlap_chars``, so a match anywhere in a
  10 MB line is still found and its offsets are exact.  A match that fills its
  window is retried in wider windows (up to 64x) so greedy matches keep their
  length.  Limitations: a match longer than that is reported cut at the window
  end, and a match that only exists across a window edge and is longer than
  the overlap may be missed.  ``$``/``\\b``/lookahead at an artificial window
  end are treated as unreliable and re-checked in a later window.

Every refusal is a :class:`PatternError` whose message says what happened and
what to do instead (simplify, anchor, or ``literal=True``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import regex

from .regex_budget import estimate_expansion

__all__ = [
    "PatternError",
    "PatternTooLongError",
    "PatternSyntaxError",
    "PatternTooComplexError",
    "PatternTimeoutError",
    "SafePattern",
    "compile_user_pattern",
]

DEFAULT_MAX_LEN = 256
DEFAULT_TIMEOUT_S = 0.25
DEFAULT_WINDOW_CHARS = 20_000
DEFAULT_OVERLAP_CHARS = 1_000
MAX_EXPANSION = 10_000
_MAX_WINDOW_GROWTH = 64  # a match filling its window is retried in up to 64x wider ones
_ADVICE = (
    "Simplify the pattern (avoid nested quantifiers like (a+)+), or pass literal=True to search for the plain text."
)


class PatternError(ValueError):
    """A user pattern that was refused or could not run; ``str()`` is model-ready."""

    def __init__(self, message: str, *, pattern: str = ""):
        super().__init__(message)
        self.pattern = pattern


class PatternTooLongError(PatternError):
    """Pattern longer than the configured cap."""


class PatternSyntaxError(PatternError):
    """Pattern rejected by the regex parser (or containing NUL); ``position`` is 0-based."""

    def __init__(self, message: str, *, pattern: str = "", position: int | None = None, reason: str = ""):
        super().__init__(message, pattern=pattern)
        self.position = position
        self.reason = reason


class PatternTooComplexError(PatternError):
    """Counted repeats so large that compiling alone would stall."""


class PatternTimeoutError(PatternError):
    """A single match attempt ran past its timeout (catastrophic backtracking)."""

    def __init__(self, message: str, *, pattern: str = "", budget_exhausted: bool = False):
        super().__init__(message, pattern=pattern)
        self.budget_exhausted = budget_exhausted


def _short(p: str, n: int = 60) -> str:
    return repr(p if len(p) <= n else p[:n] + "…")


@dataclass(frozen=True)
class SafePattern:
    """A compiled user pattern whose searches are time- and size-bounded."""

    pattern: str
    compiled: regex.Pattern = field(repr=False)
    ignore_case: bool = False
    literal: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    window_chars: int = DEFAULT_WINDOW_CHARS
    overlap_chars: int = DEFAULT_OVERLAP_CHARS

    def _timeout(self, deadline: float | None) -> tuple[float, bool]:
        """Per-call timeout and whether it is limited by the overall *deadline*."""
        if deadline is None:
            return self.timeout_s, False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise PatternTimeoutError(
                f"time budget exhausted while searching with {_short(self.pattern)}",
                pattern=self.pattern,
                budget_exhausted=True,
            )
        return (remaining, True) if remaining < self.timeout_s else (self.timeout_s, False)

    def _raw_search(self, text: str, pos: int, endpos: int, deadline: float | None) -> regex.Match | None:
        timeout, by_budget = self._timeout(deadline)
        try:
            return self.compiled.search(text, pos, endpos, timeout=timeout)
        except TimeoutError:
            if by_budget:
                raise PatternTimeoutError(
                    f"time budget exhausted while searching with {_short(self.pattern)}",
                    pattern=self.pattern,
                    budget_exhausted=True,
                ) from None
            raise PatternTimeoutError(
                f"pattern {_short(self.pattern)} took longer than {self.timeout_s:g}s on a "
                f"{endpos - pos:,}-char span and was stopped; it probably backtracks catastrophically. " + _ADVICE,
                pattern=self.pattern,
            ) from None

    def finditer(
        self, text: str, pos: int = 0, endpos: int | None = None, *, deadline: float | None = None
    ) -> Iterator[regex.Match]:
        """Non-overlapping matches in ``text[pos:endpos]``, searched window by window.

        Offsets are absolute.  Empty matches are yielded once per position.
        Raises :class:`PatternTimeoutError` (``budget_exhausted`` tells a spent
        *deadline* from a pathological pattern).
        """
        end = len(text) if endpos is None else max(0, min(endpos, len(text)))
        p = max(0, pos)
        base = max(1, self.window_chars)
        overlap = max(0, min(self.overlap_chars, base // 2))
        win = base
        while p <= end:
            we = min(p + win, end)
            m = self._raw_search(text, p, we, deadline)
            if m is None:
                if we >= end:
                    return
                p, win = max(p + 1, we - overlap), base
                continue
            if m.end() == we and we < end:
                # A match touching an artificial window end may be an artefact
                # ($, \b, lookahead) or cut short: re-search from its start,
                # or with a wider window when it already starts the window.
                if m.start() > p:
                    p, win = m.start(), base
                    continue
                if win < base * _MAX_WINDOW_GROWTH:
                    win *= 2
                    continue
            yield m
            p, win = (m.end() if m.end() > m.start() else m.end() + 1), base

    def search(
        self, text: str, pos: int = 0, endpos: int | None = None, *, deadline: float | None = None
    ) -> regex.Match | None:
        """First match in *text* or ``None``; bounded as :meth:`finditer`."""
        end = len(text) if endpos is None else endpos
        if end - pos <= self.window_chars:
            return self._raw_search(text, pos, end, deadline)
        return next(self.finditer(text, pos, end, deadline=deadline), None)


def compile_user_pattern(
    pattern: str,
    *,
    ignore_case: bool = False,
    literal: bool = False,
    max_len: int = DEFAULT_MAX_LEN,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    window_chars: int = DEFAULT_WINDOW_CHARS,
    overlap_chars: int = DEFAULT_OVERLAP_CHARS,
) -> SafePattern:
    """Validate and compile a model-supplied pattern, or raise a :class:`PatternError`.

    ``literal=True`` escapes the pattern so it matches itself exactly; the
    length cap still applies to the text as written.
    """
    if not isinstance(pattern, str):
        raise PatternSyntaxError(f"pattern must be a string, got {type(pattern).__name__}", pattern=str(pattern))
    if pattern == "":
        raise PatternSyntaxError("empty pattern: it would match every line; use a range read instead", pattern=pattern)
    if "\x00" in pattern:
        raise PatternSyntaxError(
            "pattern contains a NUL character; remove it (use \\x00 in a regex if you mean a NUL byte)",
            pattern=pattern,
            position=pattern.index("\x00"),
            reason="NUL character",
        )
    if len(pattern) > max_len:
        raise PatternTooLongError(
            f"pattern is {len(pattern):,} chars, over the {max_len:,}-char limit; search for a shorter, "
            "distinctive part of the text instead",
            pattern=pattern,
        )
    source = regex.escape(pattern, literal_spaces=True) if literal else pattern
    if not literal:
        size = estimate_expansion(source)
        if size > MAX_EXPANSION:
            raise PatternTooComplexError(
                f"pattern {_short(pattern)} uses counted repeats that expand to about {size:,} steps "
                f"(limit {MAX_EXPANSION:,}); use smaller {{n,m}} counts or '+'/'*'. " + _ADVICE,
                pattern=pattern,
            )
    flags = regex.V0 | (regex.IGNORECASE if ignore_case else 0)
    try:
        compiled = regex.compile(source, flags)
    except regex.error as exc:
        pos = getattr(exc, "pos", None)
        msg = getattr(exc, "msg", str(exc))  # regex.error has .msg; its type stubs do not say so
        where = f" at position {pos}" if pos is not None else ""
        raise PatternSyntaxError(
            f"invalid regular expression {_short(pattern)}: {msg}{where}. "
            "Fix the syntax, or pass literal=True to search for the text as written.",
            pattern=pattern,
            position=pos,
            reason=str(msg),
        ) from None
    except (OverflowError, RecursionError, MemoryError, ValueError) as exc:
        raise PatternTooComplexError(
            f"pattern {_short(pattern)} cannot be compiled: {exc}. " + _ADVICE, pattern=pattern
        ) from None
    return SafePattern(
        pattern=pattern,
        compiled=compiled,
        ignore_case=ignore_case,
        literal=literal,
        timeout_s=timeout_s,
        window_chars=max(16, window_chars),
        overlap_chars=max(0, overlap_chars),
    )
