"""Streaming grep with context over stored text, bounded in matches, time and size.

Lines are consumed one at a time and only the last ``context`` lines plus the
hunks already found are kept, so a 100 MB blob streams through in bounded
memory.  Long lines are shown as a window around the match rather than their
head (the head of a minified line rarely contains the hit).  A reader that
splits an over-long line into consecutive pieces with the same line number
(``iter_numbered_lines(max_line_bytes=...)``) is understood: the pieces form
one line, offsets count from the line start, and pieces are never joined.
For one-line payloads see :func:`grep_text_windows` (char offsets).
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .grep_windows import (
    REASON_MATCH_CAP,
    REASON_PATTERN_TIMEOUT,
    REASON_TIME_BUDGET,
    TextWindow,
    WindowGrepResult,
    grep_text_windows,
)
from .safe_regex import PatternTimeoutError, SafePattern

__all__ = ["GrepLine", "GrepHunk", "GrepResult", "grep_lines", "TextWindow", "WindowGrepResult", "grep_text_windows"]


@dataclass(frozen=True)
class GrepLine:
    """One shown line: ``text`` is ``line[col:col + len(text)]`` with the cut sizes
    on each side; ``match`` is the first match span in the full line, if any."""

    lineno: int
    text: str
    is_match: bool
    col: int = 0
    cut_before: int = 0
    cut_after: int = 0
    match: tuple[int, int] | None = None

    def render(self, width: int = 0) -> str:
        mark = ":" if self.is_match else "-"
        pre = f"…[{self.cut_before:,} chars] " if self.cut_before else ""
        post = f" …[{self.cut_after:,} chars]" if self.cut_after else ""
        return f"{self.lineno:>{width}}{mark} {pre}{self.text}{post}"


@dataclass(frozen=True)
class GrepHunk:
    """Consecutive lines around one or more matches (overlapping windows merged)."""

    lines: tuple[GrepLine, ...]

    @property
    def start(self) -> int:
        return self.lines[0].lineno

    @property
    def end(self) -> int:
        return self.lines[-1].lineno


@dataclass(frozen=True)
class GrepResult:
    """Hunks in file order; ``truncated`` with ``reason`` (``match_cap``,
    ``time_budget`` or ``pattern_timeout``) when the scan stopped early;
    ``note`` is a model-ready explanation when there is something to say."""

    hunks: tuple[GrepHunk, ...]
    match_count: int
    scanned_lines: int
    truncated: bool = False
    reason: str | None = None
    note: str = ""

    @property
    def matches(self) -> list[GrepLine]:
        return [ln for h in self.hunks for ln in h.lines if ln.is_match]

    def render(self) -> str:
        """grep -n style text: ``12: hit``, ``11- context``, ``--`` between hunks."""
        width = len(str(self.hunks[-1].end)) if self.hunks else 1
        blocks = ["\n".join(ln.render(width) for ln in h.lines) for h in self.hunks]
        out = "\n--\n".join(blocks)
        if self.note:
            out = f"{out}\n{self.note}" if out else self.note
        return out


def _clip_line(lineno: int, line: str, span: tuple[int, int] | None, max_chars: int, is_match: bool) -> GrepLine:
    """Cut a long line to *max_chars*, centred on the match when there is one."""
    n = len(line)
    if n <= max_chars:
        return GrepLine(lineno, line, is_match, 0, 0, 0, span)
    if span is None:
        start = 0
    else:
        mid = (span[0] + min(span[1], span[0] + max_chars)) // 2
        start = max(0, min(n - max_chars, mid - max_chars // 2))
    end = start + max_chars
    return GrepLine(lineno, line[start:end], is_match, start, start, n - end, span)


def _numbered(lines: Iterable[tuple[int, str]] | Iterable[str], start_line: int) -> Iterator[tuple[int, str]]:
    n = start_line
    for item in lines:
        if isinstance(item, tuple):
            n, text = item
        else:
            text = item
        if text.endswith("\n"):
            text = text[:-2] if text.endswith("\r\n") else text[:-1]
        yield n, text
        n += 1


class _Scan:
    """State of one grep pass: the open hunk, the before-context ring, counters."""

    def __init__(self, context: int, max_line_chars: int):
        self.context, self.max_line_chars = context, max_line_chars
        # One extra slot: the first piece of a split line must not push out
        # real context before a later piece of it turns out to match.
        self.before: deque[GrepLine] = deque(maxlen=context + 1)
        self.hunks: list[GrepHunk] = []
        self.current: list[GrepLine] = []
        self.after_left = 0
        self.matches = 0

    def hit(self, shown: GrepLine) -> None:
        lineno = shown.lineno
        if self.current and lineno - self.current[-1].lineno - 1 > len(self.before):
            self.close()
        if self.current:
            self.current.extend(self.before)
        else:
            self.current.extend(b for b in self.before if b.lineno >= lineno - self.context)
        self.before.clear()
        self.current.append(shown)
        self.after_left = self.context
        self.matches += 1

    def miss(self, lineno: int, text: str) -> None:
        shown = _clip_line(lineno, text, None, self.max_line_chars, False)
        if self.after_left > 0:
            self.current.append(shown)
            self.after_left -= 1
            return
        if self.current and lineno - self.current[-1].lineno > self.context:
            self.close()
        self.before.append(shown)

    def last_entry(self, lineno: int) -> tuple[list | deque, GrepLine] | None:
        """The kept entry for *lineno* (a piece continuation extends it)."""
        for box in (self.before, self.current):
            if box and box[-1].lineno == lineno:
                return box, box[-1]
        return None

    def close(self) -> None:
        if self.current:
            self.hunks.append(GrepHunk(tuple(self.current)))
            self.current = []


def _shift(g: GrepLine, offset: int) -> GrepLine:
    """A piece's GrepLine re-expressed in whole-line offsets."""
    span = (g.match[0] + offset, g.match[1] + offset) if g.match else None
    return dataclasses.replace(g, col=g.col + offset, cut_before=g.cut_before + offset, match=span)


