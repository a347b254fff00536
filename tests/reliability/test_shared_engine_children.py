"""Attack: child agents on the one engine object of 0.13.0-0.17.0, and the turn preflight of 0.20+ (issue 31).

The host's background review agent starts a session of its own on the shared
engine, is given its parent's session id, and ends *that* id when it shuts
down.  However many of them run, one after the other or at once, or die
without ending, the main session keeps its id, its store, its spills and its
grep.  On a host that calls ``select_context``, the turn-start preflight over
the whole history never compacts a request that is sent under the trigger.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore


def main_engine(tmp_path) -> StowageEngineCore:
    eng = StowageEngineCore(load_settings({"stowage": {"spill": {"threshold_tokens": 200}}}))
    eng.update_model("m", 128_000)
    eng.on_session_start("main", hermes_home=str(tmp_path), platform="cli")
    return eng


def output(tag: str) -> str:
    return "\n".join(f"row {i}: a long tool output line" for i in range(300)) + f"\nMARK-{tag}"


def review(eng: StowageEngineCore, tmp_path, own_id: str, *, end: bool = True) -> None:
    """As 0.13.0 run_agent / 0.17.0 agent/background_review.py run it, on the calling thread."""
    eng.on_session_start(own_id, hermes_home=str(tmp_path), platform="cli")
    eng.update_from_response({"prompt_tokens": 99_000, "completion_tokens": 1})
    eng.shape_request([], [{"role": "user", "content": "review"}])
    if end:
        eng.on_session_end("main", [])  # the review agent holds the parent's id


def run_threads(targets: list[Any]) -> None:
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main_intact(eng: StowageEngineCore, tags: list[str]) -> dict[str, int]:
    missed = capped = 0
    for tag in tags:  # one search per output: each has the whole time budget, even on a loaded machine
        args = {"pattern": f"MARK-{tag}", "literal": True, "kind": "spill"}
        found = json.loads(eng.handle_tool_call("stowage_grep", args))
        missed += not any(r["text"].endswith(f"MARK-{tag}") for r in found["results"])
        capped += found["searched"] != found["of"] or found["of"] < len(tags)
    return {
        "moved": int(eng.session_id != "main" or eng.state.store.session_id != "main"),
        "usage_overwritten": int(eng.last_prompt_tokens != 1000),
        "grep_missed": missed,
        "grep_capped": capped,
    }


def test_many_review_agents_never_end_or_move_the_main_session(tmp_path, figures):
    eng = main_engine(tmp_path)
    eng.update_from_response({"prompt_tokens": 1000, "completion_tokens": 1})
    tags: list[str] = []
    unspilled = 0

    def spill(tag: str) -> None:
        nonlocal unspilled
        tags.append(tag)
        unspilled += eng.spill_tool_result("terminal", {}, output(tag)).text is None

    spill("start")
    for n in range(20):  # one after the other, a spill between each
        run_threads([lambda n=n: review(eng, tmp_path, f"seq-{n}")])
        spill(f"seq-{n}")
    for wave in range(3):  # eight at once
        run_threads([lambda k=k, w=wave: review(eng, tmp_path, f"par-{w}-{k}") for k in range(8)])
        spill(f"wave-{wave}")
    # review threads that die without ending (a crash): a later thread, maybe under a reused ident, inherits nothing
    run_threads([lambda k=k: review(eng, tmp_path, f"dead-{k}", end=False) for k in range(5)])
    strays: list[Any] = []
    run_threads([lambda: strays.append(eng.sharing.engine_here(eng)) for _ in range(10)])
    spill("after-dead")

    result = main_intact(eng, tags)
    figures.update(reviews=20 + 24 + 5, spills=len(tags), unspilled=unspilled, **result)
    figures["stray_routes"] = sum(s is not eng for s in strays)
    assert unspilled == 0 and figures["stray_routes"] == 0
    assert result == {"moved": 0, "usage_overwritten": 0, "grep_missed": 0, "grep_capped": 0}, result


def test_the_turn_preflight_never_compacts_a_request_sent_under_the_trigger(tmp_path, figures):
    """0.20.1: turn_context.py asks with the whole history's figure, conversation_loop.py with the selected one."""
    eng = StowageEngineCore(load_settings({"stowage": {"view": {"hot_tokens": 1000, "step_tokens": 1000}}}))
    eng.update_model("m", 128_000)
    eng.on_session_start("s", hermes_home=str(tmp_path))
    history: list[dict[str, Any]] = [{"role": "system", "content": "terse"}, {"role": "user", "content": "go"}]
    for n in range(40):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}\n" * 300},
        ]
    assert eng.select_context(history, conversation_messages=history) is not None
    saved = int(eng.state.view.stats.last_request.saved_tokens)
    eng.on_turn_complete(history, None, turn_id="t1", interrupted=False)
    early = late = tried = 0
    for over in range(-saved + 1, saved, max(1, saved // 50)):  # whole-history figures around the trigger
        whole = eng.threshold_tokens + over
        sent_under = whole - saved < eng.threshold_tokens
        compacts = not eng.should_defer_preflight_to_real_usage(whole) and eng.should_compress(whole)
        tried += 1
        early += compacts and sent_under
        late += not compacts and not sent_under
    figures.update(preflight_figures=tried, early_compactions=early, missed_compactions=late, saved_tokens=saved)
    assert early == 0 and late == 0


class Agent:
    """A stand-in for the host's agent object: what the host adapter's ``identify`` names."""


def test_a_subagent_built_on_its_parents_thread_and_run_on_a_worker_is_its_own(tmp_path, figures):
    """delegate_task (0.13.0-0.17.0): the subagent's session starts on the parent's turn thread (in ``hermes chat
    -q`` the thread the parent started on), its turn runs on a worker; told apart by agent, not by thread."""
    here = threading.local()
    eng = StowageEngineCore(load_settings({"stowage": {"spill": {"threshold_tokens": 200}}}))
    eng.sharing.identify = lambda: getattr(here, "agent", None)
    eng.update_model("m", 128_000)
    here.agent = parent = Agent()
    eng.on_session_start("main", hermes_home=str(tmp_path), platform="cli")
    eng.update_from_response({"prompt_tokens": 1000, "completion_tokens": 1})
    assert eng.spill_tool_result("terminal", {}, output("before")) is not None

    here.agent = kid = Agent()  # built inside the parent's delegate_task call, on the parent's thread
    eng.on_session_start("kid", hermes_home=str(tmp_path), platform="cli")
    here.agent = parent
    guests = list(eng.sharing._guests.values())
    assert eng.session_id == "main" and len(guests) == 1 and eng.sharing.engine_here(eng) is eng
    guest = guests[0]

    seen: dict[str, Any] = {}

    def kid_turn() -> None:
        here.agent = kid
        eng.update_from_response({"prompt_tokens": 99_000, "completion_tokens": 1})
        seen["routed"] = eng.sharing.engine_here(eng)
        guest.spill_tool_result("terminal", {}, output("kid"))  # the hook finds the guest by the kid's session id
        seen["found"] = json.loads(eng.handle_tool_call("stowage_grep", {"pattern": "MARK-", "literal": True}))

    run_threads([kid_turn])
    assert seen["routed"] is guest
    marks = [r["text"].rsplit("MARK-", 1)[-1] for r in seen["found"]["results"] if r["kind"] == "spill"]
    assert marks == ["kid"], seen["found"]
    assert guest.session_id == "kid" and guest.last_prompt_tokens == 99_000
    eng.on_session_end("kid", [])  # the subagent_stop hook, on the parent's thread

    def late_kid() -> None:  # a subagent the host gave up on (timed out) still running, then ending twice
        here.agent = kid
        eng.update_from_response({"prompt_tokens": 77_000, "completion_tokens": 1})
        eng.on_session_end("main", [])
        eng.on_session_end("main", [])

    run_threads([late_kid])
    assert guest.last_prompt_tokens == 77_000 and eng.session_id == "main"
    assert eng.spill_tool_result("terminal", {}, output("after")) is not None
    result = main_intact(eng, ["before", "after"])
    figures.update(**result, guests_left=int(eng.sharing.has_guests))
    assert result == {"moved": 0, "usage_overwritten": 0, "grep_missed": 0, "grep_capped": 0}, result
    assert not eng.sharing.has_guests


def test_an_agent_in_place_of_a_gone_owner_takes_the_engine_over(tmp_path):
    """The owner's agent is gone (closed and collected) without ending its session: a new agent on the same
    object is the owner moving on, as a new session on the owner's thread was before agents could be named."""
    import gc

    here = threading.local()
    eng = StowageEngineCore(load_settings({}))
    eng.sharing.identify = lambda: getattr(here, "agent", None)
    eng.update_model("m", 128_000)
    here.agent = Agent()
    eng.on_session_start("first", hermes_home=str(tmp_path))
    here.agent = Agent()
    gc.collect()
    eng.on_session_start("second", hermes_home=str(tmp_path))
    assert eng.session_id == "second" and not eng.sharing.has_guests
