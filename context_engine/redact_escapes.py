"""Secrets behind JSON escapes: a string literal's value is redacted as the text it stands for.

A YAML block, a JSON document or a shell command inside a JSON string (tool-call
arguments, a logged request) shows its quotes as ``\\"`` and its line breaks
as ``\\n``, so the rules, which read quotes and line starts, do not see its
pairs.  Each double-quoted literal holding a backslash is decoded, redacted
as plain text, and written back encoded when that masked something; a
literal that is not valid JSON stays as it is.  Applied before the rules,
on the text as given, so a mask never breaks an escape the decoding needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

__all__ = ["redact_escaped_strings"]

# A double-quoted literal on one line: characters other than quote, backslash and line break, or an escape.
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def redact_escaped_strings(text: str, redact_all: Callable[[list[str]], list[str]]) -> str:
    """``text`` with each escaped string literal whose decoded value ``redact_all`` changes written back masked.

    ``redact_all`` redacts a list of texts at once (one batch per text, not one call per literal).
    """
    if "\\" not in text or '"' not in text:
        return text
    found: list[tuple[int, int, str]] = []
    for match in _LITERAL.finditer(text):
        literal = match.group(0)
        if "\\" not in literal:
            continue
        try:
            value = json.loads(literal)
        except ValueError:
            continue
        if isinstance(value, str) and value != literal[1:-1]:
            found.append((match.start(), match.end(), value))
    if not found:
        return text
    pieces: list[str] = []
    end = 0
    for (start, stop, value), redacted in zip(found, redact_all([value for _, _, value in found]), strict=True):
        if redacted != value:
            pieces += [text[end:start], json.dumps(redacted, ensure_ascii=False)]
            end = stop
    pieces.append(text[end:])
    return "".join(pieces) if end else text
