"""An independent strict-provider check of a message list (deliberately not ``validate_messages``).

It encodes what the strictest chat APIs reject, written from their documented
request rules rather than from Stowage's own validator, so a bug shared by
``validate_messages`` and ``sanitize`` cannot hide here.  Returns a list of
problems as plain strings (empty: the list would be accepted).
"""

from __future__ import annotations

import json
from typing import Any

ROLES = {"system", "user", "assistant", "tool"}


def _text_ok(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _parts_problems(where: str, parts: list, *, allow_images: bool) -> list[str]:
    out = []
    if not parts:
        out.append(f"{where}: empty content list")
    for j, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            out.append(f"{where}: part {j} is not a typed object")
        elif part["type"] == "text":
            if not _text_ok(part.get("text")):
                out.append(f"{where}: text part {j} has empty or non-string text")
        elif not allow_images:
            out.append(f"{where}: part {j} of type {part['type']!r} not allowed here")
    return out


def strict_problems(messages: Any) -> list[str]:
    if not isinstance(messages, list) or not messages:
        return ["not a non-empty list"]
    out: list[str] = []
    seen_ids: set[str] = set()
    pending: list[str] = []  # call ids of the last assistant still to be answered
    conversation_started = False
    previous = None
    for i, m in enumerate(messages):
        where = f"message {i}"
        if not isinstance(m, dict):
            out.append(f"{where}: not an object")
            continue
        role = m.get("role")
        if role not in ROLES:
            out.append(f"{where}: role {role!r}")
            continue
        content = m.get("content")
        if role != "tool" and pending:
            out.append(f"{where}: calls {pending} unanswered before a {role} message")
            pending = []
        if role == "system":
            if conversation_started:
                out.append(f"{where}: system message after the conversation started")
            if not _text_ok(content):
                out.append(f"{where}: system content must be non-empty text")
            continue
        if not conversation_started and role != "user":
            out.append(f"{where}: conversation starts with {role}")
        conversation_started = True
        if role in ("user", "assistant") and role == previous:
            out.append(f"{where}: two {role} messages in a row")
        if role == "user":
            if isinstance(content, list):
                out += _parts_problems(where, content, allow_images=True)
            elif not _text_ok(content):
                out.append(f"{where}: user content must be non-empty text or parts")
        elif role == "assistant":
            calls = m.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                out.append(f"{where}: tool_calls is not a list")
                calls = []
            calls = calls or []
            if isinstance(content, list):
                out += _parts_problems(where, content, allow_images=False)
            elif content is not None and not isinstance(content, str):
                out.append(f"{where}: assistant content of type {type(content).__name__}")
            if not calls and not (_text_ok(content) or (isinstance(content, list) and content)):
                out.append(f"{where}: assistant message with neither text nor tool calls")
            for call in calls:
                fn = call.get("function") if isinstance(call, dict) else None
                cid = call.get("id") if isinstance(call, dict) else None
                if not (isinstance(cid, str) and cid):
                    out.append(f"{where}: tool call without a string id")
                    continue
                if cid in seen_ids:
                    out.append(f"{where}: call id {cid!r} reused")
                seen_ids.add(cid)
                if call.get("type") != "function" or not isinstance(fn, dict) or not _text_ok(fn.get("name")):
                    out.append(f"{where}: call {cid!r} is not a named function call")
                    continue
                args = fn.get("arguments")
                if not isinstance(args, str):
                    out.append(f"{where}: call {cid!r} arguments are a {type(args).__name__}, not a string")
                    continue
                try:
                    parsed = json.loads(args)
                except ValueError:
                    out.append(f"{where}: call {cid!r} arguments are not JSON")
                    continue
                if not isinstance(parsed, dict):
                    out.append(f"{where}: call {cid!r} arguments are not a JSON object")
                pending.append(cid)
        else:  # tool
            cid = m.get("tool_call_id")
            if cid not in pending:
                out.append(f"{where}: tool result for {cid!r} does not answer a call of the assistant before it")
            else:
                pending.remove(cid)
            if isinstance(content, list):
                out += _parts_problems(where, content, allow_images=True)
            elif not isinstance(content, str):
                out.append(f"{where}: tool content is {type(content).__name__}, not text")
        previous = role
    if pending:
        out.append(f"end: calls {pending} unanswered")
    if not any(isinstance(m, dict) and m.get("role") == "user" for m in messages):
        out.append("no user message")
    return out
