"""The end-to-end smoke every supported Hermes must pass (CI: 0.13.0, 0.17.0, 0.18.2, 0.19.0, 0.20.1, 0.22.2).

``python3 run.py hosts`` runs this module in one venv per host of the matrix
(``.venv-hermes-<version>``); the full suite runs it on 0.19.0.  Each test
reads what the running host can do from ``stowage.host.host_support`` instead of
assuming the newest: identity, spill, a genuine compaction with a real summary
request, a failing summarizer, tool search where the host has middleware, and
the shared-engine case of hosts before 0.18.0 (the host's own review agent,
which ends its parent's session id, and a ``delegate_task`` subagent, built on
its parent's thread and run on another, move nothing).
"""

from __future__ import annotations

import json

import pytest

from stowage.host.host_support import assess, installed_version
from stowage.tool_search import BRIDGE_NAMES
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import MID_TURN, assert_valid_request, script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

VERSION = installed_version()
SUPPORT = assess(VERSION)
HAS_MIDDLEWARE = not any("tool search" in m for m in SUPPORT.missing)
SUMMARY = (
    "## Goal\nInspect the big outputs (SMOKE-SUMMARY).\n\n## Progress\n### Done\n- inspected\n\n## Next Steps\n- go on"
)
SPILL_CHARS = 200_000
# summaries prepared ahead off: the compaction comes at the trigger, with the model's call in it (with them on, a
# single step over the trigger lets the turn go on: test_a_jump_over_the_trigger_does_not_block_the_turn)
AT_THE_TRIGGER = {"stowage": {"compaction": {"prepare_at": 0}}}

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

