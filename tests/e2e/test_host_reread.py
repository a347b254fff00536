"""Driven as the ``hermes`` CLI drives the host, on every Hermes of the matrix (``python3 run.py hosts``).

The CLI passes its session id as ``task_id`` to every turn, so per-task host
state persists across turns: the host's read dedup (0.13.0 and newer) answers
a second ``read_file`` of an unchanged file with ``{"status": "unchanged"}``
("refer to the earlier result") and a third with BLOCKED, until a compaction
resets it.  When Stowage's lean view has stubbed the earlier read, the model
would be told to refer to content it cannot see: Stowage answers the re-read
with the earlier output instead (``stowage.context_engine.view.reread``).

Also here: a terminal output spilled, parallel tool calls, and the lean view
through ``select_context`` on the hosts that call it (0.20+).
"""

from __future__ import annotations

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.host.host_support import assess, installed_version
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, chat_once, run_scenario

from .stowage_session import OUTPUT_CHARS, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

VERSION = installed_version()
SUPPORT = assess(VERSION)
# the lean view reaches requests through the llm_request middleware (0.17+) or select_context (0.20+)
HAS_VIEW = not any("tool search" in m for m in SUPPORT.missing)
MARKER = "REREAD-MARKER-7f3a"
NOTES = (
    "\n".join(f"line {i:03d}: the configuration value of module {i} is {i * 7}" for i in range(120)) + f"\n{MARKER}\n"
)
# small view budgets: an output leaves the hot zone after one filler turn and is stubbed at the next step
VIEW = {"view": {"hot_tokens": 1000, "step_tokens": 1000}}


def _reads(fake_llm: FakeLLMServer, path: str, call_id: str, marker: str, *, with_search: bool = False) -> None:
    calls = [ToolCall("read_file", {"path": path}, id=call_id)]
    if with_search:  # a parallel batch, as models send it: the host runs read-only tools concurrently
        calls.append(
            ToolCall(
                "search_files", {"pattern": "module 7 ", "path": str(path).rsplit("/", 1)[0]}, id=f"{call_id}_search"
            )
        )
    fake_llm.on(Match.user_turn(marker), Reply.tool(*calls))
    fake_llm.on(Match.after_tool_result(call_id), Reply.say(f"{marker} read"))


def _fillers(fake_llm: FakeLLMServer, scenario: Scenario, count: int) -> Scenario:
    """``count`` turns ``FILL-<i>`` of one big output each (call ids ``call_fill_<i>``)."""
    script_warm_up(fake_llm, count, prefix="FILL")
    return warm_up(scenario, count, prefix="FILL", secret_turn=None)


def _tool_text(messages: list[dict], call_id: str) -> str:
    for message in messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    raise AssertionError(f"no tool result {call_id} in {[m.get('role') for m in messages]}")


def test_a_reread_of_a_read_the_view_stubbed_gets_the_content(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": VIEW})
    notes = home.work_dir / "notes.txt"
    notes.write_text(NOTES)
    _reads(fake_llm, str(notes), "call_read_1", "READ-1", with_search=True)
    _reads(fake_llm, str(notes), "call_read_2", "READ-2")
    _reads(fake_llm, str(notes), "call_read_3", "READ-3")

    scenario = Scenario(cli_task_id=True).turn("READ-1 the notes", id="read1")
    _fillers(fake_llm, scenario, 3)
    scenario.turn("READ-2 the notes again", id="read2").turn("READ-3 once more", id="read3")
    result = run_scenario(home, scenario, check=True)

    first = fake_llm.matching(Match.after_tool_result("call_read_1"))[0]
    assert MARKER in first.tool_results["call_read_1"]
    assert "module 7 " in first.tool_results["call_read_1_search"]  # the parallel search ran too
    second = fake_llm.matching(Match.after_tool_result("call_read_2"))[0]
    saved = result.step("read3")["messages"]
    if HAS_VIEW:
        # the request that asked for the re-read carried the first read as a stub ...
        assert MARKER not in _tool_text(second.messages, "call_read_1"), "the view did not stub the first read"
        # ... so the re-read brings the content, not the host's "unchanged"
        assert MARKER in second.tool_results["call_read_2"], second.tool_results["call_read_2"]
        assert MARKER in _tool_text(saved, "call_read_2")  # kept in the history
    else:
        # no view on this host: the first read is still in the request, the host's dedup answer is right
        assert MARKER in _tool_text(second.messages, "call_read_1")
        assert '"unchanged"' in second.tool_results["call_read_2"]
    assert MARKER in _tool_text(saved, "call_read_1")  # the history itself is never stubbed
    third = fake_llm.matching(Match.after_tool_result("call_read_3"))[0]
    answer = third.tool_results["call_read_3"]
    # the third read: the content, or the host's own answer while an earlier read stays in the request
    # (a read_file call pins the earlier outputs of its region in the view)
    visible = any(MARKER in _tool_text(third.messages, cid) for cid in ("call_read_1", "call_read_2"))
    assert (MARKER in answer) or visible, answer
    if HAS_VIEW:
        assert MARKER in _tool_text(third.messages, "call_read_2"), "the re-read's content was stubbed right away"


def test_a_reread_after_a_compaction_gets_the_content(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"compaction": {"prepare_at": 0}}})  # compact at the trigger
    notes = home.work_dir / "notes.txt"
    notes.write_text(NOTES)
    _reads(fake_llm, str(notes), "call_read_1", "READ-1")
    _reads(fake_llm, str(notes), "call_read_2", "READ-2")
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nread the notes\n\n## Progress\n- read (SUMMARY-OK)"))
    fake_llm.on(
        Match.user_turn("BIG"),
        Reply.tool(ToolCall("harness_echo", {"text": "BIG"}, id="call_big"), usage={"prompt_tokens": 100_000}),
    )
    fake_llm.on(Match.after_tool_result("call_big"), Reply.say("BIG finished"))

    scenario = Scenario(cli_task_id=True).turn("READ-1 the notes", id="read1")
    _fillers(fake_llm, scenario, 4)
    scenario.turn("BIG now", id="big").turn("READ-2 the notes again", id="read2")
    result = run_scenario(home, scenario, check=True)

    status = result.step("big")["engine"]["status"]
    assert status["compression_count"] >= 1, status
    second = fake_llm.matching(Match.after_tool_result("call_read_2"))[0]
    assert "SUMMARY-OK" in second.text  # the request is the compacted one
    assert not any(
        MARKER in str(m.get("content")) for m in second.messages if m.get("tool_call_id") == "call_read_1"
    ), "the first read survived the compaction whole"
    assert MARKER in second.tool_results["call_read_2"], second.tool_results["call_read_2"]


