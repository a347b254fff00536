"""Outputs the agent keeps quoting stay verbatim; prompt-cache steps are kept (view.pin_quoted)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.context_engine.view.quote_pins import QuoteIndex

from .view_sessions import make, output_index, session, shape


def test_an_output_the_agent_keeps_quoting_stays_verbatim_while_older_ones_become_stubs(tmp_path):
    quotes = {k: 1 for k in range(2, 16, 2)}  # every other round names helper_1, first shown by round 1
    messages = session(16, quotes)
    sent = shape(make(tmp_path), messages)
    assert sent[output_index(messages, 1)]["content"] == messages[output_index(messages, 1)]["content"]
    for k in (0, 2, 3, 4):
        assert sent[output_index(messages, k)]["content"].startswith(VIEW_STUB_PREFIX)
    unpinned = shape(make(tmp_path / "b", pin_quoted=False), messages)
    assert unpinned[output_index(messages, 1)]["content"].startswith(VIEW_STUB_PREFIX)


def test_the_pin_ends_and_the_next_step_stubs_the_output(tmp_path):
    messages = session(20, {2: 1})  # quoted once, early; pin_turns 3
    # the quote pin alone: the working set (on by default) keeps a named output in sight by its own rule
    # (tests/context_engine/test_view_working_set.py)
    sent = shape(make(tmp_path, working_set=False), messages)
    assert sent[output_index(messages, 1)]["content"].startswith(VIEW_STUB_PREFIX)


def test_a_quote_pins_only_the_output_the_token_was_first_seen_in():
    index = QuoteIndex()
    messages = [
        {"role": "tool", "tool_call_id": "a", "content": "def parse_header(x): pass\n" * 30},
        {"role": "tool", "tool_call_id": "b", "content": "parse_header is called by read_frame\n" * 30},
        {"role": "assistant", "content": "Look at read_frame and parse_header.", "tool_calls": []},
    ]
    pins = index.pins(messages, lambda m: m.get("content"), lambda at: at + 10, min_chars=100)
    assert pins == {0: [(2, 12)], 1: [(2, 12)]}
    messages.insert(0, {"role": "user", "content": "The bug is in parse_header."})
    pins = index.pins(messages, lambda m: m.get("content"), lambda at: at + 10, min_chars=100)
    assert pins == {2: [(3, 13)]}  # parse_header came from the user, read_frame from output b


@st.composite
def quoted_sessions(draw: Any) -> tuple[int, dict[int, int], dict[int, int]]:
    steps = draw(st.integers(6, 16))
    quotes, edits = {}, {}
    for k in range(1, steps):
        choice = draw(st.sampled_from(["read", "quote", "edit"]))
        if choice == "quote":
            quotes[k] = draw(st.integers(0, k - 1))
        elif choice == "edit":
            edits[k] = draw(st.integers(0, k - 1))
    return steps, quotes, edits


KEPT = {"stub_lines_chars": 300, "stub_names": True, "pin_edited": True}  # stubs with lines, edit pins
PLAIN = {"stub_lines_chars": 0, "stub_names": False, "pin_edited": False}  # one-line stubs, whatever the defaults


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(quoted_sessions(), st.sampled_from([PLAIN, KEPT]))
def test_quote_pins_keep_prompt_cache_steps_and_the_same_bytes_everywhere(tmp_path_factory, spec, view):
    steps, quotes, edits = spec
    messages = session(steps, quotes, edits)
    engine = make(tmp_path_factory.mktemp("a"), **view)
    previous_sent, previous_steps = None, None
    stubbed: dict[str, str] = {}  # by call id: with view.collapse_steps a settled step leaves the request
    for end in range(4, len(messages) + 1, 2):
        sent = shape(engine, messages[:end])
        shown = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
        for cid, content in shown.items():
            if content.startswith(VIEW_STUB_PREFIX):
                stubbed.setdefault(cid, content)
        for cid, stub in stubbed.items():  # once stubbed, stubbed with the same bytes (or one line of a collapse)
            assert shown.get(cid, stub) == stub
        if previous_sent is not None and engine.state.view.stats.steps == previous_steps:
            assert json.dumps(sent[: len(previous_sent)]) == json.dumps(previous_sent)  # byte for byte
        previous_sent, previous_steps = sent, engine.state.view.stats.steps
    again = shape(make(tmp_path_factory.mktemp("b"), **view), [dict(m) for m in messages])
    assert json.dumps(again) == json.dumps(previous_sent)  # a pure function of the history
    at = {m.get("tool_call_id"): i for i, m in enumerate(messages)}
    for cid, stub in stubbed.items():  # with KEPT, the stub of a file read carries its def line
        command = json.loads(messages[at[cid] - 1]["tool_calls"][0]["function"]["arguments"])["command"]
        if command.startswith("cat src/module_"):
            k = command.removeprefix("cat src/module_").removesuffix(".py")
            assert (f"\ndefinitions (1):\ndef helper_{k}(value):\n" in stub) == (view == KEPT), stub
