"""The harness drives a real hermes-agent 0.19.0 ``AIAgent`` offline, proven
with the host's built-in compressor (``context.engine: compressor``)."""

from __future__ import annotations

import json

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import Scenario, run_scenario

pytestmark = pytest.mark.e2e

SUMMARY = "## Goal\nSUMMARY-MARKER-7 the user read notes.txt"


def warm_up(scenario: Scenario, turns: int = 5) -> Scenario:
    """Plain turns so the built-in compressor has something to compact
    (it refuses transcripts shorter than head + 4 messages)."""
    for i in range(turns):
        scenario.turn(f"warm-up turn {i}")
    return scenario


def test_plain_turn_gets_scripted_text(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    fake_llm.on(Match.user_turn("PING"), Reply.say("PONG-42"))

    result = run_scenario(hermes_home, Scenario().turn("PING please", id="t1"), check=True)

    assert result.step("t1")["final_response"] == "PONG-42"
    assert [m["role"] for m in result.final_messages] == ["user", "assistant"]
    assert result.engine["is_builtin"] and result.engine["class"] == "ContextCompressor"
    assert result.engine["name"] == "compressor"
    request = fake_llm.last_main_request()
    assert request.stream and request.body["stream_options"] == {"include_usage": True}
    assert request.model == "fake-model" and request.roles == ["system", "user"]
    assert "harness_echo" not in request.tool_names  # test plugin not enabled here
    assert result.network_attempts == []  # nothing tried to leave 127.0.0.1
    assert result.report["timings"]["import_run_agent_s"] > 0


def test_tool_calls_run_real_tools_and_results_reach_next_request(
    fake_llm: FakeLLMServer, hermes_home: HermesHome
) -> None:
    hermes_home.install_harness_probe()
    (hermes_home.work_dir / "notes.txt").write_text("NOTES-CONTENT-123\n")
    fake_llm.on(
        Match.user_turn("USE TOOLS"),
        Reply.tool(
            ToolCall("read_file", {"path": "notes.txt"}, id="call_read"),
            ToolCall("harness_echo", {"text": "ECHO-456"}, id="call_echo"),
        ),
    )
    fake_llm.on(Match.after_tool_result("call_echo"), Reply.say("both tools done"))

    result = run_scenario(hermes_home, Scenario().turn("USE TOOLS now", id="tools"), check=True)

    assert result.step("tools")["final_response"] == "both tools done"
    follow_up = fake_llm.last_main_request()
    assert "NOTES-CONTENT-123" in follow_up.tool_results["call_read"]
    assert json.loads(follow_up.tool_results["call_echo"]) == {"echo": "ECHO-456"}
    assert {"harness_echo", "harness_big_output", "read_file"} <= set(follow_up.tool_names)
    assert result.plugin("harness_probe")["source"] == "user"
    assert result.plugin("harness_probe")["enabled"] is True
    hooks = [e["hook"] for e in hermes_home.probe_events()]
    assert "transform_tool_result" in hooks and "pre_llm_call" in hooks
    roles = [m["role"] for m in result.final_messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]


def test_usage_over_threshold_triggers_builtin_compaction(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    (hermes_home.work_dir / "notes.txt").write_text("hello\n")
    # The tool-call response reports 100k prompt tokens (> 96k threshold of a
    # 128k window), so the post-tool check compacts before the follow-up call.
    fake_llm.on(
        Match.user_turn("BIG"),
        Reply.tool(ToolCall("read_file", {"path": "notes.txt"}), usage={"prompt_tokens": 100_000}),
    )
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))

    scenario = warm_up(Scenario()).turn("BIG read it", id="big")
    result = run_scenario(hermes_home, scenario, check=True)

    (summary_call,) = fake_llm.aux_requests()
    assert summary_call.roles == ["user"] and not summary_call.stream and not summary_call.tools
    assert "warm-up turn" in summary_call.text
    after = fake_llm.main_requests()[-1]  # the follow-up after the tool ran
    assert after.index > summary_call.index and "SUMMARY-MARKER-7" in after.text
    big = result.step("big")
    assert big["engine"]["compression_count"] == 1
    assert big["engine"]["attrs"]["threshold_tokens"] == 96_000
    assert any("Compacting context" in s for s in result.statuses())
    assert any("SUMMARY-MARKER-7" in json.dumps(m) for m in big["messages"])


def test_manual_compress_with_focus_topic(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    fake_llm.on(Match.summary_request(contains='FOCUS TOPIC: "database schema"'), Reply.say(SUMMARY))

    scenario = warm_up(Scenario(), turns=6).compress(focus="database schema", id="manual").turn("after", id="after")
    result = run_scenario(hermes_home, scenario, check=True)

    manual = result.step("manual")
    assert manual["messages_after"] < manual["messages_before"] == 12
    assert manual["engine"]["compression_count"] == 1
    assert len(fake_llm.summary_requests()) == 1
    assert "SUMMARY-MARKER-7" in fake_llm.last_main_request().text
    assert result.step("after")["final_response"] == "OK (default reply)"


def test_end_session_and_resume_from_state_db(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    fake_llm.on(Match.user_turn("REMEMBER"), Reply.say("noted ZEBRA-9"))
    scenario = (
        Scenario()
        .turn("REMEMBER zebra")
        .end_session(id="end")
        .new_agent(history="db", id="resume")
        .turn("what did I say?", id="again")
    )
    result = run_scenario(hermes_home, scenario, check=True)

    first, second = result.agents
    assert first["session_id"] == second["session_id"]
    assert result.step("resume")["history_len"] == 2
    assert "ZEBRA-9" in fake_llm.last_main_request().text  # history reloaded from state.db
    assert second["engine"]["id"] != first["engine"]["id"]


def test_summary_failure_is_reported_as_host_warning(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(config={"auxiliary": {"transient_retries": 0}})
    (home.work_dir / "notes.txt").write_text("hello\n")
    fake_llm.on(
        Match.user_turn("BIG"),
        Reply.tool(ToolCall("read_file", {"path": "notes.txt"}), usage={"prompt_tokens": 100_000}),
    )
    fake_llm.on(Match.aux(), Reply.http_error(500, "summary backend down"), times=None)

    result = run_scenario(home, warm_up(Scenario()).turn("BIG", id="big"), check=True)

    assert len(fake_llm.aux_requests()) == 1  # transient_retries: 0 -> a single attempt
    (warning,) = [w for w in result.warnings() if "Compression summary failed" in w]
    assert "summary backend down" in warning
    assert result.step("big")["final_response"] == "OK (default reply)"


def test_main_call_error_surfaces_in_turn_result(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(config={"agent": {"api_max_retries": 1}})
    fake_llm.on(Match.main(), Reply.http_error(500, "model exploded"), times=None)

    result = run_scenario(home, Scenario().turn("hi", id="t"), check=True)

    step = result.step("t")
    assert step["result"]["failed"] is True and "model exploded" in step["result"]["error"]
    assert len(fake_llm.main_requests()) == 1
    assert any("API failed after 1 retries" in s for s in result.statuses())


def test_resume_in_a_new_process(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    fake_llm.on(Match.user_turn("REMEMBER"), Reply.say("noted OKAPI-3"))
    first = run_scenario(hermes_home, Scenario().turn("REMEMBER okapi").end_session(), check=True)
    session_id = first.agents[0]["session_id"]

    second = run_scenario(hermes_home, Scenario(resume_session=session_id).turn("and now?"), check=True)

    assert second.agents[0]["session_id"] == session_id
    assert [m["role"] for m in second.final_messages] == ["user", "assistant"] * 2
    assert "OKAPI-3" in fake_llm.last_main_request().text
