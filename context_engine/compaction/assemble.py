"""Phase 4: put head, summary and tail together and make the list valid.

* :func:`place_summary` picks the summary's role so it never sits next to a
  message of the same role, and merges it into the first tail message when
  no role fits (strict providers reject two user or two assistant turns in a
  row).  It never merges into a user turn: the user's request would then
  read as a summary and later compactions would lose track of it; a short
  assistant acknowledgement keeps the alternation instead.
* :func:`sanitize` repairs what any phase (or the host) may have broken: tool
  results without their call, calls without their result, invalid JSON
  arguments, same-role neighbours, a conversation not starting with a user.

Pure functions; untouched messages are shared, changed ones are copies.
"""

from __future__ import annotations

import json
from typing import Any

from ..chat.messages import (
    SUMMARY_FLAG,
    Message,
    call_arguments_text,
    call_id,
    content_parts,
    has_content,
    is_summary,
    json_object_problem,
    leading_system_count,
    role_of,
    tool_calls_of,
    tool_result_id,
)

REMOVED_CALL_NOTE = "(tool call removed during context compaction)"
CONTINUE_NOTE = "(continuing the conversation)"
EMPTY_NOTE = "(empty message)"
NO_OUTPUT_NOTE = "(no output)"
SUMMARY_ACK = "(Earlier context noted from the summary above; continuing with the conversation below.)"


def place_summary(head: list[Message], summary_content: str, tail: list[Message]) -> list[Message]:
    """``head + [summary] + tail`` with a role that keeps alternation valid."""
    conversation_head = [m for m in head if role_of(m) not in ("system", "developer")]
    before = role_of(conversation_head[-1]) if conversation_head else ""
    after = role_of(tail[0]) if tail else ""
    if not conversation_head:
        role = "user"  # the conversation must open with a user turn
    else:
        candidates = [r for r in ("user", "assistant") if r != _effective(before) and r != after]
        role = candidates[0] if candidates else ""
    if role and role != after:
        return head + [{"role": role, "content": summary_content, SUMMARY_FLAG: True}] + tail
    if tail and role_of(tail[0]) == "assistant":
        return head + [merge_summary_into(tail[0], summary_content)] + tail[1:]
    if tail and role_of(tail[0]) == "user":
        return (
            head
            + [
                {"role": "user", "content": summary_content, SUMMARY_FLAG: True},
                {"role": "assistant", "content": SUMMARY_ACK},
            ]
            + tail
        )
    return head + [{"role": "user", "content": summary_content, SUMMARY_FLAG: True}] + tail


def _effective(role: str) -> str:
    """A tool result behaves like an assistant turn for alternation."""
    return "assistant" if role == "tool" else role


def merge_summary_into(message: Message, summary_content: str) -> Message:
    merged = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        merged["content"] = [{"type": "text", "text": summary_content}] + list(content)
    elif isinstance(content, str) and content:
        merged["content"] = f"{summary_content}\n\n{content}"
    else:
        merged["content"] = summary_content
    merged[SUMMARY_FLAG] = True
    return merged


# -- sanitizing ------------------------------------------------------------


def sanitize(messages: list[Message]) -> list[Message]:
    """A list every provider profile accepts, losing as little as possible."""
    result = [m for m in messages if isinstance(m, dict)]
    result = demote_late_system(result)
    result = unique_call_ids(result)
    result = pair_tool_calls(result)
    result = fix_arguments(result)
    result = fill_empty(result)
    result = merge_same_role(result)
    return ensure_user_first(result)


def demote_late_system(messages: list[Message]) -> list[Message]:
    """System messages after the conversation started become user notes."""
    out: list[Message] = []
    started = False
    for message in messages:
        role = role_of(message)
        if role in ("system", "developer") and started:
            note = dict(message)
            note["role"] = "user"
            text = message.get("content")
            note["content"] = f"[{role} message] {text}" if isinstance(text, str) else text
            out.append(note)
            continue
        started = started or role not in ("system", "developer")
        out.append(message)
    return out


def unique_call_ids(messages: list[Message]) -> list[Message]:
    """Rename a reused tool-call id (and its result) so pairing stays unambiguous."""
    seen: set[str] = set()
    out: list[Message] = []
    renames: dict[str, str] = {}
    for message in messages:
        if role_of(message) == "tool" and tool_result_id(message) in renames:
            fixed = dict(message)
            fixed["tool_call_id"] = renames.pop(tool_result_id(message))
            out.append(fixed)
            continue
        calls = tool_calls_of(message)
        if role_of(message) == "assistant" and calls:
            renames = {}
            new_calls = []
            for number, call in enumerate(calls):
                cid = call_id(call)
                if cid and cid in seen:
                    fresh = f"{cid}_stowage{len(seen)}_{number}"
                    renames[cid] = fresh
                    call = {**call, "id": fresh}
                seen.add(call_id(call))
                new_calls.append(call)
            if renames:
                message = {**message, "tool_calls": new_calls}
        out.append(message)
    return out


