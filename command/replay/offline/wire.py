"""The wire format: a history message as the host sends it, and the tool calls an assistant message makes.

The host normalizes ``api_messages`` before a request (content stripped,
tool-call arguments re-dumped compact with sorted keys, storage-only fields
left out); billing and the cache-prefix comparison work on that form.  Tool
calls are read here once, defensively (recorded histories hold odd shapes),
so the host loop never parses them by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from ....blobstore import safe_json


@dataclass(frozen=True)
class ToolCall:
    """One call of an assistant message: its id, tool name and raw arguments (usually a JSON string)."""

    id: str
    name: str
    arguments: Any


def tool_calls_of(message: Mapping[str, Any]) -> list[ToolCall]:
    """The well-formed calls of an assistant message (anything else in ``tool_calls`` is ignored)."""
    calls = []
    for call in message.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            continue
        raw_function = call.get("function")
        function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
        calls.append(ToolCall(str(call.get("id")), str(function.get("name") or ""), function.get("arguments")))
    return calls


def call_arguments(raw: Any) -> Any:
    """Arguments as the host hands them to hooks: parsed JSON, ``{}`` for text that is not (bounded) JSON."""
    if isinstance(raw, str):
        return safe_json.loads_or(raw, {})
    return raw or {}


def _normalize_arguments(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(safe_json.loads(arguments), separators=(",", ":"), sort_keys=True)
    except safe_json.JsonRejected:
        return arguments


def wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message as the host puts it in ``api_messages``: content stripped, tool-call JSON normalized,
    storage-only fields left out."""
    out: dict[str, Any] = {"role": message.get("role")}
    content = message.get("content")
    out["content"] = content.strip() if isinstance(content, str) else content
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        normalized = []
        for call in calls:
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                function = call["function"]
                call = {**call, "function": {**function, "arguments": _normalize_arguments(function.get("arguments"))}}
            normalized.append(call)
        out["tool_calls"] = normalized
    for key in ("tool_call_id", "name", "reasoning_content"):
        if message.get(key) is not None:
            out[key] = message[key]
    return out


def text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""
