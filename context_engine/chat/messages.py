"""Small, total helpers over OpenAI-style chat message dicts.

Every phase works on plain ``dict`` messages as the host passes them.  These
helpers never raise on malformed input: a message with a missing role, a
``None`` content or a non-list ``tool_calls`` is treated as what it most
plausibly is, so one odd message cannot break a compaction.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Mapping

from ...tool_search.messages import call_id, call_name, last_index, tool_calls_of  # noqa: F401 - re-exported
from .markers import SUMMARY_END_MARKER, SUMMARY_MARKER  # noqa: F401 - re-exported

# isinstance(x, dict) rather than typing.Mapping throughout: the abstract
# check costs ~20x more and these helpers run for every message of a history.

Message = dict[str, Any]

IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})
SUMMARY_FLAG = "_stowage_summary"


def role_of(message: Any) -> str:
    """The message role, or ``""`` when the message is not a dict or has none."""
    if message.__class__ is dict or isinstance(message, dict):
        role = message.get("role")
        if role.__class__ is str:
            return role
    return ""


def leading_system_count(messages: list[Message]) -> int:
    """How many system/developer messages open the list (the conversation starts after them)."""
    index = 0
    while index < len(messages) and role_of(messages[index]) in ("system", "developer"):
        index += 1
    return index


def content_parts(content: Any) -> list[Any]:
    """Content as a list of parts (a plain string becomes one text part)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": str(content)}]


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES


def content_text(content: Any, *, image_placeholder: str = "[image]") -> str:
    """Concatenated text of a message content; images become a placeholder."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content_parts(content):
        if isinstance(part, str):
            pieces.append(part)
        elif is_image_part(part):
            pieces.append(image_placeholder)
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                pieces.append(text)
            elif part.get("type") in ("input_audio", "file"):
                pieces.append(f"[{part.get('type')}]")
    return "\n".join(pieces)


def message_text(message: Any) -> str:
    """The textual content of a message (no tool-call arguments)."""
    if not isinstance(message, dict):
        return ""
    return content_text(message.get("content"))


def has_content(message: Any) -> bool:
    """False for a message strict providers call empty (no text, no parts)."""
    content = message.get("content") if isinstance(message, dict) else None
    if content is None:
        return False
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        return bool(content)
    return True


def call_arguments_text(call: Mapping[str, Any]) -> str:
    fn = call.get("function")
    args = fn.get("arguments") if isinstance(fn, dict) else call.get("arguments")
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    try:
        return json.dumps(args, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(args)


def with_call_arguments(call: dict[str, Any], arguments: str) -> dict[str, Any]:
    """A copy of ``call`` whose arguments are ``arguments`` (in whichever shape the call has them)."""
    updated = dict(call)
    fn = updated.get("function")
    if isinstance(fn, dict):
        updated["function"] = {**fn, "arguments": arguments}
    else:
        updated["arguments"] = arguments
    return updated


def tool_result_id(message: Any) -> str:
    """The ``tool_call_id`` a tool result answers (``""`` when missing)."""
    if not isinstance(message, dict):
        return ""
    value = message.get("tool_call_id") or message.get("call_id") or ""
    return value if isinstance(value, str) else str(value)


def is_summary(message: Any) -> bool:
    """True for a summary message written by Stowage (flag or marker text)."""
    if not isinstance(message, dict) or message.get("role") == "tool":
        return False
    if message.get(SUMMARY_FLAG):
        return True
    content = message.get("content")
    if content.__class__ is str:
        return content.find(SUMMARY_MARKER, 0, 400) != -1  # no copy of the head
    return SUMMARY_MARKER in message_text(message)[:400]


def summary_positions(messages: list[Message]) -> list[int]:
    """Indices of the Stowage summaries in ``messages`` (one cheap pass, no call per message)."""
    found = []
    for index, message in enumerate(messages):
        if message.__class__ is dict:
            content = message.get("content")
            if (
                content is None or content.__class__ is str and content.find(SUMMARY_MARKER, 0, 400) == -1
            ) and not message.get(SUMMARY_FLAG):
                continue  # no marker (an assistant's tool calls often carry no content at all)
        if is_summary(message):
            found.append(index)
    return found


def is_real_user_turn(message: Any) -> bool:
    """A user message typed by the user, not a summary or host-injected snapshot."""
    if role_of(message) != "user" or is_summary(message):
        return False
    if isinstance(message, dict) and message.get("_todo_snapshot_synthetic"):
        return False
    return True


@functools.lru_cache(maxsize=8192)
def json_object_problem(text: str) -> str | None:
    """None when ``text`` is a JSON object (or empty), else why it is not.

    Memoized: validation and sanitizing both check every call's arguments,
    again at every compaction, and the strings are the same objects.
    """
    if not text.strip():
        return None
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        return str(exc)
    return None if isinstance(parsed, dict) else "not a JSON object"
