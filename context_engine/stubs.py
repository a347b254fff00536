"""Informative one-line stubs for pruned tool outputs.

A stub has to let the model reason about what it no longer sees: which tool,
called how, how big the output was and whether it succeeded.  The blob store
replaces the default renderer with one that adds a retrieval handle, so the
wording lives here and nowhere else.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

PRUNED_PREFIX = "[stowage: tool output pruned]"
DUPLICATE_PREFIX = "[stowage: duplicate tool output]"
STUB_PREFIXES = (PRUNED_PREFIX, DUPLICATE_PREFIX, "[stowage: tool output stored]")

_MAX_JSON_VERDICT = 32_768
_STATUS_FIELD = re.compile(r'"(exit_code|returncode|exitCode|status)"\s*:\s*(-?\d+|"[^"]{0,40}")')
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "failure", "fatal", "panic", "denied", "not found")
_GIST_VALUE_CHARS = 60
_GIST_TOTAL_CHARS = 160


@dataclass(frozen=True)
class PrunedOutput:
    """A tool result leaving the window, with everything a renderer needs."""

    index: int
    tool_call_id: str
    tool_name: str
    arguments: str
    content: str
    duplicate_of_call_id: str | None = None


def is_stub(text: str) -> bool:
    """True when ``text`` is already a Stowage stub (never prune it twice)."""
    return text.startswith(STUB_PREFIXES)


def argument_gist(arguments: str) -> str:
    """``key=value`` pairs of a call's arguments, each value shortened."""
    try:
        parsed: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return _shorten(arguments.replace("\n", " "), _GIST_TOTAL_CHARS)
    if not isinstance(parsed, dict):
        return _shorten(json.dumps(parsed, ensure_ascii=False), _GIST_TOTAL_CHARS)
    pieces = []
    for key, value in parsed.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        pieces.append(f"{key}={json.dumps(_shorten(text.replace(chr(10), ' '), _GIST_VALUE_CHARS), ensure_ascii=False)}")
    return _shorten(", ".join(pieces), _GIST_TOTAL_CHARS)


def outcome_of(content: str) -> str:
    """A short verdict: exit code, error flag or the first error-looking line.

    Looks at a bounded part of the output (the whole JSON only when small),
    so stubbing a 100 MB output costs what stubbing a 10 KB one does.
    """
    head = content[:4096].lstrip()[:4000]
    if head.startswith("{"):
        parsed = None
        if len(content) <= _MAX_JSON_VERDICT:
            try:
                parsed = json.loads(content)
            except ValueError:
                parsed = None
        else:
            match = _STATUS_FIELD.search(content[-2048:]) or _STATUS_FIELD.search(head)
            if match:
                return f"{match.group(1)} {match.group(2).strip(chr(34))}"
        if isinstance(parsed, dict):
            for key in ("exit_code", "returncode", "exitCode", "status"):
                if key in parsed and isinstance(parsed[key], (int, str)):
                    return f"{key} {parsed[key]}"
            if parsed.get("error"):
                return "error: " + _shorten(str(parsed["error"]).replace("\n", " "), 120)
            if parsed.get("success") is False:
                return "success=false"
    lowered = head.lower()
    hits = [position for position in (lowered.find(word) for word in _ERROR_WORDS) if position != -1]
    if hits:
        first = min(hits)
        line_start = head.rfind("\n", 0, first) + 1
        line_end = head.find("\n", first)
        line = head[line_start: line_end if line_end != -1 else len(head)].strip()
        return "error: " + _shorten(line, 120)
    return "ok"


def size_description(content: str) -> str:
    lines = content.count("\n") + 1 if content else 0
    return f"{len(content):,} chars, {lines:,} lines"


def default_stub(output: PrunedOutput) -> str:
    """The informative stub used when no store is attached."""
    call = f"{output.tool_name or 'tool'}({argument_gist(output.arguments)})"
    if output.duplicate_of_call_id:
        return (f"{DUPLICATE_PREFIX} {call}: identical to the later result of call "
                f"{output.duplicate_of_call_id}; {size_description(output.content)}")
    return f"{PRUNED_PREFIX} {call} -> {outcome_of(output.content)}; {size_description(output.content)}"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
