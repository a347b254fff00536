"""Claude's prompt cache as Hermes lays it out: the markers the host places, and what a request then reads.

The ideal model of :mod:`.billing` (a request reads its longest common prefix with the previous one) is
what automatic caching gives (OpenAI, DeepSeek).  Claude caches only at explicit ``cache_control``
markers: a request reads the longest prefix a marker of an earlier request cached, found by walking
back at most :data:`LOOKBACK_BLOCKS` content blocks from one of its own markers, and writes (1.25x)
everything from there to its last marker.  Hermes marks the system prompt and the last three messages
that can carry a marker (0.19.0's ``system_and_3``; 0.22's layout has the same shape).  So a request
that changes a message more than about 20 blocks before its end finds no cached prefix but the
system prompt's, and writes the whole conversation again: what a lean view's step costs on Claude
unless a marker stands where the step breaks the prefix.

Pure functions over plain message dicts, plus :class:`BreakpointCache` (one session's cache entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

from ....context_engine.view.cache_anchor import has_marker, unmarked, with_marker, without_marker
from .billing import TokenMeter, message_key, tools_text

LOOKBACK_BLOCKS = 20  # Claude checks about this many block boundaries back from each marker
HERMES_ROLLING = 3  # Hermes marks the system prompt and this many newest messages
EPHEMERAL = {"type": "ephemeral"}
BREAKPOINTS_MODEL = "claude_breakpoints"  # the price model's name in a bill's costs (reads 0.1x, writes 1.25x)
READ, WRITE = 0.1, 1.25


def can_carry(message: Mapping[str, Any]) -> bool:
    """A marker on this message counts on the envelope layout: it has text content (a string or a part list)."""
    content = message.get("content")
    if isinstance(content, str):
        return bool(content)
    return isinstance(content, list) and bool(content) and isinstance(content[-1], dict)


def mark_like_hermes(
    messages: Sequence[Mapping[str, Any]], marker: Mapping[str, Any] = EPHEMERAL
) -> list[dict[str, Any]]:
    """The request's messages with markers where Hermes puts them: the system prompt and the newest carriers."""
    marked = [dict(m) for m in messages]
    if marked and marked[0].get("role") == "system":
        marked[0] = with_marker(marked[0], marker)
    rolling = [i for i, m in enumerate(marked) if m.get("role") != "system" and can_carry(m)]
    for index in rolling[-HERMES_ROLLING:]:
        marked[index] = with_marker(marked[index], marker)
    return marked


def marked_positions(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, Mapping) and has_marker(m)]


def blocks_of(message: Mapping[str, Any]) -> int:
    """Content blocks the provider sees in one message (its text, and one per tool call)."""
    calls = message.get("tool_calls")
    calls_count = len(calls) if isinstance(calls, list) else 0
    content = message.get("content")
    if isinstance(content, list):
        text_blocks = len(content)
    else:
        text_blocks = 1 if content else 0
    return max(1, text_blocks + calls_count)


@dataclass(frozen=True)
class BreakpointBill:
    tokens: int
    read: int  # read from the cache (0.1x)
    written: int  # written to the cache, up to the last marker (1.25x)

    @property
    def uncached(self) -> int:
        """After the last marker: plain input (1x)."""
        return self.tokens - self.read - self.written

    @property
    def cost(self) -> float:
        return READ * self.read + WRITE * self.written + self.uncached


class BreakpointCache:
    """One session's cache entries (prefixes a marker cached), and the bill of each request against them.

    Entries never expire here: the replay's requests come seconds apart, well inside the 5-minute TTL.
    """

    def __init__(self, meter: TokenMeter) -> None:
        self.meter = meter
        self._entries: set[int] = set()

    def bill(self, request: Mapping[str, Any]) -> BreakpointBill:
        messages = [m for m in request.get("messages") or [] if isinstance(m, Mapping)]
        tools = tools_text(request.get("tools"))
        keys: list[Hashable] = [message_key(without_marker(m)) for m in messages]
        counts = [self.meter.message_tokens(k) for k in keys]
        blocks = [blocks_of(m) for m in messages]
        running = hash(tools)
        hashes, ends = [], []
        total = self.meter.tools_tokens(tools)
        for key, count in zip(keys, counts, strict=True):
            running = hash((running, key))
            hashes.append(running)
            total += count
            ends.append(total)
        marks = marked_positions(messages)
        read = 0
        for mark in marks:
            back, index = 0, mark
            while index >= 0 and back <= LOOKBACK_BLOCKS:
                if hashes[index] in self._entries:
                    read = max(read, ends[index])
                    break
                back += blocks[index]
                index -= 1
        written = max(0, ends[marks[-1]] - read) if marks else 0
        self._entries.update(hashes[m] for m in marks)
        return BreakpointBill(tokens=total, read=read, written=written)


def strip_markers(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request as the ideal model bills it (markers do not change a message's tokens or identity there)."""
    plain = dict(request)
    plain["messages"] = unmarked(request.get("messages") or [])
    return plain
