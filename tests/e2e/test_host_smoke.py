"""The end-to-end smoke every supported Hermes must pass (CI: 0.13.0, 0.17.0, 0.18.2, 0.19.0, 0.20.1, 0.22.2).

``python3 run.py hosts`` runs this module in one venv per host of the matrix
(``.venv-hermes-<version>``); the full suite runs it on 0.19.0.  Each test
reads what the running host can do from ``stowage.host.host_support`` instead of
assuming the newest: identity, spill, a genuine compaction with a real summary
request, a failing summarizer, tool search where the host has middleware, and
the shared-engine case of hosts before 0.18.0 (a review agent started
mid-session moves nothing).
"""

from __future__ import annotations

import json

import pytest

from stowage.host.host_support import assess, installed_version
from stowage.tool_search import BRIDGE_NAMES
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

VERSION = installed_version()
SUPPORT = assess(VERSION)
HAS_MIDDLEWARE = not any("tool search" in m for m in SUPPORT.missing)
SUMMARY = (
    "## Goal\nInspect the big outputs (SMOKE-SUMMARY).\n\n## Progress\n### Done\n- inspected\n\n## Next Steps\n- go on"
)
SPILL_CHARS = 200_000

REVIEW_AGENT = """
import threading
from run_agent import AIAgent
box = {}
def review():
    other = AIAgent(**runner.agent_kwargs({"session_db": False}))
    box["shared"] = other.context_compressor is engine
    box["session"] = other.session_id
    state["review"] = other
worker = threading.Thread(target=review)
worker.start()
worker.join()
result = {"shared": box["shared"], "review_session": box["session"], "engine_session": engine.session_id,
          "main_session": agent.session_id, "store_session": engine.store_session.session_id}
"""
END_REVIEW = """
import threading
other = state["review"]
worker = threading.Thread(target=lambda: other.shutdown_memory_provider([]))
worker.start()
worker.join()
result = engine.session_id
"""


def test_stowage_is_the_running_engine_and_knows_the_host(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))
    result = run_scenario(home, Scenario().turn("HELLO", id="t"), check=True)

    engine = result.engine
    assert engine["class"] == "StowageContextEngine" and not engine["is_builtin"], engine
    assert engine["module"].endswith("stowage.host.hermes_engine")
    assert result.step("t")["final_response"] == "hi there"
    host = result.step("t")["engine"]["status"]["host"]
    assert host["hermes"] == (VERSION or "unknown") and host["supported"] is True
    assert not any("falling back to built-in" in line for line in result.logs())


def test_a_large_output_is_spilled_even_after_a_review_agent_starts(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi"))
    fake_llm.on(
        Match.user_turn("SPILL"),
        Reply.tool(ToolCall("harness_big_output", {"chars": SPILL_CHARS, "token": "SPILL"}, id="call_big")),
    )
    fake_llm.on(Match.after_tool_result("call_big"), Reply.say("seen"))

    scenario = (
        Scenario()
        .turn("HELLO", id="hello")
        .python(REVIEW_AGENT, id="review")
        .turn("SPILL it", id="spill")
        .python(END_REVIEW, id="end_review")
        .probe(id="after")
    )
    result = run_scenario(home, scenario, check=True)

    review = result.step("review")["result"]
    # hosts before 0.18.0 hand the same engine object to the review agent; later ones a copy
    assert review["shared"] is (
        VERSION is not None and SUPPORT.supported and any("one engine copy per agent" in m for m in SUPPORT.missing)
    )
    assert review["engine_session"] == review["main_session"] == review["store_session"]
    preview = fake_llm.matching(Match.after_tool_result("call_big"))[0].tool_results["call_big"]
    assert preview.startswith("[stowage: preview of a large tool output")
    assert result.step("end_review")["result"] == review["main_session"]
    assert result.step("after")["engine"]["status"]["store"]["spills"] == 1


def test_a_genuine_compaction_asks_the_summary_model(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))

    result = run_scenario(home, warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after", id="after"), check=True)

    assert len(fake_llm.summary_requests()) == 1
    status = result.step("big")["engine"]["status"]
    assert status["compression_count"] == 1 and status["last_compaction"]["result"] == "compacted", status
    # the compaction's result is kept: the next request is the compacted one (0.20.1 once threw it away)
    before = [r for r in result.step_requests(fake_llm, "big") if r.is_main][0]
    after = [r for r in result.step_requests(fake_llm, "after") if r.is_main][0]
    assert "SMOKE-SUMMARY" in after.text and len(after.messages) < len(before.messages), (
        len(before.messages),
        len(after.messages),
    )
    assert result.step("after")["final_response"]  # and the turn after it does not crash


def test_a_failing_summarizer_falls_back_and_the_session_goes_on(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.http_error(500, "upstream exploded"), times=None)

    result = run_scenario(home, warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after", id="after"), check=True)

    assert fake_llm.summary_requests(), "the summary model was asked"
    last = result.step("big")["engine"]["status"]["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith("http"), last
    assert "STOWAGE CONTEXT SUMMARY" in fake_llm.last_main_request().text
    assert result.step("after")["final_response"] == "OK (default reply)"


def test_tool_search_where_the_host_has_middleware(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"tool_search": {"enabled": "on"}}})
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi"))
    result = run_scenario(home, Scenario().turn("HELLO", id="t"), check=True)

    offered = set(fake_llm.main_requests()[0].tool_names)
    status = result.step("t")["engine"]["status"]["tool_search"]
    if HAS_MIDDLEWARE:
        assert set(BRIDGE_NAMES) <= offered and "harness_echo" not in offered  # deferred behind the bridges
        assert status["active"] is True, status
    else:
        assert not offered & set(BRIDGE_NAMES) and "harness_echo" in offered
        assert status["available"] is False and "needs 0.17.0" in status["reason"], status
        assert any("not available on this host (needs 0.17.0)" in line for line in result.logs()), result.logs()
    json.dumps(status)
