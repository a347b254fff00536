"""Recorded messages made replayable: text content, valid tool-call pairs, bounded sizes; every fix named.

A recorded session may hold images, orphan tool results, unanswered calls or
a message of tens of megabytes.  None of that stops a replay: the offending
part is dropped, replaced by a marker or cut, and the session's notes say so.
"""

from __future__ import annotations

import json
from typing import Any

from .offline.chain import clean_transcript

MAX_MESSAGE_CHARS = 2_000_000  # about 500k tokens: past any window, and a few copies stay far under a gigabyte


def _text_content(content: Any, problems: list[str], where: str) -> Any:
    """Text, or a list of text parts; other parts (images, audio, files) are named and replaced by a marker."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        kept: list[Any] = []
        dropped = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                kept.append({"type": "text", "text": part["text"]})
            elif isinstance(part, str):
                kept.append({"type": "text", "text": part})
            else:
                dropped += 1
        if dropped:
            problems.append(f"{where}: {dropped} non-text content part(s) (image/file) replaced by a marker")
            kept.append({"type": "text", "text": f"[{dropped} non-text part(s) not replayed]"})
        return kept
    problems.append(f"{where}: content of type {type(content).__name__} read as text")
    return json.dumps(content, ensure_ascii=False, default=str)


def tidy(messages: list[dict[str, Any]], problems: list[str]) -> list[dict[str, Any]]:
    """A valid conversation (see ``chain.clean_transcript``), naming what had to be dropped."""
    for index, message in enumerate(messages):
        message["content"] = _text_content(message.get("content"), problems, f"message {index + 1}")
    call_ids = {
        str(c.get("id"))
        for m in messages
        if m.get("role") == "assistant"
        for c in (m.get("tool_calls") or [])
        if isinstance(c, dict)
    }
    result_ids = {str(m.get("tool_call_id")) for m in messages if m.get("role") == "tool"}
    cleaned = clean_transcript(messages)
    orphans = sum(1 for m in messages if m.get("role") == "tool") - sum(1 for m in cleaned if m["role"] == "tool")
    if orphans:
        problems.append(f"{orphans} tool result(s) without a matching call (orphans) left out")
    unanswered = len(call_ids - result_ids)
    if unanswered:
        problems.append(f"{unanswered} tool call(s) without a result left out")
    return cleaned


def cap_messages(
    messages: list[dict[str, Any]], problems: list[str], limit: int = MAX_MESSAGE_CHARS
) -> list[dict[str, Any]]:
    """Text over ``limit`` characters cut to it (named): a replay holds a few copies of each message, so one
    huge message must not cost gigabytes; a request this large is over any window anyway."""
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, str) and len(content) > limit:
            message["content"] = content[:limit] + f"\n[cut for the replay: {len(content):,} characters]"
            problems.append(f"message {index + 1}: {len(content):,} characters cut to {limit:,} for the replay")
        elif isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and len(text) > limit:
                    part["text"] = text[:limit] + f"\n[cut for the replay: {len(text):,} characters]"
                    problems.append(f"message {index + 1}: a part of {len(text):,} characters cut to {limit:,}")
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            arguments = function.get("arguments")
            if isinstance(arguments, str) and len(arguments) > limit:
                function["arguments"] = "{}"
                problems.append(
                    f"message {index + 1}: tool-call arguments of {len(arguments):,} characters not replayed"
                )
    return messages
