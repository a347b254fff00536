"""Cache anchors: a rolling cache marker moved to where the lean view's next step breaks the prefix.

Pure cases of ``view/cache_anchor.py``, then a session through the engine's request route with markers laid
as Hermes lays them on Claude routes, billed by Claude's rules (``command/replay/offline/cache_markers.py``).
"""

from __future__ import annotations

from typing import Any

from stowage.command.replay.offline.billing import TokenMeter
from stowage.command.replay.offline.cache_markers import BreakpointCache, mark_like_hermes, marked_positions
from stowage.context_engine.view.cache_anchor import anchored, has_marker, marker_of, with_marker, without_marker

from .view_sessions import make, session, shape

HOUR = {"type": "ephemeral", "ttl": "1h"}


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for k in range(turns):
        call = {"id": f"c{k}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": f"step {k}", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"output {k}"})
    return messages


def hermes_markers(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return mark_like_hermes(messages, HOUR)


def test_the_oldest_rolling_marker_moves_to_the_anchor_and_one_stays_rolling() -> None:
    request = hermes_markers(conversation(10))
    moved = anchored(request, [9])
    assert moved is not None
    marks = [i for i, m in enumerate(moved) if has_marker(m)]
    assert len(marks) == len([m for m in request if has_marker(m)]) == 4  # moved, never added
    assert marks[0] == 0 and marks[1] == 8  # 9 is a tool output: the step's assistant message before it carries it
    assert marks[-1] == len(request) - 1  # the newest message keeps its marker: the next request reads up to it
    assert marker_of(moved[8]) == HOUR  # the host's TTL
    assert [without_marker(m) for m in moved] == [without_marker(m) for m in request]  # no text changed
    assert without_marker(moved[8])["content"] == "step 3"  # a string again once the marker is gone


def test_two_anchors_take_two_markers_and_still_leave_one_rolling() -> None:
    request = hermes_markers(conversation(10))
    moved = anchored(request, [14, 4])
    assert moved is not None
    marks = [i for i, m in enumerate(moved) if has_marker(m)]
    assert marks == [0, 4, 14, len(request) - 1]


def test_nothing_moves_without_the_hosts_markers_or_when_the_anchor_is_among_them() -> None:
    plain = conversation(10)
    assert anchored(plain, [9]) is None  # an automatic-cache route: the request goes as it is
    request = hermes_markers(conversation(10))
    assert anchored(request, [len(request) - 2]) is None  # already within the rolling markers
    assert anchored(request, [0]) is None  # the system prompt is not an anchor
    only_one = [with_marker(m, HOUR) if i in (0, 21) else m for i, m in enumerate(conversation(10))]
    assert anchored(only_one, [9]) is None  # a single rolling marker is not the layout this is for


def _claude_bill(home: Any, anchor: bool, steps: int = 80) -> tuple[int, int, list[list[int]]]:
    """A growing session through the engine's request route, marked as Hermes marks a Claude request.

    The view steps every ten outputs or so, each step breaking the prefix about 30 blocks back: beyond the
    reach of the host's rolling markers.
    """
    cache = BreakpointCache(TokenMeter())
    history = session(steps, quotes={})
    engine = make(home, hot_tokens=4000, step_tokens=6000, cache_anchor=anchor)
    read = written = 0
    marks = []
    for end in range(4, len(history) + 1, 2):
        sent = shape(engine, mark_like_hermes(history[:end]))
        bill = cache.bill({"messages": sent})
        read, written = read + bill.read, written + bill.written
        marks.append(marked_positions(sent))
    return read, written, marks


def test_the_view_steps_read_their_prefix_from_claudes_cache_with_anchors(tmp_path: Any) -> None:
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    read_with, written_with, marks_with = _claude_bill(tmp_path / "on", anchor=True)
    read_without, written_without, marks_without = _claude_bill(tmp_path / "off", anchor=False)
    assert all(len(m) == 4 for m in marks_with) and all(len(m) == 4 for m in marks_without)
    assert marks_with != marks_without  # the anchors moved markers
    assert read_with > read_without and written_with < written_without
