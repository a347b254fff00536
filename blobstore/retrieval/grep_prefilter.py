"""Hand ``grep_lines`` only the lines that can match, plus their context.

``grep_lines`` costs a timed regex call and some bookkeeping per line, about
1 s per 10 MB.  Most lines of a large log do not match, so each decoded
batch of lines is searched once as one text (lines joined by ``\\n``): a
batch without a hit is skipped, and in a batch with hits only the hit lines
and their context lines go on to the per-line grep, which makes the final
decision.  An alternation of plain words (``ERROR|Traceback|panic:``) is
found with substring search; anything else with the regex in multi-line
mode.  A false hit only costs time.  Patterns that could miss in joined text
(``\\A``, ``\\Z``, lookbehinds) turn the prefilter off, and a match that
spans lines makes that batch go through whole, so results never change.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from .safe_regex import PatternError, PatternTimeoutError, SafePattern, compile_user_pattern

Batch = tuple[int, list[str], bool]
_UNSAFE = ("\\A", "\\Z", "\\z", "(?<", "\\G")
_REGEX_META = set(".^$*+?{}[]\\()")
MAX_OFFSETS = 20_000


class Prefilter(Protocol):
    def hit_offsets(self, text: str, deadline: float | None) -> list[int] | None:
        """Start offsets of candidate matches ([] = none; None = cannot tell, take all)."""


class _Words:
    """An alternation of plain words: substring search, C speed."""

    def __init__(self, words: list[str], ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.words = [w.lower() for w in words] if ignore_case else words

    def hit_offsets(self, text: str, deadline: float | None) -> list[int] | None:
        if self.ignore_case:
            lowered = text.lower()
            if len(lowered) != len(text):
                return None  # case folding changed offsets: let the per-line grep decide
            text = lowered
        offsets: list[int] = []
        for word in self.words:
            position = text.find(word)
            while position != -1:
                offsets.append(position)
                if len(offsets) > MAX_OFFSETS:
                    return None
                position = text.find(word, position + 1)
        return offsets


class _Regex:
    def __init__(self, pattern: SafePattern) -> None:
        self.pattern = pattern

    def hit_offsets(self, text: str, deadline: float | None) -> list[int] | None:
        offsets: list[int] = []
        for match in self.pattern.finditer(text, deadline=deadline):
            start, end = match.span()
            if "\n" in text[start:end]:
                return None  # a cross-line match: grep this batch line by line
            offsets.append(start)
            if len(offsets) > MAX_OFFSETS:
                return None
        return offsets


def batch_pattern(pattern: str, *, ignore_case: bool = False, literal: bool = False) -> Prefilter | None:
    """The prefilter for a user pattern, or None when it could change results."""
    if literal:
        return _Words([pattern], ignore_case)
    if any(token in pattern for token in _UNSAFE):
        return None
    alternatives = pattern.split("|")
    if all(alternatives) and not (_REGEX_META & set(pattern)):
        return _Words(alternatives, ignore_case)
    try:
        return _Regex(compile_user_pattern("(?m)" + pattern, ignore_case=ignore_case, max_len=len(pattern) + 4))
    except PatternError:
        return None


@dataclass
class PrefilterStats:
    lines: int = 0
    skipped_lines: int = 0


def prefiltered_lines(
    batches: Iterable[Batch],
    prefilter: Prefilter | None,
    *,
    context: int,
    stats: PrefilterStats,
    deadline: float | None = None,
) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` pairs worth grepping, in order, each at most once.

    Handing over a few extra non-matching lines never changes the grep (they
    are real lines with their real numbers); leaving out a line within
    ``context`` of a hit would, so context is carried across batches.
    """
    context = max(0, context)
    before: deque[tuple[int, str]] = deque(maxlen=context)  # the last lines before this batch
    owed = 0  # after-context lines the previous batch's last hit still needs
    last_no = 0  # highest line number yielded
    for first, texts, is_piece in batches:
        stats.lines += 0 if is_piece else len(texts)
        wanted: set[int] | None = None  # None: every line of the batch
        last_hit = len(texts) - 1
        if prefilter is not None and not is_piece and texts:
            try:
                offsets = prefilter.hit_offsets("\n".join(texts), deadline)
            except PatternTimeoutError:
                prefilter, offsets = None, None  # the per-line grep reports the timeout
            if offsets is not None:
                wanted, last_hit = _lines_around(texts, offsets, context)
                wanted.update(range(min(owed, len(texts))))
        if wanted is None or wanted:
            for number, text in before:
                if number > last_no:
                    last_no = number
                    yield number, text
        if wanted is None:
            indices: Iterable[int] = range(len(texts))
            owed = context
        else:
            indices = sorted(wanted)
            own = max(0, last_hit + context - (len(texts) - 1)) if last_hit >= 0 else 0
            owed = max(own, owed - len(texts))
        count = 0
        for i in indices:
            number = first if is_piece else first + i
            if number > last_no or is_piece:
                last_no = number
                count += 1
                yield number, texts[i]
        stats.skipped_lines += 0 if is_piece else len(texts) - count
        if not is_piece:  # a rolling window over the last ``context`` lines seen
            tail = texts[-context:] if context else []
            before.extend((first + len(texts) - len(tail) + i, text) for i, text in enumerate(tail))


def _lines_around(texts: list[str], offsets: list[int], context: int) -> tuple[set[int], int]:
    """Indices of the lines holding ``offsets`` widened by ``context``, and the last hit line."""
    if not offsets:
        return set(), -1
    starts = [0, *itertools.accumulate(len(t) + 1 for t in texts)]
    wanted: set[int] = set()
    last_hit = -1
    for offset in offsets:
        line = bisect.bisect_right(starts, offset) - 1
        last_hit = max(last_hit, line)
        wanted.update(range(max(0, line - context), min(len(texts), line + context + 1)))
    return wanted, last_hit
