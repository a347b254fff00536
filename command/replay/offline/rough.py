"""The host's rough token estimates (Hermes 0.19.0 ``agent/model_metadata.py``), re-implemented.

The host's compaction gates compare these figures, not real counts, with the
threshold: chars/4 of ``str(message)`` per message (images at a flat 1500),
chars/4 of the system prompt, and chars/4 of each tool schema's name,
description and compact JSON parameters.  Re-implemented here so the replay
imports nothing from Hermes; ``tests/replay`` checks them against the
installed host's functions.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

IMAGE_TOKENS = 1500
_IMAGE_TYPES = {"image", "image_url", "input_image"}


def message_chars(message: Any) -> int:
    if not isinstance(message, dict):
        return len(str(message))
    if "_anthropic_content_blocks" not in message and not isinstance(message.get("content"), (list, dict)):
        return len(str(message))
    shadow: dict[str, Any] = {}
    for key, value in message.items():
        if key == "_anthropic_content_blocks":
            continue
        if key == "content":
            if isinstance(value, list):
                shadow[key] = [
                    {"type": p.get("type"), "image": "[stripped]"}
                    if isinstance(p, dict) and p.get("type") in _IMAGE_TYPES
                    else p
                    for p in value
                ]
            elif isinstance(value, dict) and value.get("_multimodal"):
                shadow[key] = value.get("text_summary", "")
            else:
                shadow[key] = value
        else:
            shadow[key] = value
    return len(str(shadow))


def image_count(message: Any) -> int:
    if not isinstance(message, dict):
        return 0
    count = 0
    content = message.get("content")
    if isinstance(content, list):
        count += sum(1 for p in content if isinstance(p, dict) and p.get("type") in _IMAGE_TYPES)
    stashed = message.get("_anthropic_content_blocks")
    if isinstance(stashed, list):
        count += sum(1 for p in stashed if isinstance(p, dict) and p.get("type") in {"image", "image_url"})
    return count


class RoughEstimator:
    """``estimate_messages_tokens_rough`` and friends, memoized per message object.

    The memo holds a reference to each message it measured (so an id is never
    reused while cached) and assumes messages are not mutated after they join
    a history, which the replay driver guarantees for its own messages.
    """

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, int, int]] = {}
        self._tools_memo: tuple[Any, int] | None = None

    def clear(self) -> None:
        self._memo.clear()
        self._tools_memo = None

    def _measure(self, message: Any) -> tuple[int, int]:
        entry = self._memo.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1], entry[2]
        chars, images = message_chars(message), image_count(message)
        self._memo[id(message)] = (message, chars, images)
        return chars, images

    def messages(self, messages: Sequence[Any]) -> int:
        chars = images = 0
        for message in messages:
            c, i = self._measure(message)
            chars += c
            images += i
        return (chars + 3) // 4 + images * IMAGE_TOKENS

    def tools(self, tools: Sequence[Mapping[str, Any]] | None) -> int:
        if not tools:
            return 0
        if self._tools_memo is not None and self._tools_memo[0] is tools:
            return self._tools_memo[1]
        tokens = tools_tokens(tools)
        self._tools_memo = (tools, tokens)
        return tokens

    def request(
        self, messages: Sequence[Any], *, system_prompt: str = "", tools: Sequence[Mapping[str, Any]] | None = None
    ) -> int:
        total = (len(system_prompt) + 3) // 4 if system_prompt else 0
        if messages:
            total += self.messages(messages)
        return total + self.tools(tools)


def tools_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    chars = 0
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        inner = tool.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else tool
        name, desc, params = fn.get("name") or "", fn.get("description") or "", fn.get("parameters") or {}
        chars += len(name) if isinstance(name, str) else 0
        chars += len(desc) if isinstance(desc, str) else 0
        try:
            chars += len(json.dumps(params, ensure_ascii=False, separators=(",", ":")))
        except (TypeError, ValueError):
            chars += len(str(params))
    return (chars + 3) // 4
