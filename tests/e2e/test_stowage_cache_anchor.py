"""Claude's prompt cache through the real host: the view's steps break the prefix after a cache marker.

Hermes marks a Claude request's system prompt and its newest three messages (``cache_control``, the
envelope layout of OpenRouter and Nous Portal routes).  A lean-view step changes a message far behind those
markers, beyond the 20 blocks Claude looks back from a marker, so the step would write the whole conversation
again.  Stowage moves the oldest rolling marker to its *anchor*, the last message the previous step
settled.  Driven here as a Claude model on a Nous-Portal-shaped URL of the scripted server, so the host's own
cache policy turns the markers on.
"""

from __future__ import annotations

from typing import Any

import pytest

from stowage.context_engine.view.cache_anchor import has_marker, without_marker
from stowage_dev.fake_llm import FakeLLMServer
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

VIEW = {"view": {"hot_tokens": 1000, "step_tokens": 6000, "pin_turns": 4}}
TURNS = 12


def _marks(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if has_marker(m)]


def _first_change(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    plain_before = [without_marker(m) for m in before]
    plain_after = [without_marker(m) for m in after]
    return next(
        (i for i, (a, b) in enumerate(zip(plain_before, plain_after, strict=False)) if a != b),
        min(len(before), len(after)),
    )


@pytest.mark.parametrize("anchor", [True, False], ids=["anchored", "host-markers-only"])
def test_a_view_step_breaks_the_prefix_after_a_marker(fake_llm: FakeLLMServer, make_home, anchor: bool) -> None:
    config = {
        "stowage": {**VIEW, "view": {**VIEW["view"], "cache_anchor": anchor}},
        "model": {"default": "anthropic/claude-sonnet-4", "base_url": fake_llm.base_url + "/nousresearch/v1"},
    }
    home = stowage_home(make_home, config=config)
    script_warm_up(fake_llm, TURNS)
    run_scenario(home, warm_up(Scenario(), TURNS, secret_turn=None), check=True)

    requests = [r.messages for r in fake_llm.main_requests()]
    assert len(requests) >= 2 * TURNS
    for request in fake_llm.main_requests():
        assert_valid_request(request)
    for messages in requests:
        marks = _marks(messages)
        carriers = sum(1 for m in messages[1:] if m.get("content"))
        assert len(marks) == 1 + min(3, carriers) and marks[0] == 0  # the host's markers: moved, never added
        assert marks[-1] >= len(messages) - 2  # the newest message still carries one: the next request reads it
        newest = [i for i, m in enumerate(messages) if i and m.get("content")][-3:]
        for index in set(marks[1:]) - set(newest):  # an anchor: never on a tool result
            assert messages[index]["role"] in ("user", "assistant")

    steps = [
        (before, after)
        for before, after in zip(requests, requests[1:], strict=False)
        if _first_change(before, after) < len(before)
    ]
    assert steps, "the view made no step"
    read_from_marker = 0
    for before, after in steps:
        change = _first_change(before, after)
        # Claude reads the longest prefix an earlier marker cached: the step's request must carry that
        # marker at or before the change, and the request before must have carried it at the same message
        behind = [i for i in _marks(after)[1:] if i < change]
        if any(i in _marks(before) and without_marker(before[i]) == without_marker(after[i]) for i in behind):
            read_from_marker += 1
    if anchor:
        assert read_from_marker == len(steps)
    else:
        assert read_from_marker == 0  # the host's rolling markers all lie after the change
