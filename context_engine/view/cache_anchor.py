"""A cache marker where the view's next step breaks the prefix: Claude then reads up to it instead of starting over.

Claude caches a request only at its ``cache_control`` markers, and a later
request finds a cached prefix only by walking back about 20 content blocks
from one of its own markers.  Hermes marks the system prompt and the newest
three messages, which serves a request that extends the previous one.  A
view step changes a message some 50 messages back; with the host's markers
alone nothing cached lies within reach, and the step writes the whole
conversation again (the bench's ``claude_breakpoints`` price model measures
it).  So the request moves the oldest of the host's rolling markers to the
*anchor*: the last message the previous step settled, which every request
since has carried unchanged and the next step leaves as it is.  At the step
Claude reads up to it and writes only what follows.

Only markers the host placed are moved, never added (the provider allows
four), and only onto a user or assistant message with text (what every
route accepts); a request without markers goes as it is.  Pure functions
over message dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..chat.messages import Message, role_of
from .plan import ViewItem, ViewPlan

MARKER_KEY = "cache_control"


def has_marker(message: Mapping[str, Any]) -> bool:
    if MARKER_KEY in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, Mapping) and MARKER_KEY in p for p in content)


def marker_of(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The marker a message carries (its TTL is the host's), or None."""
    found = message.get(MARKER_KEY)
    content = message.get("content")
    if found is None and isinstance(content, list):
        found = next((p[MARKER_KEY] for p in content if isinstance(p, Mapping) and MARKER_KEY in p), None)
    return dict(found) if isinstance(found, Mapping) else None


def with_marker(message: Mapping[str, Any], marker: Mapping[str, Any]) -> Message:
    """A copy carrying ``marker`` on its last text part (a string becomes one text part, as the host does)."""
    marked = dict(message)
    content = marked.get("content")
    if isinstance(content, str):
        marked["content"] = [{"type": "text", "text": content, MARKER_KEY: dict(marker)}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        parts = [dict(p) if isinstance(p, dict) else p for p in content]
        parts[-1][MARKER_KEY] = dict(marker)
        marked["content"] = parts
    return marked


def without_marker(message: Mapping[str, Any]) -> Message:
    """A copy without markers; one plain text part is its string again (the same content to the cache)."""
    plain = {k: v for k, v in message.items() if k != MARKER_KEY}
    content = plain.get("content")
    if isinstance(content, list):
        parts = [{k: v for k, v in p.items() if k != MARKER_KEY} if isinstance(p, Mapping) else p for p in content]
        if len(parts) == 1 and isinstance(parts[0], dict) and set(parts[0]) <= {"type", "text"}:
            plain["content"] = parts[0].get("text", "")
        else:
            plain["content"] = parts
    return plain


def unmarked(messages: Sequence[Message]) -> list[Message]:
    """The messages as the view measures them: a host's markers move every request, the history does not.

    The plan is a pure function of the history; measured with the markers, the newest messages would
    count a little more than they will once the markers move on, and an older request's plan could differ.
    """
    return [without_marker(m) if isinstance(m, dict) and has_marker(m) else m for m in messages]


def anchor_carrier(message: Any) -> bool:
    """A message every route lets carry a marker: a user or assistant message with text content."""
    if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, Mapping) and p.get("type") in ("text", None) for p in content)
    )


def anchored(messages: Sequence[Message], anchors: Sequence[int]) -> list[Message] | None:
    """The request with its oldest rolling markers moved to ``anchors`` (each, or the nearest carrier before it).

    At least one rolling marker stays (it is what the next request, extending this one, reads).  None when
    nothing moves: fewer than two rolling markers (not the layout this is for), or every anchor already
    lies among them, carries a marker or has no carrier before it.
    """
    rolling = [
        i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") != "system" and has_marker(m)
    ]
    spare = rolling[:-1]
    targets: list[int] = []
    for anchor in anchors:
        at = min(anchor, len(messages) - 1)
        while at > 0 and not anchor_carrier(messages[at]):
            at -= 1
        if at > 0 and (not rolling or at < rolling[0]) and not has_marker(messages[at]) and at not in targets:
            targets.append(at)
    targets = targets[: len(spare)]
    if not targets:
        return None
    moved = list(messages)
    for source, target in zip(spare, targets, strict=False):
        marker = marker_of(moved[source])
        if marker is None:
            continue
        moved[source] = without_marker(moved[source])
        moved[target] = with_marker(moved[target], marker)
    return moved


@dataclass(frozen=True)
class AnchorMemory:
    """What a request's anchors depend on from the request before it (same session, same view)."""

    settled_end: int = -1  # its newest step boundary
    boundary: int = -1  # where its next step's fresh stubs would begin
    length: int = 0  # its history's length (shorter now: a compaction came, the boundary is void)


def anchor_points(
    plan: ViewPlan,
    history: Sequence[Message],
    items: Sequence[ViewItem],
    collapsed_runs: Sequence[tuple[int, int, int]],
    before: AnchorMemory,
) -> tuple[tuple[int, ...], AnchorMemory]:
    """Where the prefixes the next step may leave whole end, in the request's indices; and the memory for the next.

    First where the next step's fresh stubs begin: the latest step's boundary, or before any step the oldest
    cold item (in the request that makes a step, the boundary the requests before it carried: that prefix
    is the cached one).  Then, when a pin keeps an older output verbatim, that output: the step releasing
    the pin breaks there.  Each goes back to the start of its tool step (a collapse line replaces the step's
    call message); the anchor is the message before it, counted in the request (``collapsed_runs``: (start,
    end, messages sent) of each run of steps sent as one line).
    """
    newest = plan.step_ends[-1] if plan.step_ends else -1
    cold = next((i for i, item in enumerate(items[: plan.hot_start]) if item.cold_tokens > 0), -1)
    current = newest if newest >= 0 else cold
    memory = AnchorMemory(newest, current, len(history))
    if current < 0:
        return (), memory
    boundary = current
    stepped = newest >= 0 and newest != before.settled_end
    if stepped and 0 < before.boundary <= current and len(history) >= before.length:
        boundary = before.boundary
    found = [boundary]
    if plan.pinned and min(plan.pinned) < boundary:
        found.append(min(plan.pinned))
    anchors = []
    for at in found:
        while at > 0 and role_of(history[at]) == "tool":
            at -= 1
        folded = sum((end - start) - sent for start, end, sent in collapsed_runs if end <= at)
        anchors.append(at - 1 - folded)
    return tuple(anchors), memory
