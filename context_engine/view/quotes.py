"""What an agent quotes from a tool output: its distinctive, code-like tokens.

An agent that uses an output later names something only that output showed
it: an identifier (``get_source_file``, ``assertEqual``), a path
(``django/db/models/query.py``) or a whole line of code (12+ characters) it
copies into an edit.  Ordinary words, numbers and short names are too common to say which
output was used.  A *distinctive* token of an output is such a token seen
first in that output (earlier messages never had it).

Used twice with the same definition: the lean view pins outputs whose
distinctive tokens recent assistant messages use (``lean.py``), and the
replay measures outputs an assistant message used while the request hid them
(``replay/hidden.py``).  Pure functions over strings; deterministic.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

MIN_CHARS = 6
MIN_LINE_CHARS = 12  # shorter lines ("return {", "pass") are shared by too many outputs to say which was used
MAX_LINE_CHARS = 200

_WORD = re.compile(r"[A-Za-z0-9_][\w./:-]*\w")
_CAMEL = re.compile(r"[a-z][A-Z]")
_DOTTED = re.compile(r"[A-Za-z_]\.[A-Za-z_]")
_LINE_PREFIX = re.compile(r"^(?:[\w./-]+:\d+[:-]|\s*\d+[\t :|-])\s*")  # grep "path:12:" or numbered-listing prefixes
_CODE_MARK = re.compile(r"[()\[\]{}=;:<>]")


def looks_like_code(token: str) -> bool:
    """An identifier with ``_`` or camelCase, a dotted name or a path; not a plain word or number."""
    if len(token) < MIN_CHARS or token.isdigit():
        return False
    if "/" in token or "_" in token:
        return any(c.isalpha() for c in token)
    return bool(_CAMEL.search(token) or _DOTTED.search(token))


def code_tokens(text: str) -> set[str]:
    """The code-like tokens of ``text`` (identifiers, dotted names, paths), trailing punctuation dropped."""
    found = set()
    for match in _WORD.finditer(text):
        token = match.group().rstrip(".:-/")
        if looks_like_code(token):
            found.add(token)
            if "." in token and "/" not in token:  # `self.assertEqual` also uses `assertEqual`
                found.update(part for part in token.split(".") if looks_like_code(part))
    return found


def normalized_line(line: str) -> str | None:
    """A line as quoted: stripped, without a grep or line-number prefix; None unless it looks like code."""
    text = _LINE_PREFIX.sub("", line.strip(), count=1).strip()
    if not (MIN_LINE_CHARS <= len(text) <= MAX_LINE_CHARS) or not _CODE_MARK.search(text):
        return None
    return text if any(c.isalpha() for c in text) else None


def code_lines(text: str) -> set[str]:
    lines = set()
    for line in text.splitlines():
        normalized = normalized_line(line)
        if normalized is not None:
            lines.add(normalized)
    return lines


def quotable(text: str) -> set[str]:
    """Everything of ``text`` that can be quoted from it: code tokens and code lines."""
    return code_tokens(text) | code_lines(text)


def assistant_text(message: Mapping[str, Any]) -> str:
    """An assistant message's words and tool-call arguments (JSON string values decoded, so lines are lines)."""
    parts = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        arguments = function.get("arguments")
        parts.extend(_strings(arguments))
    return "\n".join(parts)


def _strings(arguments: Any) -> Iterable[str]:
    if isinstance(arguments, str):
        try:
            value: Any = json.loads(arguments)
        except ValueError:
            yield arguments
            return
    else:
        value = arguments
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class FirstSeen:
    """Assigns each quotable token to the output it was first seen in, message by message.

    ``add_output(key, text)`` returns the output's distinctive tokens (not seen
    in any earlier message); ``add_other(text)`` records the tokens of any
    other message (user, assistant) so later outputs do not claim them;
    ``owner(token)`` is the output a token was first seen in, or None.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._owner: dict[str, Any] = {}

    def add_output(self, key: Any, text: str) -> set[str]:
        tokens = quotable(text) - self._seen
        self._seen |= tokens
        for token in tokens:
            self._owner[token] = key
        return tokens

    def add_other(self, text: str) -> None:
        self._seen |= quotable(text)

    def owner(self, token: str) -> Any:
        return self._owner.get(token)

    def uses(self, text: str) -> dict[Any, set[str]]:
        """Which outputs an assistant text quotes: output key -> the distinctive tokens it used."""
        used: dict[Any, set[str]] = {}
        for token in quotable(text):
            key = self._owner.get(token)
            if key is not None:
                used.setdefault(key, set()).add(token)
        return used
