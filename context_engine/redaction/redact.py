"""Mask secrets before text leaves the process (summary prompts, stored text).

Each rule finds a secret and replaces only the secret part, keeping the
surrounding key, header or URL so the text stays readable and parseable.
Rules (in :mod:`.rules`) cover vendor key prefixes, bearer/basic
authorization headers, api-key headers, ``KEY=value`` and ``key: value``
assignments with secret names, JSON fields, private key blocks, passwords in
URLs and connection strings, secret query parameters, JWTs, chat-bot
tokens, and (in :mod:`.formats`) PuTTY keys, base64 PEM keys, ``.pgpass``
lines, .NET and plist settings and secret-named command-line flags, and (in
:mod:`.pairs`) name/value pairs in any notation, judged by
:mod:`.values` (configuration and code such as ``id-token: write``
stay).  String literals with escapes and base64 runs are redacted decoded
first (:mod:`.escapes`, :mod:`.in_base64`), and a text holding invisible
characters (zero-width, joiners, soft hyphen, BOM, bidi controls) is matched
on a copy without them and masked on the original span (:mod:`.invisible`).
Nothing is memoized across texts: a compaction redacts each message once,
and the cost is kept low by the rules' gates and finders instead.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from re import Match

from .escapes import redact_escaped_strings_many
from .in_base64 import redact_base64_values_many
from .invisible import redact_seen_whole, visible_copy
from .rules import MASK, RULES, Haystack, Rule, fold_case

__all__ = ["MASK", "contains_secret", "fold_case", "redact", "redact_many"]

# Joins texts for redact_many.  It starts and ends with a newline so ``^`` and
# ``$`` behave at each text's edges as at a string's, and holds no character
# any rule's key or secret part can contain.
_SEPARATOR = "\n\x00\n"


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``.

    String literals with escapes (a YAML block inside JSON arguments) are
    redacted decoded first (:mod:`.escapes`), then the rules read the text,
    seen without invisible characters (:mod:`.invisible`).
    """
    if not text:
        return text
    copy = visible_copy(text)
    if copy is None:
        return _redact_rules(_decoded_stages([text])[0])
    return copy.restore(_redact_rules(_decoded_stages([copy.text])[0]))


def _decoded_stages(texts: list[str]) -> list[str]:
    """Escaped string literals, then base64 runs, redacted as the text they stand for (each batch in one call)."""
    return redact_base64_values_many(redact_escaped_strings_many(texts, redact_many), redact_many)


def _redact_rules(text: str) -> str:
    """``text`` with every rule applied in order (no escape stage)."""
    haystack = Haystack(text)
    for rule in RULES:
        redacted = _apply(rule, haystack)
        if redacted is not haystack.text:
            haystack = Haystack(redacted)
    return haystack.text


def redact_many(texts: Sequence[str]) -> list[str]:
    """``[redact(t) for t in texts]``, with each rule searched once over all the texts."""
    return redact_seen_whole(texts, _redact_many_visible)


def _redact_many_visible(texts: Sequence[str]) -> list[str]:
    """:func:`redact_many` of texts without invisible characters.

    A summary transcript is a few hundred short blocks; running every rule
    on each block separately costs more in per-call overhead than in
    matching.  Here each rule scans the joined texts once, and only the texts
    a match touches are redacted by that rule on their own, so the result is
    exactly the per-text one (a match at a position of one text is also a
    match at that position of the joined texts, or lies inside a match that
    touches it; the tests check equality on generated texts).
    """
    texts = _decoded_stages(list(texts))
    if len(texts) < 2 or any(_SEPARATOR in t for t in texts):
        return [_redact_rules(t) if t else t for t in texts]
    joined: Haystack | None = None
    for rule in RULES:
        if joined is None:
            text = _SEPARATOR.join(texts)
            joined = Haystack(text)
            starts = _text_starts(texts)
        if not rule.gate(joined):
            continue
        touched: set[int] = set()
        for match in _find(rule, joined):
            touched.update(range(bisect_right(starts, match.start()) - 1, bisect_right(starts, match.end() - 1)))
        for index in touched:
            redacted = _apply(rule, Haystack(texts[index]))
            if redacted is not texts[index]:
                texts[index] = redacted
                joined = None  # rebuilt for the next rule
    return texts


def _text_starts(texts: list[str]) -> list[int]:
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + len(_SEPARATOR)
    return starts


def _find(rule: Rule, haystack: Haystack) -> Iterable[Match[str]]:
    return rule.find(rule.pattern, haystack) if rule.find else rule.pattern.finditer(haystack.text)


def _apply(rule: Rule, haystack: Haystack) -> str:
    """The haystack's text with ``rule`` applied (the same object when nothing matched)."""
    text = haystack.text
    if not text or not rule.gate(haystack):
        return text
    return _replace(text, _find(rule, haystack), rule)


def _replace(text: str, matches: Iterable[Match[str]], rule: Rule) -> str:
    """``text`` with non-overlapping ``matches`` (ascending) replaced, as ``re.sub`` would."""
    pieces: list[str] = []
    end = 0
    for match in matches:
        if match.start() < end:
            continue  # inside the previous match: re.sub would not have tried here
        pieces.append(text[end : match.start()])
        pieces.append(rule.replace(match))
        end = match.end()
    if not pieces:
        return text
    pieces.append(text[end:])
    joined = "".join(pieces)
    return text if joined == text else joined


def contains_secret(text: str) -> bool:
    return redact(text) != text
