"""Collapsed steps and condensed answers through the real host.

One short session with ``view.collapse_steps`` and ``view.condense_answers``
on (set here, whatever the defaults): a first turn gets a long answer, then
one turn chains twelve ``harness_big_output`` steps.  Once a view step has
settled several of them, the requests carry them as one message with a line
per step; the model reads a handle off a line and fetches it.  Checked: the
request carries the collapse, it is valid for a strict provider, each request
extends the one before it unless a view step changed it (first at a stub, a
condensed message or a collapse), the earlier answer is sent condensed, the
history the host keeps is whole, and the fetched handle gives back the
original output.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from stowage.context_engine.chat.markers import REASONING_MARK, VIEW_STUB_PREFIX
from stowage.context_engine.view.collapse import COLLAPSE_MARK
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.plugins.harness_probe import big_output
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, stowage_home

pytestmark = pytest.mark.e2e

STEPS = 12
CHARS = 3000
VIEW = {"hot_tokens": 1000, "step_tokens": 3000, "pin_turns": 2, "collapse_steps": True, "condense_answers": True}
LINE = re.compile(r'^(\d+)\. harness_big_output: .*"token": "(S\d+)".* handle ([0-9a-f]{16,64})$', re.M)
ANSWER = "The plan: " + " ".join(f"point {i} of the long first answer, about the parser's header" for i in range(12))


def _collapsed(request: Any) -> list[str]:
    return [
        m["content"]
        for m in request.messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"].startswith(COLLAPSE_MARK)
    ]


def test_settled_steps_reach_the_model_as_lines_whose_handles_read_the_outputs_back(
    fake_llm: FakeLLMServer, make_home
) -> None:
    home = stowage_home(make_home, config={"stowage": {"view": VIEW}})
    fake_llm.on(Match.user_turn("PLAN"), Reply.say(ANSWER))
    fake_llm.on(
        Match.user_turn("WORK"),
        Reply.tool(ToolCall("harness_big_output", {"chars": CHARS, "token": "S0"}, id="call_s_0"), text="start"),
    )
    for i in range(1, STEPS):
        fake_llm.on(
            Match.after_tool_result(f"call_s_{i - 1}"),
            Reply.tool(
                ToolCall("harness_big_output", {"chars": CHARS, "token": f"S{i}"}, id=f"call_s_{i}"), text=f"part {i}"
            ),
        )
    fetched: dict[str, str] = {}

    def fetch_a_line(request: Any) -> Reply:  # the model reads a handle off a line of the collapse it sees
        _, token, handle = LINE.findall(_collapsed(request)[0])[0]
        fetched["token"] = token
        return Reply.tool(ToolCall("stowage_fetch", {"handle": handle, "mode": "full"}, id="call_fetch"))

    fake_llm.on(Match.after_tool_result(f"call_s_{STEPS - 1}"), fetch_a_line)
    fake_llm.on(Match.after_tool_result("call_fetch"), Reply.say("all parts read"))
    scenario = Scenario(cli_task_id=True, agent={"max_iterations": STEPS + 4})  # the harness default is 8
    result = run_scenario(home, scenario.turn("PLAN the fix").turn("WORK through the parts"), check=True)

    requests = fake_llm.main_requests()
    for request in requests:
        assert_valid_request(request)  # every call answered right after it, no orphan result, roles alternate
    collapsing = [r for r in requests if _collapsed(r)]
    assert collapsing, [r.summary() for r in requests]
    breaks = 0  # a request extends the one before it, or a view step changed it first where it stubbed or collapsed
    for before, after in zip(requests, requests[1:], strict=False):
        if after.messages[: len(before.messages)] != before.messages:
            breaks += 1
            first = next(i for i, (a, b) in enumerate(zip(before.messages, after.messages, strict=False)) if a != b)
            changed = str(after.messages[first].get("content"))
            assert changed.startswith((VIEW_STUB_PREFIX, COLLAPSE_MARK)) or REASONING_MARK in changed, changed[:200]
    assert 1 <= breaks <= len(requests) // 2
    last = requests[-1]
    lines = []
    for collapse in _collapsed(last):  # one message per run (the steps one view step settled)
        numbered = LINE.findall(collapse)
        assert len(numbered) >= 2 and [int(n) for n, _, _ in numbered] == list(range(1, len(numbered) + 1)), collapse
        lines += numbered
    sent_ids = {m.get("tool_call_id") for m in last.messages if m.get("role") == "tool"}
    assert {f"call_s_{token[1:]}" for _, token, _ in lines}.isdisjoint(sent_ids)  # a line, not a message
    assert any(ANSWER[:60] in (m.get("content") or "") and REASONING_MARK in m["content"] for m in last.messages)

    # The history the host keeps is whole: every output verbatim, the answer whole, no line of the view.
    kept = result.final_messages
    outputs = {m["tool_call_id"]: m["content"] for m in kept if m.get("role") == "tool"}
    for i in range(STEPS):
        assert outputs[f"call_s_{i}"] == big_output(CHARS, f"S{i}")
    assert any(m.get("content") == ANSWER for m in kept)
    assert not any(COLLAPSE_MARK in str(m.get("content")) for m in kept)

    # The handle the model took off a line reads back the original output.
    reply = json.loads(outputs["call_fetch"])
    token = fetched["token"]
    assert reply["text"] == big_output(CHARS, token), reply


SHORT = 300  # under view.min_chars (800 by default): the view never stubs such an output


def test_a_short_output_in_a_collapsed_step_reaches_the_model_whole_in_its_line(
    fake_llm: FakeLLMServer, make_home
) -> None:
    """Every other step prints a short output (a ``sed -n`` of a few lines, say): once its step is folded into
    a line, the line quotes it whole, with its lines, rather than a handle to fetch."""
    home = stowage_home(make_home, config={"stowage": {"view": VIEW}})
    sizes = [CHARS if i % 2 == 0 else SHORT for i in range(STEPS)]
    fake_llm.on(
        Match.user_turn("WORK"),
        Reply.tool(ToolCall("harness_big_output", {"chars": sizes[0], "token": "S0"}, id="call_s_0"), text="start"),
    )
    for i in range(1, STEPS):
        fake_llm.on(
            Match.after_tool_result(f"call_s_{i - 1}"),
            Reply.tool(
                ToolCall("harness_big_output", {"chars": sizes[i], "token": f"S{i}"}, id=f"call_s_{i}"),
                text=f"part {i}",
            ),
        )
    fake_llm.on(Match.after_tool_result(f"call_s_{STEPS - 1}"), Reply.say("all parts read"))
    scenario = Scenario(cli_task_id=True, agent={"max_iterations": STEPS + 4})
    run_scenario(home, scenario.turn("WORK through the parts"), check=True)

    last = fake_llm.main_requests()[-1]
    assert_valid_request(last)
    lines = "\n".join(_collapsed(last))
    sent_ids = {m.get("tool_call_id") for m in last.messages if m.get("role") == "tool"}
    folded_short = [i for i in range(1, STEPS, 2) if f'"token": "S{i}"' in lines and f"call_s_{i}" not in sent_ids]
    folded_long = [i for i in range(0, STEPS, 2) if f'"token": "S{i}"' in lines and f"call_s_{i}" not in sent_ids]
    assert folded_short and folded_long, lines
    for i in folded_short:  # quoted whole, newlines and all
        assert f"-> {big_output(SHORT, f'S{i}')}" in lines
    for i in folded_long:  # a long output is a handle on its line, as before
        assert f"END-S{i}" not in lines  # the output's last line (every output begins with the same lines)
        assert re.search(rf'"token": "S{i}".* handle [0-9a-f]{{16,64}}$', lines, re.M), lines
