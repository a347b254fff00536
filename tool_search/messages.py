"""The few chat-message shapes tool search reads: roles, tool calls, the user's text.

Tool search rewrites deferred calls in a request's history and ranks by
the newest user message; these helpers read plain OpenAI-style message
dicts defensively (anything malformed reads as empty), so this package
needs nothing from the context engine; the engine's ``messages`` module
takes the tool-call helpers from here rather than keeping copies.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

Message = dict[str, Any]
_NO_CALLS: list[dict[str, Any]] = []  # shared; never mutated


def role_of(message: Any) -> str:
    """The message role, or ``""`` when the message is not a dict or has none."""
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else ""


def message_text(message: Any) -> str:
    """The text parts of a message's content, joined by newlines (images and other parts skipped)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = [
        part if isinstance(part, str) else part.get("text")
        for part in content
        if isinstance(part, str) or isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return "\n".join(p for p in pieces if isinstance(p, str))


def tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """An assistant message's tool calls that are dicts (empty when none).

    Returns the message's own list when it is well formed (callers never
    mutate it): the context engine reads it for every message in every pass
    of a compaction, so the common case is one class test per call.
    """
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not calls or not isinstance(calls, list):
        return _NO_CALLS
    if all(call.__class__ is dict for call in calls):
        return calls
    return [c for c in calls if isinstance(c, dict)]


def call_id(call: Mapping[str, Any]) -> str:
    """The id of a tool call; hosts use ``id`` and sometimes ``call_id``."""
    value = call.get("id") or call.get("call_id") or ""
    return value if isinstance(value, str) else str(value)


def call_name(call: Mapping[str, Any]) -> str:
    fn = call.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return fn["name"]
    name = call.get("name")
    return name if isinstance(name, str) else ""


def last_index(messages: list[Message], predicate: Callable[[Any], bool]) -> int:
    """Index of the last message matching ``predicate``, or -1."""
    for index in range(len(messages) - 1, -1, -1):
        if predicate(messages[index]):
            return index
    return -1
