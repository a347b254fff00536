"""Inline pre-selection: the likely tools' schemas as text in their user message's turn, the tool list untouched.

Providers put tool definitions ahead of the system prompt, so a tool list
that changes per user message re-bills the whole prompt.  Here the list
stays the same for the session (core tools and the bridges) and each user
message carries, in the request only, a block naming the few deferred tools
it most likely needs with their full schemas; the model calls them by name
through ``stowage_tool_call`` with no search round trip.

Pure functions over plain message dicts: :func:`user_keys` names each user
message by its place and content (a chain hash over the user messages up to
it, so the same history gives the same keys in a later request, another
process or a resumed session), :func:`render_block` writes a block
byte-deterministically, and :func:`insert_blocks` appends blocks to their
user messages' content in a copy of the request.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from .bridges import CALL_NAME

BLOCK_OPEN = "<stowage-tools>"
BLOCK_CLOSE = "</stowage-tools>"
HEADER = (
    f"Tools that may fit this message (deferred: not in your tool list). Call one through {CALL_NAME} with "
    '{"name": <name>, "arguments": {...}}; no search needed.'
)


def user_keys(messages: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """(index, key) of each user message: a hash of its ordinal, its text and the previous user message's key.

    A block already in a message is not part of its text: the key is the same before and after insertion.
    """
    out: list[tuple[int, str]] = []
    chain = ""
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        text = _content_text(message.get("content"))
        chain = hashlib.sha256(f"{chain}\x00{len(out)}\x00{text}".encode("utf-8", "replace")).hexdigest()[:32]
        out.append((index, chain))
    return out


def render_block(schemas: Sequence[Mapping[str, Any]], shown_before: Sequence[str] = ()) -> str:
    """The block for one user message: each new schema in full, tools shown in an earlier turn by name only.

    ``schemas``: ``{"name", "description", "parameters"}`` in pick order.
    Compact JSON with sorted keys, so the same pick renders the same bytes.
    """
    lines = [BLOCK_OPEN, HEADER]
    for schema in schemas:
        body = {"description": schema.get("description", ""), "parameters": schema.get("parameters") or {}}
        lines.append(
            f"- {schema['name']}: {json.dumps(body, sort_keys=True, separators=(',', ':'), ensure_ascii=False)}"
        )
    if shown_before:
        lines.append(f"Also likely, schema shown earlier in this conversation: {', '.join(shown_before)}")
    lines.append(BLOCK_CLOSE)
    return "\n".join(lines)


def insert_blocks(messages: Sequence[Mapping[str, Any]], blocks: Mapping[int, str]) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``blocks[i]`` appended to user message ``i``'s content (others as they are).

    Text content gets the block after a blank line; a list of parts gets one
    more text part.  The input is not modified.
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        block = blocks.get(index)
        content = message.get("content")
        if not block or message.get("role") != "user" or _holds(content, block):
            out.append(message)  # type: ignore[arg-type]
            continue
        if isinstance(content, list):
            new_content: Any = [*content, {"type": "text", "text": block}]
        else:
            text = "" if content is None else str(content)
            new_content = f"{text}\n\n{block}" if text else block
        out.append({**message, "content": new_content})
    return out


def inserted(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], blocks: Mapping[int, str]
) -> list[str]:
    """The blocks :func:`insert_blocks` actually added (not already there), for the request's count."""
    return [b for i, b in blocks.items() if i < len(after) and after[i] is not before[i]]


def own_text(message: Mapping[str, Any]) -> str:
    """A user message's text without any inline block (what it is ranked on)."""
    return _content_text(message.get("content"))


def _holds(content: Any, block: str) -> bool:
    if isinstance(content, str):
        return content.endswith(block)
    if isinstance(content, list) and content:
        last = content[-1]
        return isinstance(last, Mapping) and last.get("text") == block
    return False


def _content_text(content: Any) -> str:
    """The message's own text: an inline block it carries is left out."""
    if isinstance(content, str):
        return content.split("\n\n" + BLOCK_OPEN, 1)[0] if not content.startswith(BLOCK_OPEN) else ""
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
            if not isinstance(part, Mapping)
            or (
                part.get("type") in (None, "text", "input_text")
                and not str(part.get("text", "")).startswith(BLOCK_OPEN)
            )
        )
    return "" if content is None else str(content)