def fill_empty(messages: list[Message]) -> list[Message]:
    """Strict providers reject empty turns, empty text blocks and tool results without text."""
    out = []
    for message in messages:
        role = role_of(message)
        content = message.get("content")
        if isinstance(content, list) and role in ("user", "assistant", "tool"):
            kept = [
                part
                for part in content
                if not (
                    isinstance(part, dict)
                    and part.get("type") == "text"
                    and not (isinstance(part.get("text"), str) and part["text"].strip())
                )
            ]
            if len(kept) != len(content):
                message = {**message, "content": kept if kept or not tool_calls_of(message) else None}
        if role == "tool" and (not isinstance(message.get("content"), (str, list)) or message.get("content") == []):
            message = {**message, "content": NO_OUTPUT_NOTE}
        if role in ("user", "assistant") and not has_content(message) and not tool_calls_of(message):
            message = {**message, "content": EMPTY_NOTE}
        out.append(message)
    return out


def pair_tool_calls(messages: list[Message]) -> list[Message]:
    """Drop results whose call is gone; strip calls whose result is gone."""
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if role_of(message) == "tool":
            index += 1  # a result not directly after its assistant: orphan
            continue
        if role_of(message) != "assistant" or not tool_calls_of(message):
            out.append(message)
            index += 1
            continue
        run_end = index + 1
        while run_end < len(messages) and role_of(messages[run_end]) == "tool":
            run_end += 1
        out.extend(_pair_group(message, messages[index + 1 : run_end]))
        index = run_end
    return out


def _pair_group(assistant: Message, results: list[Message]) -> list[Message]:
    calls = tool_calls_of(assistant)
    wanted = {call_id(c) for c in calls if call_id(c)}
    kept_results: list[Message] = []
    answered: set[str] = set()
    for result in results:
        cid = tool_result_id(result)
        if cid in wanted and cid not in answered:
            answered.add(cid)
            kept_results.append(result)
    kept_calls = [c for c in calls if call_id(c) in answered]
    if len(kept_calls) == len(assistant.get("tool_calls") or []):
        return [assistant] + kept_results
    fixed = dict(assistant)
    if kept_calls:
        fixed["tool_calls"] = kept_calls
    else:
        fixed.pop("tool_calls", None)
        if not has_content(fixed):
            fixed["content"] = REMOVED_CALL_NOTE
    return [fixed] + kept_results


def fix_arguments(messages: list[Message]) -> list[Message]:
    """Tool-call arguments become JSON object strings."""
    out = []
    for message in messages:
        calls = tool_calls_of(message)
        if not calls or all(_arguments_ok(c) for c in calls):
            out.append(message)
            continue
        fixed = dict(message)
        fixed["tool_calls"] = [c if _arguments_ok(c) else _repair_call(c) for c in calls]
        out.append(fixed)
    return out


def _arguments_ok(call: dict[str, Any]) -> bool:
    fn = call.get("function")
    raw = fn.get("arguments") if isinstance(fn, dict) else None
    return isinstance(raw, str) and json_object_problem(raw) is None


def _repair_call(call: dict[str, Any]) -> dict[str, Any]:
    text = call_arguments_text(call)
    try:
        parsed = json.loads(text) if text.strip() else {}
    except ValueError:
        parsed = None
    arguments = parsed if isinstance(parsed, dict) else {"_stowage_unparsed_arguments": text}
    fixed = dict(call)
    fn = dict(call.get("function") or {})
    fn.setdefault("name", call.get("name") or "")
    fn["arguments"] = json.dumps(arguments, ensure_ascii=False)
    fixed["function"] = fn
    fixed.setdefault("type", "function")
    return fixed


def merge_same_role(messages: list[Message]) -> list[Message]:
    """Merge neighbouring user/user or assistant/assistant messages (lossless)."""
    out: list[Message] = []
    for message in messages:
        previous = out[-1] if out else None
        role = role_of(message)
        if (
            previous is not None
            and role in ("user", "assistant")
            and role_of(previous) == role
            and not tool_calls_of(previous)
        ):
            out[-1] = _merge_pair(previous, message)
        else:
            out.append(message)
    return out


def _merge_pair(first: Message, second: Message) -> Message:
    merged = dict(second)
    a, b = first.get("content"), second.get("content")
    if is_summary(second) and not is_summary(first):
        a, b = b, a  # the summary's text first: its marker opens the message (is_summary looks there)
    if isinstance(a, list) or isinstance(b, list):
        merged["content"] = [
            part
            for part in content_parts(a) + content_parts(b)
            if not (
                isinstance(part, dict)
                and part.get("type") == "text"
                and not (isinstance(part.get("text"), str) and part["text"].strip())
            )
        ]
    else:
        merged["content"] = "\n\n".join(x for x in (a or "", b or "") if x)
    if first.get(SUMMARY_FLAG) or second.get(SUMMARY_FLAG):
        merged[SUMMARY_FLAG] = True
    if not merged.get("content") and not tool_calls_of(merged):
        merged["content"] = CONTINUE_NOTE
    return merged


def without_summary_flag(messages: list[Message]) -> list[Message]:
    """The compacted history as the host keeps and sends it: no internal key on any message.

    Hermes 0.17+ drops keys starting with ``_`` before a request; 0.13.0 sends
    them to the provider as they are.  A summary is known by its marker,
    which opens its text (``is_summary``); the flag only serves inside one compaction.
    """
    return [{k: v for k, v in m.items() if k != SUMMARY_FLAG} if SUMMARY_FLAG in m else m for m in messages]


def ensure_user_first(messages: list[Message]) -> list[Message]:
    """The first conversation message must be a user turn; never zero user turns."""
    first = leading_system_count(messages)
    if first == len(messages):
        return messages
    if role_of(messages[first]) == "user":
        return messages
    return messages[:first] + [{"role": "user", "content": CONTINUE_NOTE}] + messages[first:]
