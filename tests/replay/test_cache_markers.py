"""Claude's prompt cache as the bench bills it: reads only at markers, found within 20 blocks back."""

from __future__ import annotations

from typing import Any

from stowage.command.replay.offline.billing import TokenMeter, message_key
from stowage.command.replay.offline.cache_markers import BreakpointCache, mark_like_hermes, marked_positions
from stowage.context_engine.view.cache_anchor import anchored


def words(text: str) -> int:
    return len(text.split())


def conversation(turns: int, changed: int = -1) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "system prompt " * 50}]
    for k in range(turns):
        body = "stub" if k == changed else f"output {k} " * 20
        messages.append({"role": "assistant", "content": f"step {k} reasoning"})
        messages.append({"role": "user", "content": body})
    return messages


def test_hermes_marks_the_system_prompt_and_the_newest_three() -> None:
    marked = mark_like_hermes(conversation(5))
    assert marked_positions(marked) == [0, 8, 9, 10]


def test_a_request_extending_the_last_one_reads_up_to_its_newest_marker() -> None:
    cache = BreakpointCache(TokenMeter(words))
    first = cache.bill({"messages": mark_like_hermes(conversation(10))})
    assert first.read == 0 and first.written == first.tokens  # nothing cached yet; the last marker ends the request
    second = cache.bill({"messages": mark_like_hermes(conversation(11))})
    assert second.read == first.tokens  # the previous request's last marker is within reach
    assert second.written == second.tokens - first.tokens


def test_a_change_far_back_reads_only_the_system_prompt_unless_a_marker_stands_before_it() -> None:
    meter = TokenMeter(words)
    system = meter.message_tokens(("system", "system prompt " * 50, (), "", ""))
    cache = BreakpointCache(meter)
    cache.bill({"messages": mark_like_hermes(conversation(40))})
    far = cache.bill({"messages": mark_like_hermes(conversation(40, changed=5))})
    assert far.read == system  # the whole conversation is written again

    anchored_cache = BreakpointCache(meter)
    before = anchored(mark_like_hermes(conversation(40)), [8])
    after = anchored(mark_like_hermes(conversation(40, changed=5)), [8])
    assert before is not None and after is not None
    anchored_cache.bill({"messages": before})
    read = anchored_cache.bill({"messages": after}).read
    assert read == system + sum(meter.message_tokens(message_key(m)) for m in conversation(40)[1:9])
