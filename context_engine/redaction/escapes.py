"""Secrets behind JSON escapes: a string literal's value is redacted as the text it stands for.

A YAML block, a JSON document or a shell command inside a JSON string (tool-call
arguments, a logged request) shows its quotes as ``\\"`` and its line breaks
as ``\\n``, so the rules, which read quotes and line starts, do not see its
pairs, and an escaped invisible character (``\\u200b``) splits a key.  Each
double-quoted literal holding such an escape is decoded, redacted as plain
text, and written back encoded when that masked something; a literal that
is not valid JSON stays as it is.  Applied before the rules,
on the text as given, so a mask never breaks an escape the decoding needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .invisible import INVISIBLE

__all__ = ["redact_escaped_strings", "redact_escaped_strings_many"]

# Escapes that hide what the rules read: quotes, line breaks, the slashes of a URL ("\\t" or "\\u00e9" hide nothing).
_HIDING_ESCAPES = ('\\"', "\\'", "\\n", "\\r", "\\/")
# A double-quoted literal on one line: characters other than quote, backslash and line break, or an escape.
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# ``\u200b``, ``\u00ad``...: an escaped invisible character splits a key as well as the character itself.
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def redact_escaped_strings(text: str, redact_all: Callable[[list[str]], list[str]]) -> str:
    """``text`` with each escaped string literal whose decoded value ``redact_all`` changes written back masked.

    ``redact_all`` redacts a list of texts at once.
    """
    return redact_escaped_strings_many([text], redact_all)[0]


def redact_escaped_strings_many(texts: list[str], redact_all: Callable[[list[str]], list[str]]) -> list[str]:
    """:func:`redact_escaped_strings` of each text, with one ``redact_all`` call for all their literals."""
    found: list[tuple[int, int, int, str]] = []  # (text, start, end, decoded value)
    for index, text in enumerate(texts):
        if "\\" not in text or '"' not in text:
            continue
        for match in _LITERAL.finditer(text):
            literal = match.group(0)
            if not any(escape in literal for escape in _HIDING_ESCAPES) and not _escapes_invisible(literal):
                continue
            try:
                value = json.loads(literal)
            except ValueError:
                continue
            if isinstance(value, str) and value != literal[1:-1]:
                found.append((index, match.start(), match.end(), value))
    if not found:
        return texts
    out = list(texts)
    pieces: dict[int, list[str]] = {}
    ends: dict[int, int] = {}
    for (index, start, stop, value), redacted in zip(found, redact_all([f[3] for f in found]), strict=True):
        if redacted != value:
            pieces.setdefault(index, []).extend(
                (texts[index][ends.get(index, 0) : start], json.dumps(redacted, ensure_ascii=False))
            )
            ends[index] = stop
    for index, parts in pieces.items():
        out[index] = "".join(parts) + texts[index][ends[index] :]
    return out


def _escapes_invisible(literal: str) -> bool:
    """The literal writes an invisible character as a ``\\uXXXX`` escape."""
    return "\\u" in literal and any(
        INVISIBLE.match(chr(int(m.group(1), 16))) for m in _UNICODE_ESCAPE.finditer(literal)
    )