def test_a_large_terminal_output_is_spilled(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    command = "for i in $(seq 1 400); do printf 'row %066d\\n' $i; done"  # 400 lines of 70 characters
    fake_llm.on(Match.user_turn("TERM"), Reply.tool(ToolCall("terminal", {"command": command}, id="call_term")))
    fake_llm.on(Match.after_tool_result("call_term"), Reply.say("seen"))
    result = run_scenario(home, Scenario(cli_task_id=True).turn("TERM run it", id="term").probe(id="after"), check=True)

    preview = fake_llm.matching(Match.after_tool_result("call_term"))[0].tool_results["call_term"]
    assert preview.startswith("[stowage: preview of a large tool output"), preview[:300]
    assert len(preview) < 12_000
    assert result.step("after")["engine"]["status"]["store"]["spills"] == 1


def test_a_large_terminal_output_is_spilled_in_the_cli(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    command = 'for i in $(seq 1 400); do echo "$i $(echo $i | sha256sum | head -c 64)"; done'  # 400 x ~70 chars
    fake_llm.on(Match.user_turn("TERM"), Reply.tool(ToolCall("terminal", {"command": command}, id="call_term")))
    fake_llm.on(Match.after_tool_result("call_term"), Reply.say("TERM-SEEN"))

    result = chat_once(home, "TERM run it", "-Q").check()

    assert "TERM-SEEN" in result.stdout
    preview = fake_llm.matching(Match.after_tool_result("call_term"))[0].tool_results["call_term"]
    assert preview.startswith("[stowage: preview of a large tool output"), preview[:300]
    assert len(preview) < 12_000


@pytest.mark.skipif(
    not hasattr(__import__("agent.context_engine", fromlist=["ContextEngine"]).ContextEngine, "select_context"),
    reason="this host has no select_context hook (before 0.20)",
)
def test_the_lean_view_through_select_context(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": VIEW})
    scenario = Scenario(cli_task_id=True)
    _fillers(fake_llm, scenario, 4)
    fake_llm.on(Match.user_turn("LAST"), Reply.say("done"))
    result = run_scenario(home, scenario.turn("LAST one", id="last"), check=True)

    request = fake_llm.matching(Match.user_turn("LAST"))[0]
    first = _tool_text(request.messages, "call_fill_0")
    assert first.startswith(VIEW_STUB_PREFIX) and "stowage_fetch(handle=" in first, first[:300]
    saved = result.step("last")["messages"]
    assert len(_tool_text(saved, "call_fill_0")) >= OUTPUT_CHARS // 2  # the history keeps it whole


# Right before a turn: the host's own figure for its turn-start preflight (the whole history and the new message,
# agent/turn_context.py), and a trigger set between it and what the view sends.
PREFLIGHT_SETUP = """
from agent.model_metadata import estimate_request_tokens_rough
upcoming = list(history) + [{"role": "user", "content": "NEXT turn please"}]
whole = estimate_request_tokens_rough(
    upcoming, system_prompt=agent._cached_system_prompt or "", tools=agent.tools or None
)
saved = engine.state.view.stats.last_request.saved_tokens if engine.state.view.stats.last_request else 0
engine.threshold_tokens = whole - saved // 2
result = {"whole": whole, "saved": saved, "threshold": engine.threshold_tokens}
"""


@pytest.mark.skipif(not HAS_VIEW, reason="no lean view on this host: every request carries the whole history")
def test_the_turn_preflight_follows_the_request_sent(fake_llm: FakeLLMServer, make_home) -> None:
    """Issue 31: 0.20.1's turn-start preflight counts the whole history while select_context sends less; a
    compaction fired at 48k estimated tokens for a ~33k request.  No summary for tokens never sent."""
    home = stowage_home(make_home, config={"stowage": VIEW})
    scenario = Scenario(cli_task_id=True)
    _fillers(fake_llm, scenario, 6)
    fake_llm.on(Match.user_turn("NEXT"), Reply.say("done"))
    scenario.python(PREFLIGHT_SETUP, id="setup").turn("NEXT turn please", id="next")
    result = run_scenario(home, scenario, check=True)

    figures = result.step("setup")["result"]
    print("preflight figures:", figures, "sent:", result.step("next")["engine"]["status"]["requests"][-1])
    assert figures["saved"] > 4000 and figures["whole"] >= figures["threshold"], figures  # the preflight's figure
    sent = fake_llm.matching(Match.user_turn("NEXT"))
    assert len(sent) == 1 and sent[0].messages[-1]["content"] == "NEXT turn please"
    status = result.step("next")["engine"]["status"]
    assert status["threshold_tokens"] == figures["threshold"], status  # the trigger held through the turn
    assert fake_llm.summary_requests() == [] and status["compression_count"] == 0, status.get("last_compaction")
    assert status["requests"][-1]["sent"] < figures["threshold"], status["requests"][-1]
