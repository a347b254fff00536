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

from typing import Any, Mapping, Sequence

from ..chat.messages import Message

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
