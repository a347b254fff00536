"""view.working_set: pins on what the agent works with last the user turn, and end when superseded."""

from __future__ import annotations

import json

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX

from .view_sessions import make, output_index, session, shape


def test_an_output_quoted_once_stays_verbatim_for_the_rest_of_the_user_turn(tmp_path):
    messages = session(20, {2: 1})  # quoted once, early; pin_turns 3
    sent = shape(make(tmp_path / "a", working_set=True, collapse_steps=False), messages)
    kept = output_index(messages, 1)
    assert sent[kept]["content"] == messages[kept]["content"]
    assert sent[output_index(messages, 3)]["content"].startswith(VIEW_STUB_PREFIX)  # the rest still goes
    before = shape(
        make(tmp_path / "b", working_set=False, collapse_steps=False), messages
    )  # without it, pins end after pin_turns
    assert before[kept]["content"].startswith(VIEW_STUB_PREFIX)
    # a new user turn (the next task) ends the pin: the next step stubs it
    later = [*messages, {"role": "user", "content": "Next task."}, *session(12, {})[2:]]
    for k, message in enumerate(later[len(messages) + 1 :]):  # fresh call ids for the new turn's rounds
        for call in message.get("tool_calls") or []:
            call["id"] = f"n{k}"
        if message.get("role") == "tool":
            message["tool_call_id"] = f"n{k - 1}"
    moved_on = shape(make(tmp_path / "c", working_set=True, collapse_steps=False), later)
    assert moved_on[kept]["content"].startswith(VIEW_STUB_PREFIX)


def test_a_superseded_output_loses_its_pin_and_its_stub_says_what_superseded_it(tmp_path):
    """Round 8 runs round 1's ``cat src/module_1.py`` again (collapse off: the test finds outputs by position)."""
    messages = session(24, {2: 1})
    again = next(i for i, m in enumerate(messages) if any(c["id"] == "c8" for c in m.get("tool_calls") or []))
    messages[again]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "cat  src/module_1.py"})
    sent = shape(make(tmp_path, working_set=True, collapse_steps=False), messages)
    stub = sent[output_index(messages, 1)]["content"]
    assert stub.startswith(VIEW_STUB_PREFIX)
    assert "superseded by the same call, run again later" in stub
    assert "superseded" not in sent[output_index(messages, 3)]["content"]  # never superseded: the plain stub


def test_a_listing_goes_with_the_next_step_from_inside_the_hot_zone_and_its_stub_says_what_it_was(tmp_path):
    """Round 3 lists the tree: the next call acted on it, so the next step stubs it though it is still hot."""
    messages = session(6, {})
    at = next(i for i, m in enumerate(messages) if any(c["id"] == "c3" for c in m.get("tool_calls") or []))
    messages[at]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "find src -name '*.py'"})
    wide = {"hot_tokens": 20_000, "collapse_steps": False, "step_tokens": 500}
    sent = shape(make(tmp_path / "a", working_set=True, **wide), messages)
    listing = sent[output_index(messages, 3)]["content"]
    assert listing.startswith(VIEW_STUB_PREFIX) and "superseded by the calls after it (a listing)" in listing
    assert sent[output_index(messages, 4)]["content"] == messages[output_index(messages, 4)]["content"]  # hot
    before = shape(
        make(tmp_path / "b", working_set=False, **wide), messages
    )  # without the working set the hot zone keeps it
    assert before[output_index(messages, 3)]["content"] == messages[output_index(messages, 3)]["content"]
