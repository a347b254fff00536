"""Hosts before 0.18.0 hand ONE engine object to every agent (no per-agent copy).

The background skill-review agent (and subagents) call ``on_session_start``
on the same object from their own thread while the main session is live;
the calls that follow on that thread (usage, compaction, tool calls) belong
to that agent.  None of it may move the main session's binding, store or
counters.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, Callable

from stowage.context_engine.config import load_settings
from stowage.context_engine.engine import StowageEngineCore


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
    assert eng.spill_tool_result("terminal", {}, big(400)) is not None
    store_before = eng.store_session.session_id

    def review() -> Any:
        eng.on_session_start("review", hermes_home=str(tmp_path), platform="cli")
        eng.update_from_response({"prompt_tokens": 90_000, "completion_tokens": 5})
        eng.on_session_reset()
        guest = eng.sharing.engine_here(eng)
        eng.on_session_end("review", [])
        return guest

    guest = on_thread(review)
    assert guest is not eng and guest.session_id == "review"
    assert eng.session_id == "main" and eng.store_session.session_id == store_before
    assert eng.last_prompt_tokens == 5000
    # spill keeps working for the main session after the review agent finished
    assert eng.spill_tool_result("terminal", {}, big(500)) is not None
    assert not eng.sharing.has_guests


def test_the_guest_has_its_own_store_session_and_counters(tmp_path):
    eng = shared_engine(tmp_path)

    def review() -> tuple[Any, Any]:
        eng.on_session_start("review", hermes_home=str(tmp_path))
        eng.update_from_response({"prompt_tokens": 777})
        return eng.sharing.engine_here(eng), eng.sharing.engine_here(eng).store_session

    guest, store = on_thread(review)
    assert guest.last_prompt_tokens == 777 and eng.last_prompt_tokens == 0
    assert store is not eng.store_session and store.session_id == "review"
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