# delegate_task as the host runs it: the subagent is built on the parent's turn thread (its session starts there),
# runs on a worker thread, is closed, and never ends its engine session itself; then the host fires subagent_stop
# (0.17.0+ name the child).  0.18.2+ run a top-level delegation in the background: wait for it.  The spies see
# which engine each session binds and which store sessions end.
CHILD_SPY = """
from stowage.host import sessions
state["real_bind"], state["bound"], state["ended"] = sessions.bind, [], []
def bind(session_id, eng):
    state["bound"].append((session_id, eng))
    state["real_bind"](session_id, eng)
sessions.bind = bind
store = engine.state.store.store
state["real_end"] = store.mark_session_ended
def mark_session_ended(session_id):
    state["ended"].append(session_id)
    state["real_end"](session_id)
store.mark_session_ended = mark_session_ended
"""
DELEGATE_ON_OWN_THREAD = """
import threading
done = {}
worker = threading.Thread(target=lambda: done.update(agent.run_conversation("DELEGATE please",
                          conversation_history=list(history))), name="cli-turn")
worker.start()
worker.join(300)
history = done["messages"]
result = {"final_response": done.get("final_response")}
"""
CHILD_DONE = """
import time
from stowage.host import sessions
try:
    from tools.async_delegation import active_count
except ImportError:  # 0.13.0: no background delegation (delegate_task returns when its subagents are done)
    active_count = lambda: 0
deadline = time.monotonic() + 120
while active_count() and time.monotonic() < deadline:
    time.sleep(0.05)
sessions.bind = state.pop("real_bind")
del engine.state.store.store.mark_session_ended
children = [(sid, eng) for sid, eng in state["bound"] if sid != agent.session_id]
state["child"] = children[0][0] if children else None
result = {"children": [sid for sid, _ in children], "child_engine_is_main": any(e is engine for _, e in children),
          "child_store": [e.state.store.session_id for _, e in children], "ended": state["ended"],
          "main_session": agent.session_id, "engine_session": engine.session_id,
          "store_session": engine.state.store.session_id, "bound": sessions.engine_for(agent.session_id) is engine,
          "child_bound": [sessions.engine_for(sid) is not None for sid, _ in children],
          "guests_left": engine.sharing.has_guests, "main_usage": engine.last_prompt_tokens}
"""
PARENT_USAGE, CHILD_USAGE = 12_345, 33_333
CHILD_TURN = Match.turn_start() & Match.last_user_contains("CHILDGOAL")  # 0.20.1's subagent does not stream
# Where the child's outputs are: under the child's session, readable by that session (a fresh engine opening it).
CHILD_STORE = """
import json
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.host.host_config import hermes_home, load_user_settings
reader = StowageEngineCore(load_user_settings()[0])
reader.attach_store_home(hermes_home())
reader.update_model("m", 128_000)
reader.on_session_start(state["child"], hermes_home=str(hermes_home()))
result = json.loads(reader.handle_tool_call("stowage_grep", {"pattern": "END-", "literal": True}))
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


@pytest.mark.parametrize("turn_thread", ["start", "own"], ids=["turn on the start thread", "turn on its own thread"])
def test_a_delegated_subagent_leaves_the_parent_session_whole(
    fake_llm: FakeLLMServer, make_home, turn_thread: str
) -> None:
    """Issue 31: on 0.13.0-0.17.0 a delegate_task subagent shares the engine, starts its session on the parent's
    turn thread (``hermes chat -q``: the thread the parent started on; the interactive CLI: a thread per turn)
    and runs on a worker; its outputs are its session's, the parent's session stays where it was."""
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    for n in (1, 2):
        fake_llm.on(
            Match.user_turn(f"SPILLNOW{n}"),
            Reply.tool(ToolCall("harness_big_output", {"chars": SPILL_CHARS, "token": f"OUT{n}"}, id=f"call_big{n}")),
        )
        fake_llm.on(Match.after_tool_result(f"call_big{n}"), Reply.say("seen"))
    fake_llm.on(
        Match.user_turn("DELEGATE"),
        Reply.tool(ToolCall("delegate_task", {"goal": "CHILDGOAL read the big output"}, id="call_delegate")),
    )
    fake_llm.on(
        CHILD_TURN,
        Reply.tool(ToolCall("harness_big_output", {"chars": SPILL_CHARS, "token": "KID"}, id="call_kid_big")),
    )
    fake_llm.on(
        Match.after_tool_result("call_kid_big"),
        Reply.tool(ToolCall("stowage_grep", {"pattern": "END-", "literal": True}, id="call_kid_grep")),
    )
    # the two agents' last usage figures differ: each must reach its own engine
    fake_llm.on(Match.after_tool_result("call_kid_grep"), Reply.say("child done", usage={"prompt_tokens": CHILD_USAGE}))
    fake_llm.on(Match.after_tool_result("call_delegate"), Reply.say("delegated", usage={"prompt_tokens": PARENT_USAGE}))
    fake_llm.on(
        Match.user_turn("GREPNOW"),
        Reply.tool(ToolCall("stowage_grep", {"pattern": "END-", "literal": True}, id="call_grep")),
    )
    fake_llm.on(Match.after_tool_result("call_grep"), Reply.say("found"))

    scenario = Scenario().turn("SPILLNOW1 please", id="spill1").python(CHILD_SPY, id="spy")
    if turn_thread == "start":
        scenario = scenario.turn("DELEGATE please", id="delegate")
    else:
        scenario = scenario.python(DELEGATE_ON_OWN_THREAD, id="delegate")
    scenario = (
        scenario.python(CHILD_DONE, id="child")
        .turn("SPILLNOW2 please", id="spill2")
        .turn("GREPNOW please", id="grep")
        .python(CHILD_STORE, id="child_store")
        .probe(id="after")
    )
    result = run_scenario(home, scenario, check=True)

    assert fake_llm.matching(Match.after_tool_result("call_kid_grep")), "the subagent ran its tool calls and ended"
    kid_preview = fake_llm.matching(Match.after_tool_result("call_kid_big"))[0].tool_results["call_kid_big"]
    assert kid_preview.startswith("[stowage: preview of a large tool output"), kid_preview[:200]
    child = result.step("child")["result"]
    assert len(child["children"]) == 1 and child["child_store"] == child["children"], child
    assert not child["child_engine_is_main"], child
    # the parent's session: never moved, never ended, still bound for the hooks
    assert child["engine_session"] == child["store_session"] == child["main_session"] and child["bound"], child
    assert child["main_session"] not in child["ended"], child
    assert child["main_usage"] == PARENT_USAGE, child
    # subagent_stop (0.17.0+ name the child; 0.13.0 names none): the child's session ends, its guest is gone
    assert child["ended"] == child["children"] and child["child_bound"] == [False], child
    assert not child["guests_left"], child
    # the parent's later outputs are spilled and its grep finds its own outputs, not the child's
    preview = fake_llm.matching(Match.after_tool_result("call_big2"))[0].tool_results["call_big2"]
    assert preview.startswith("[stowage: preview of a large tool output"), preview[:200]
    found = json.loads(fake_llm.matching(Match.after_tool_result("call_grep"))[0].tool_results["call_grep"])
    assert found["searched"] == found["of"], found
    marks = sorted({m for r in found["results"] for m in ("OUT1", "OUT2", "KID") if f"END-{m}" in r["text"]})
    assert marks == ["OUT1", "OUT2"], found
    assert result.step("after")["engine"]["status"]["store"]["spills"] == 2
    # the child's outputs: stored under its own session, found there
    kid = result.step("child_store")["result"]
    assert {m for r in kid["results"] for m in ("OUT1", "KID") if f"END-{m}" in r["text"]} == {"KID"}, kid
    kid_tools = fake_llm.matching(CHILD_TURN)[0].tool_names
    if "stowage_grep" in kid_tools:  # 0.13.0 offers the engine's tools to a subagent; later hosts filter them out
        kid_grep = json.loads(
            fake_llm.matching(Match.after_tool_result("call_kid_grep"))[0].tool_results["call_kid_grep"]
        )
        assert kid_grep["searched"] == kid_grep["of"] and {
            m for r in kid_grep["results"] for m in ("OUT1", "KID") if f"END-{m}" in r["text"]
        } == {"KID"}, kid_grep


def test_a_genuine_compaction_asks_the_summary_model(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config=AT_THE_TRIGGER)
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


def test_a_jump_over_the_trigger_does_not_block_the_turn(fake_llm: FakeLLMServer, make_home) -> None:
    """Shipped settings: one response reports a request over the trigger (a single big step) and the turn goes on.

    Nothing is being written, so the first requests over the trigger start nothing (the view stubs a large newest
    output once it is no longer hot); here the next request is back under it: no summary call and no compaction,
    where the built-in way blocked the turn for the model (issue 34).
    """
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm, prompt_tokens=100_000)  # 0.78 of the window: under the ceiling
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))

    result = run_scenario(home, warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after", id="after"), check=True)

    status = result.step("after")["engine"]["status"]
    if MID_TURN:
        assert fake_llm.summary_requests() == []
        assert status["compression_count"] == 0, status
    else:  # 0.13.0: no request could start a summary, so the compaction at the trigger calls the model, as before
        assert len(fake_llm.summary_requests()) == 1 and status["compression_count"] == 1, status
    assert result.step("after")["final_response"]
    for request in fake_llm.main_requests():
        assert_valid_request(request)


def test_a_failing_summarizer_falls_back_and_the_session_goes_on(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config=AT_THE_TRIGGER)
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
