"""Hosts before 0.18.0 hand ONE engine object to every agent (no per-agent copy).

The background skill-review agent (and subagents) call ``on_session_start``
on the same object from their own thread while the main session is live;
the calls that follow on that thread (usage, compaction, tool calls) belong
to that agent.  None of it may move the main session's binding, store or
counters.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any, Callable

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore


def on_thread(fn: Callable[[], Any]) -> Any:
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(fn()))
    worker.start()
    worker.join()
    return box[0] if box else None


def shared_engine(tmp_path) -> StowageEngineCore:
    eng = StowageEngineCore(load_settings({"stowage": {"spill": {"threshold_tokens": 200}}}))
    eng.update_model("m", 128_000)
    eng.on_session_start("main", hermes_home=str(tmp_path), platform="cli")
    return eng


def big(n: int) -> str:
    return "\n".join(f"line {i} of a long tool output with some words" for i in range(n))


def test_a_review_agent_started_mid_session_moves_nothing_of_the_main_session(tmp_path):
    eng = shared_engine(tmp_path)
    eng.update_from_response({"prompt_tokens": 5000, "completion_tokens": 10})
    assert eng.spill_tool_result("terminal", {}, big(400)).text is not None
    store_before = eng.state.store.session_id

    def review() -> Any:
        eng.on_session_start("review", hermes_home=str(tmp_path), platform="cli")
        eng.update_from_response({"prompt_tokens": 90_000, "completion_tokens": 5})
        eng.on_session_reset()
        guest = eng.sharing.engine_here(eng)
        eng.on_session_end("review", [])
        return guest

    guest = on_thread(review)
    assert guest is not eng and guest.session_id == "review"
    assert eng.session_id == "main" and eng.state.store.session_id == store_before
    assert eng.last_prompt_tokens == 5000
    # spill keeps working for the main session after the review agent finished
    assert eng.spill_tool_result("terminal", {}, big(500)).text is not None
    assert not eng.sharing.has_guests


def test_the_guest_has_its_own_store_session_and_counters(tmp_path):
    eng = shared_engine(tmp_path)

    def review() -> tuple[Any, Any]:
        eng.on_session_start("review", hermes_home=str(tmp_path))
        eng.update_from_response({"prompt_tokens": 777})
        return eng.sharing.engine_here(eng), eng.sharing.engine_here(eng).state.store

    guest, store = on_thread(review)
    assert guest.last_prompt_tokens == 777 and eng.last_prompt_tokens == 0
    assert store is not eng.state.store and store.session_id == "review"
    assert eng.sharing.engine_here(eng) is eng  # the main thread still talks to the owner


def test_the_owner_thread_moving_to_a_new_session_is_not_a_guest(tmp_path):
    eng = shared_engine(tmp_path)
    eng.on_session_start("next")
    assert eng.session_id == "next" and not eng.sharing.has_guests


def test_a_compaction_continuation_is_the_same_session(tmp_path):
    eng = shared_engine(tmp_path)
    on_thread(lambda: eng.on_session_start("main-2", old_session_id="main", boundary_reason="compression"))
    assert eng.session_id == "main-2" and not eng.sharing.has_guests


def test_after_the_main_session_ends_the_next_session_owns_the_engine(tmp_path):
    eng = shared_engine(tmp_path)
    eng.on_session_end("main", [])
    on_thread(lambda: eng.on_session_start("later", hermes_home=str(tmp_path)))
    assert eng.session_id == "later" and not eng.sharing.has_guests


def test_a_host_that_copies_the_engine_never_makes_guests(tmp_path):
    registered = StowageEngineCore(load_settings({}))
    mine = copy.deepcopy(registered)
    mine.on_session_start("a", hermes_home=str(tmp_path))
    on_thread(lambda: mine.on_session_start("b", hermes_home=str(tmp_path)))
    assert mine.session_id == "b" and not mine.sharing.has_guests


def grep(eng: StowageEngineCore, pattern: str) -> dict[str, Any]:
    return json.loads(eng.handle_tool_call("stowage_grep", {"pattern": pattern}))


def review_agent_as_the_host_runs_it(eng: StowageEngineCore, tmp_path, own_id: str, parent_id: str) -> Any:
    """0.13.0 ``run_agent._spawn_background_review`` / 0.17.0 ``agent/background_review.py``, on its own thread:
    the review ``AIAgent`` starts its own session, is then given the parent's session id, runs a turn, and its
    ``shutdown_memory_provider()`` ends ``<parent id>`` on the shared engine."""

    def review() -> Any:
        eng.on_session_start(own_id, hermes_home=str(tmp_path), platform="cli")  # AIAgent.__init__
        # review_agent.session_id = parent's id: every later call names the parent's session
        eng.update_from_response({"prompt_tokens": 90_000, "completion_tokens": 5})
        eng.shape_request([], [{"role": "user", "content": "review the conversation"}])
        eng.end_turn_from_plugin_hook()
        guest = eng.sharing.engine_here(eng)
        eng.on_session_end(parent_id, [])  # shutdown_memory_provider(): context_compressor.on_session_end
        return guest

    return on_thread(review)


def test_review_agents_ending_under_the_parents_id_end_only_themselves(tmp_path):
    # issue 31: the main session was ended, later outputs passed unspilled and grep searched 0 of 0 blobs
    eng = shared_engine(tmp_path)
    eng.update_from_response({"prompt_tokens": 5000, "completion_tokens": 10})
    assert eng.spill_tool_result("terminal", {}, big(400) + "\nTRACE-EARLY").text is not None
    turns = eng.state.governor.turn
    for n in range(3):
        guest = review_agent_as_the_host_runs_it(eng, tmp_path, f"review-{n}", "main")
        assert guest is not eng and guest.last_prompt_tokens == 90_000
        assert guest.state.last_request is not None and eng.state.last_request is None  # its request was its own
        assert eng.session_id == "main" and eng.state.store.session_id == "main"
        assert eng.last_prompt_tokens == 5000 and not eng.sharing.has_guests
        assert eng.spill_tool_result("terminal", {}, big(400) + f"\nTRACE-AFTER-{n}").text is not None
        found = grep(eng, "TRACE-")
        assert found["of"] == found["searched"] >= n + 2, found
        spilled = sorted(r["text"].rsplit("TRACE-", 1)[1] for r in found["results"] if r["kind"] == "spill")
        assert spilled == sorted(["EARLY", *(f"AFTER-{k}" for k in range(n + 1))]), found
    assert eng.state.governor.turn == turns  # the review agents' turn ends were their own


def test_a_compaction_continuing_a_guests_session_on_its_thread_stays_the_guests(tmp_path):
    # a review agent holding its parent's id rotates "main" -> "main-2" on its own thread (0.13.0 with a session db)
    eng = shared_engine(tmp_path)

    def review() -> Any:
        eng.on_session_start("review", hermes_home=str(tmp_path))
        eng.on_session_start("main-2", old_session_id="main", boundary_reason="compression")
        return eng.sharing.engine_here(eng)

    guest = on_thread(review)
    assert guest is not eng and guest.session_id == "main-2"
    assert eng.session_id == "main" and eng.state.store.session_id == "main"


def test_the_owner_still_ends_its_own_session_from_any_thread(tmp_path):
    eng = shared_engine(tmp_path)
    on_thread(lambda: eng.on_session_end("main", []))
    assert eng.sharing.engine_here(eng) is eng
    on_thread(lambda: eng.on_session_start("later", hermes_home=str(tmp_path)))
    assert eng.session_id == "later"  # the main session had ended: the next one owns the engine
