"""Secrets split by invisible characters: matched on a copy without them, masked on the original span.

One zero-width space, word joiner, soft hyphen, byte-order mark, joiner or
bidi control inside a key hides it from every rule (``sk-proj-ab\u200bcd...``
matches no key pattern), while a reader, a terminal or a model sees the key
whole.  So a text holding such characters (Unicode's format characters,
plus the invisible fillers and variation selectors) is redacted as a copy
without them, and each masked span of the copy is mapped back onto the
original text: the characters around a secret, invisible ones included,
stay as they were, and a text in which nothing is masked is returned
untouched (an Arabic or emoji line with its joiners and marks is never
altered).  Ordinary text without any of these characters costs one regex
search.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .rules import MASK

__all__ = ["INVISIBLE", "VisibleCopy", "redact_seen_whole", "visible_copy"]

# Unicode 14's format characters (category Cf), the Hangul and Khmer fillers, the
# combining grapheme joiner and the variation selectors: all render as nothing.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u17b4-\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]+"
)
_ANCHOR_CHARS = 64


@dataclass(frozen=True)
class VisibleCopy:
    """A text without its invisible characters, and where they were."""

    original: str
    text: str
    run_at: tuple[int, ...]  # each removed run's position in ``text``, ascending
    removed_before: tuple[int, ...]  # characters removed up to and including each run

    def original_index(self, index: int) -> int:
        """Where the character at ``index`` of the copy stands in the original (``len(text)`` maps to the end)."""
        runs = bisect_right(self.run_at, index)
        return index + (self.removed_before[runs - 1] if runs else 0)

    def restore(self, redacted: str) -> str:
        """The original with each span the redaction of ``text`` masked replaced as it was in ``redacted``."""
        if redacted == self.text:
            return self.original
        spans = _replaced_spans(self.text, redacted)
        if spans is None:  # the masks cannot be placed back: the masked copy, invisible characters dropped
            return redacted
        pieces: list[str] = []
        end = 0
        for start, stop, replacement in spans:
            begin = self.original_index(start)
            finish = self.original_index(stop - 1) + 1 if stop > start else begin
            pieces += [self.original[end:begin], replacement]
            end = finish
        pieces.append(self.original[end:])
        return "".join(pieces)


def visible_copy(text: str) -> VisibleCopy | None:
    """``text`` without its invisible characters, or None when it has none."""
    if not INVISIBLE.search(text):
        return None
    pieces: list[str] = []
    run_at: list[int] = []
    removed_before: list[int] = []
    end = removed = 0
    for match in INVISIBLE.finditer(text):
        pieces.append(text[end : match.start()])
        run_at.append(match.start() - removed)
        removed += match.end() - match.start()
        removed_before.append(removed)
        end = match.end()
    pieces.append(text[end:])
    return VisibleCopy(text, "".join(pieces), tuple(run_at), tuple(removed_before))


def redact_seen_whole(texts: Sequence[str], redact_all: Callable[[list[str]], list[str]]) -> list[str]:
    """``redact_all(texts)``, with the texts holding invisible characters redacted as their visible copies."""
    copies = [visible_copy(text) for text in texts]
    if not any(copies):
        return redact_all(list(texts))
    seen = redact_all([copy.text if copy else text for copy, text in zip(copies, texts, strict=True)])
    return [copy.restore(out) if copy else out for copy, out in zip(copies, seen, strict=True)]


def _replaced_spans(text: str, redacted: str) -> list[tuple[int, int, str]] | None:
    """(start, end, replacement) of each stretch of ``text`` the redaction replaced, or None if it cannot tell.

    A rule replaces a secret with text holding ``MASK`` and keeps everything
    else verbatim; so between masks ``redacted`` is a copy of ``text``, and
    the text after a mask (up to the next one) says where ``text`` resumes.
    """
    spans: list[tuple[int, int, str]] = []
    i = j = 0
    while True:
        mask_at = redacted.find(MASK, j)
        if mask_at < 0:
            return spans if redacted[j:] == text[i:] else None
        same = _common_prefix(text, i, redacted, j, mask_at - j)
        start, replaced_from = i + same, j + same
        after = mask_at + len(MASK)
        while redacted.startswith(MASK, after):
            after += len(MASK)
        following = redacted.find(MASK, after)
        kept = redacted[after : following if following >= 0 else len(redacted)]
        if kept:
            stop = text.find(kept[:_ANCHOR_CHARS], start)
            if stop < 0:
                return None
        else:  # the mask ends the text
            stop = len(text)
        spans.append((start, stop, redacted[replaced_from:after]))
        i, j = stop, after


def _common_prefix(a: str, i: int, b: str, j: int, limit: int) -> int:
    """How many characters ``a[i:]`` and ``b[j:]`` share at their start, at most ``limit`` (binary search on slices)."""
    if a[i : i + limit] == b[j : j + limit]:
        return limit
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[i : i + middle] == b[j : j + middle]:
            low = middle
        else:
            high = middle - 1
    return low
