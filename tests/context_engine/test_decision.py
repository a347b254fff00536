"""The one decision (context_engine/policy/decision.py): each asker's question, answered from plain figures."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest

from stowage.context_engine.policy.decision import Action, Asked, Decision, Pressure, decide
from stowage.context_engine.policy.rules import AWAIT_CEILING, AWAIT_REQUESTS

WINDOW, TRIGGER = 100_000, 50_000


def pressure(asked: Asked, tokens: int, **figures: object) -> Pressure:
    return Pressure(asked, tokens, TRIGGER, WINDOW, 0.85, **figures)  # type: ignore[arg-type]


def test_the_decision_is_a_frozen_record_with_its_reason():
    decision = decide(pressure(Asked.CHECK, 60_000))
    assert decision == Decision(Action.COMPACT, "over_trigger", 60_000)
    with pytest.raises(FrozenInstanceError):
        decision.action = Action.SKIP  # type: ignore[misc]


def test_the_pressure_check_below_over_and_blocked():
    assert decide(pressure(Asked.CHECK, 40_000)).host_answer() == (False, None)
    assert decide(pressure(Asked.CHECK, 40_000)).reason == "below_threshold:40000<50000"
    assert decide(pressure(Asked.CHECK, 60_000)).host_answer() == (True, None)
    once = pressure(Asked.CHECK, 60_000, hook_driven=True, compacted_this_turn=True)
    assert decide(once).host_answer() == (False, "once_per_turn")
    assert decide(replace(once, hook_driven=False)).compact  # without the turn hook, compress() itself judges
    assert decide(pressure(Asked.CHECK, 60_000, backoff="b")).host_answer() == (False, "backoff:b")


def test_a_request_counted_past_the_ceiling_compacts_even_twice_a_turn_on_its_own_count():
    counted = int(AWAIT_CEILING * WINDOW) + 1
    decision = decide(pressure(Asked.CHECK, 10, counted=counted, hook_driven=True, compacted_this_turn=True))
    assert (decision.action, decision.reason, decision.tokens) == (Action.COMPACT, "past_ceiling", counted)
    dry = decide(pressure(Asked.DRY_RUN, 10, counted=counted))  # the dry run has no live request to count
    assert dry.action is Action.SKIP and dry.reason.startswith("below_threshold")


def test_a_ready_prepared_summary_compacts_before_the_trigger_unless_preparing_is_off():
    decision = decide(pressure(Asked.CHECK, 45_000, ready=True))
    assert (decision.action, decision.reason, decision.tokens) == (Action.COMPACT, "prepared_ready", TRIGGER)
    assert not decide(replace(pressure(Asked.CHECK, 45_000, ready=True), prepare_at=0)).compact
    assert decide(pressure(Asked.CHECK, 45_000, ready=True, backoff="b")).host_answer() == (False, "backoff:b")


def test_over_the_trigger_the_turn_awaits_the_summary_being_written_but_not_in_the_dry_run():
    writing = pressure(Asked.CHECK, 60_000, sent=60_000, writing=True)
    assert decide(writing).action is Action.AWAIT and decide(writing).host_answer() == (False, None)
    assert decide(replace(writing, asked=Asked.DRY_RUN)).compact
    assert decide(replace(writing, prepare_at=0)).compact  # nothing is written ahead: nothing to await
    assert decide(replace(writing, sent=int(AWAIT_CEILING * WINDOW) + 1)).compact  # the next step might not fit
    # nothing written yet: the first requests go on only where one of them can start it
    fresh = pressure(Asked.CHECK, 60_000, sent=60_000)
    assert decide(fresh).compact
    can_start = replace(fresh, hook_brings_history=True)
    assert decide(can_start).action is Action.AWAIT
    assert decide(replace(can_start, over_requests=AWAIT_REQUESTS + 1)).compact
    assert decide(replace(can_start, cooldown_s=5.0)).compact  # no summary can start while it cools down


def test_compress_runs_unless_this_turn_compacted_and_says_which_summary():
    plain = decide(pressure(Asked.COMPRESS, 60_000))
    assert (plain.action, plain.model_summary, plain.use_prepared, plain.clear_cooldown) == (
        Action.COMPACT,
        True,
        True,
        False,
    )
    assert decide(pressure(Asked.COMPRESS, 60_000, compacted_this_turn=True)).reason == "once_per_turn"
    assert decide(pressure(Asked.COMPRESS, 60_000, compacted_this_turn=True, forced=True)).reason == "forced"
    assert decide(pressure(Asked.COMPRESS, 60_000, compacted_this_turn=True, overflowing=True)).compact
    cooling = decide(pressure(Asked.COMPRESS, 60_000, cooldown_s=30.0))
    assert cooling.compact and not cooling.model_summary and not cooling.use_prepared  # the fallback summary
    bypass = decide(pressure(Asked.COMPRESS, 60_000, cooldown_s=30.0, bypass_cooldown=True))
    assert bypass.model_summary and bypass.clear_cooldown
    assert not decide(replace(pressure(Asked.COMPRESS, 60_000), prepare_at=0)).use_prepared


def test_the_status_line_says_what_compress_will_do():
    assert decide(pressure(Asked.STATUS, 60_000, compacted_this_turn=True)).reason == "once_per_turn"
    assert decide(pressure(Asked.STATUS, 60_000, backoff="b")).reason == "backoff:b"
    assert not decide(pressure(Asked.STATUS, 60_000, cooldown_s=3.0)).model_summary
    assert decide(pressure(Asked.STATUS, 60_000)).model_summary


def test_at_a_turns_end_a_summary_is_prepared_near_the_trigger_when_it_will_be_used():
    near = int(0.85 * TRIGGER)
    assert decide(pressure(Asked.TURN_END, near)) == Decision(Action.PREPARE, "nearing_trigger", near, start=True)
    assert decide(pressure(Asked.TURN_END, near - 1)).reason == "not_near_trigger"
    assert decide(replace(pressure(Asked.TURN_END, near), prepare_at=0)).reason == "prepare_off"
    assert decide(pressure(Asked.TURN_END, near, model_attached=False)).reason == "no_summary_model"
    assert decide(pressure(Asked.TURN_END, near, memory_in_prompt=True)).reason == "memory_in_prompt"
    assert decide(pressure(Asked.TURN_END, near, cooldown_s=1.0)).reason == "cooling_down"
    assert decide(pressure(Asked.TURN_END, near, turn_growth=TRIGGER)).reason == "outgrown_before_used"


def test_before_a_request_the_pace_starts_one_under_the_trigger_and_the_third_request_over_it():
    under = decide(pressure(Asked.REQUEST, 45_000, sent=45_000, due=True))
    assert (under.action, under.start, under.awaited) == (Action.PREPARE, True, False)
    assert not decide(pressure(Asked.REQUEST, 45_000, sent=45_000)).start  # not due: only review what is pending
    over = pressure(Asked.REQUEST, 60_000, sent=60_000, due=True)
    assert decide(over).awaited and not decide(over).start  # the first requests over it start nothing
    assert decide(replace(over, over_requests=AWAIT_REQUESTS)).start
    assert not decide(replace(over, over_requests=AWAIT_REQUESTS, over_started=True)).start  # once per compaction
    assert decide(pressure(Asked.REQUEST, 45_000, sent=45_000, awaiting=True)).awaited
    assert decide(pressure(Asked.REQUEST, 45_000, sent=45_000, compacted_this_turn=True)).reason == "once_per_turn"
    assert decide(replace(over, prepare_at=0)).reason == "prepare_off"


def test_every_asker_of_the_engine_goes_through_the_one_decision(monkeypatch):
    """should_compress_info, the dry run, the status line, both preparations and compress() all ask decide()."""
    import stowage.context_engine.policy.decision as decision_module
    from stowage.context_engine.session import compaction_run, preparation

    from .helpers import history, make_engine

    asked: list[Asked] = []

    def recording(p: Pressure) -> Decision:
        asked.append(p.asked)
        return decision_module.decide(p)

    monkeypatch.setattr(compaction_run, "decide", recording)
    monkeypatch.setattr(preparation, "decide", recording)
    engine = make_engine()
    msgs = history()
    engine.shape_request([], msgs)  # the session sees the history (the dry run previews it)
    engine.update_from_response({"prompt_tokens": engine.threshold_tokens + 1})
    assert engine.should_compress_info(engine.threshold_tokens + 1) == (True, None)
    assert engine.preview() is not None
    engine.get_automatic_compaction_status_message(phase="compress", approx_tokens=1)
    engine.prepare_ahead(msgs)
    engine.prepare_during_turn(msgs, approx_tokens=engine.threshold_tokens + 1)
    engine.compress(msgs)
    assert asked == [Asked.CHECK, Asked.DRY_RUN, Asked.STATUS, Asked.TURN_END, Asked.REQUEST, Asked.COMPRESS]