def grep_lines(
    lines: Iterable[tuple[int, str]] | Iterable[str],
    pattern: SafePattern,
    *,
    context: int = 2,
    max_matches: int = 50,
    max_line_chars: int = 500,
    time_budget_s: float = 2.0,
    start_line: int = 1,
) -> GrepResult:
    """Search *lines* (numbered from *start_line*, or ``(lineno, text)`` pairs).

    Trailing newlines are stripped before matching.  Stops at *max_matches*
    (after collecting the last match's trailing context), when
    *time_budget_s* is spent, or when the pattern times out on a line; the
    partial result is returned with ``truncated`` and a ``reason``.  A match
    that spans two pieces of a split line is not found.
    """
    scan = _Scan(max(0, context), max_line_chars)
    deadline = time.monotonic() + max(0.0, time_budget_s)
    scanned, reason, note = 0, None, ""
    prev_no, piece_off, prev_len = None, 0, 0
    for lineno, text in _numbered(lines, start_line):
        piece = lineno == prev_no
        piece_off = piece_off + prev_len if piece else 0
        prev_no, prev_len = lineno, len(text)
        if not piece and scan.matches >= max_matches and scan.after_left == 0:
            reason = REASON_MATCH_CAP
            note = (
                f"stopped after {max_matches:,} matches at line {lineno - 1:,}; "
                "narrow the pattern or grep from a later line"
            )
            break
        if time.monotonic() > deadline:
            reason = REASON_TIME_BUDGET
            note = f"time budget of {time_budget_s:g}s spent after {scanned:,} lines; continue from line {lineno:,}"
            break
        kept = scan.last_entry(lineno) if piece else None
        if piece and kept is None and scan.matches >= max_matches:
            continue
        if kept is not None and kept[1].is_match:
            kept[0][-1] = dataclasses.replace(kept[1], cut_after=kept[1].cut_after + len(text))
            continue
        m = None
        if scan.matches < max_matches:
            try:
                m = pattern.search(text, deadline=deadline)
            except PatternTimeoutError as exc:
                reason = REASON_TIME_BUDGET if exc.budget_exhausted else REASON_PATTERN_TIMEOUT
                note = f"{exc} (scan stopped at line {lineno:,})"
                break
        scanned += 0 if piece else 1
        if m is not None:
            if kept is not None:  # upgrade the context entry of this line
                kept[0].pop()
                if kept[0] is scan.current and scan.after_left < scan.context:
                    scan.after_left += 1
            scan.hit(_shift(_clip_line(lineno, text, m.span(), max_line_chars, True), piece_off))
        elif kept is not None:
            kept[0][-1] = dataclasses.replace(kept[1], cut_after=kept[1].cut_after + len(text))
        elif not piece:
            scan.miss(lineno, text)
    scan.close()
    return GrepResult(tuple(scan.hunks), scan.matches, scanned, reason is not None, reason, note)
