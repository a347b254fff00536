"""The end-to-end smoke every supported Hermes must pass (CI: 0.13.0, 0.17.0, 0.18.2, 0.19.0, 0.20.1, 0.22.2).

``python3 run.py hosts`` runs this module in one venv per host of the matrix
(``.venv-hermes-<version>``); the full suite runs it on 0.19.0.  Each test
reads what the running host can do from ``stowage.host.host_support`` instead of
assuming the newest: identity, spill, a genuine compaction with a real summary
request, a failing summarizer, tool search where the host has middleware, and
the shared-engine case of hosts before 0.18.0 (the host's own review agent,
which ends its parent's session id, moves nothing).
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

# The host's own background review, as it runs after a turn (0.13.0 run_agent._spawn_background_review, 0.17.0+
# agent/background_review.py): on its own thread an AIAgent is built, given the parent's session id, runs the
# review prompt, and its shutdown_memory_provider() calls on_session_end(<the parent's session id>).
HOST_REVIEW = """
import threading
from stowage.host import sessions
before = {t.ident for t in threading.enumerate() if t.name == "bg-review"}
made = []
start_guest = engine.sharing.guest_for_start
def spy(*args, **kwargs):
    guest = start_guest(*args, **kwargs)
    made.append(guest is not None)
    return guest
engine.sharing.guest_for_start = spy  # on a shared engine, the review agent's session start reaches this object
agent._spawn_background_review(list(history), review_memory=True)
for worker in [t for t in threading.enumerate() if t.name == "bg-review" and t.ident not in before]:
    worker.join(120)
del engine.sharing.guest_for_start
result = {"main_session": agent.session_id, "engine_session": engine.session_id,
          "store_session": engine.state.store.session_id, "bound": sessions.engine_for(agent.session_id) is engine,
          "guests_left": engine.sharing.has_guests, "review_got_a_guest": any(made)}
"""
REVIEW_PROMPT_MARK = "You can only call "  # then "memory and skill" or (0.22, memory off) "skill" management tools


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


def test_spill_and_grep_keep_working_after_the_hosts_review_agents(fake_llm: FakeLLMServer, make_home) -> None:
    """Issue 31: on 0.13.0 and 0.17.0 the review agent shares the engine and ends the parent's session id; the
    main session must stay live: later outputs spilled, the store session unmoved, grep finding every output."""
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi"))
    for n in (1, 2):
        fake_llm.on(
            Match.user_turn(f"SPILLNOW{n}"),
            Reply.tool(ToolCall("harness_big_output", {"chars": SPILL_CHARS, "token": f"OUT{n}"}, id=f"call_big{n}")),
        )
        fake_llm.on(Match.after_tool_result(f"call_big{n}"), Reply.say("seen"))
    fake_llm.on(
        Match.user_turn("GREPNOW"), Reply.tool(ToolCall("stowage_grep", {"pattern": "END-OUT"}, id="call_grep"))
    )
    fake_llm.on(Match.after_tool_result("call_grep"), Reply.say("found"))

    scenario = (
        Scenario()
        .turn("HELLO", id="hello")
        .python(HOST_REVIEW, id="review1")
        .turn("SPILLNOW1 please", id="spill1")
        .python(HOST_REVIEW, id="review2")
        .turn("SPILLNOW2 please", id="spill2")
        .python(HOST_REVIEW, id="review3")
        .turn("GREPNOW please", id="grep")
        .probe(id="after")
    )
    result = run_scenario(home, scenario, check=True)

    reviews = [r for r in fake_llm.requests() if r.is_chat and REVIEW_PROMPT_MARK in r.last_user_text]
    assert len(reviews) == 3, "each host review agent asked the model"
    # hosts before 0.18.0 hand the same engine object to the review agent (it gets a guest); later ones a copy
    shared = VERSION is not None and any("one engine copy per agent" in m for m in SUPPORT.missing)
    for step in ("review1", "review2", "review3"):
        review = result.step(step)["result"]
        assert review["review_got_a_guest"] is shared, review
        assert review["engine_session"] == review["store_session"] == review["main_session"], review
        assert review["bound"] and not review["guests_left"], review
    for n in (1, 2):
        preview = fake_llm.matching(Match.after_tool_result(f"call_big{n}"))[0].tool_results[f"call_big{n}"]
        assert preview.startswith("[stowage: preview of a large tool output"), preview[:200]
    found = json.loads(fake_llm.matching(Match.after_tool_result("call_grep"))[0].tool_results["call_grep"])
    assert found["searched"] == found["of"] >= 2, found
    spilled = [m for r in found["results"] if r["kind"] == "spill" for m in ("OUT1", "OUT2") if f"END-{m}" in r["text"]]
    assert sorted(spilled) == ["OUT1", "OUT2"], found
    assert result.step("after")["engine"]["status"]["store"]["spills"] == 2


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
