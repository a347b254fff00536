"""Summaries prepared ahead: when they start, and when compress() may use one.

No timing here: a model that blocks on an event stands in for a slow one
(the wall-clock proof is the end-to-end test).
"""

from __future__ import annotations

import copy
import json
import random
import threading

from stowage.context_engine.ahead import build_job, clean_cut
from stowage.context_engine.ahead.job import arrived_since, prefix_miss
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.compaction.boundaries import Window
from stowage.context_engine.compaction.compactor import compact
from stowage.context_engine.compaction.inputs import CompactionInputs
from stowage.context_engine.compaction.window_choice import prepared_slack
from stowage.context_engine.policy.rules import likely_used, should_prepare, take_early
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.summary.reply import SummaryFailure

from .helpers import NEWEST, RecordingModel, add_turn, history, make_engine, tool_turn


def later_turn(msgs: list[dict], calls: int = 1, chars: int = 2000) -> list[dict]:
    """The next user turn ("One more thing 7") with ``calls`` tool calls."""
    return add_turn(msgs, random.Random(7), calls=calls, chars=chars, text="One more thing 7")


def near_trigger(engine, share: float = 0.95) -> None:
    """The last request as sent reached ``share`` of the trigger."""
    engine.last_prompt_tokens = int(engine.threshold_tokens * share)


def prepare(engine, msgs) -> None:
    engine.prepare_ahead(msgs)
    engine.state.ahead.settle()


def ahead(engine) -> dict:
    return engine.get_status()["ahead"]


# -- the decision ------------------------------------------------------------------------------


def test_prepares_from_the_configured_share_of_the_trigger():
    assert not should_prepare(8_000, 10_000, 0.85)
    assert should_prepare(8_500, 10_000, 0.85)
    assert should_prepare(12_000, 10_000, 0.85)  # over the trigger: the compaction has not run yet
    assert not should_prepare(-1, 10_000, 0.85)  # right after a compaction
    assert not should_prepare(9_000, 10_000, 0)  # off
    assert not should_prepare(9_000, 0, 0.85)


def test_prepares_only_when_the_next_turn_will_not_outgrow_the_prepared_window():
    # slack 10,000 * 0.15 = 1,500 tokens of longer tail
    assert likely_used(None, 10_000, 0.85)  # the first turn: not known yet
    assert likely_used(1_500, 10_000, 0.85)
    assert not likely_used(1_501, 10_000, 0.85)  # a long agent turn: stale by its compaction


def test_engine_prepares_once_per_compaction_and_not_below_the_share():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    near_trigger(engine, 0.5)
    prepare(engine, msgs)
    assert model.prompts == [] and ahead(engine)["prepared"] == 0
    near_trigger(engine)
    prepare(engine, msgs)
    prepare(engine, later_turn(msgs))  # next turn end: the pending window is still a prefix, no second call
    assert len(model.prompts) == 1 and ahead(engine)["prepared"] == 1 and ahead(engine)["state"] == "ready"


def test_prepare_at_zero_is_off():
    model = RecordingModel()
    engine = make_engine(model=model, stowage={"compaction": {"prepare_at": 0}})
    near_trigger(engine, 2.0)
    prepare(engine, history())
    assert model.prompts == []


# -- reuse -----------------------------------------------------------------------------------


def test_same_window_uses_the_prepared_summary_with_the_exact_prompt():
    msgs = history()
    sync_model = RecordingModel()
    sync_out = make_engine(model=sync_model, stowage={"compaction": {"prepare_at": 0}}).compress(copy.deepcopy(msgs))

    model = RecordingModel()
    engine = make_engine(model=model)
    near_trigger(engine)
    prepare(engine, msgs)
    out = engine.compress(msgs)
    assert model.prompts == sync_model.prompts  # one call, with exactly the prompt the compactor builds
    assert out == sync_out  # and the same compaction (grounding included)
    assert ahead(engine)["used"] == 1
    last = engine.get_status()["last_compaction"]
    assert last["summary_source"] == "prepared" and last["wait_s"] is not None
    use = ahead(engine)["last"]  # the status file's plain data, read back typed
    assert use["outcome"] == "used" and use["prepared"] is True and use["lead_s"] >= use["wait_s"] >= 0, use
    assert json.loads(json.dumps(use)) == use
    assert SessionStatus.from_dict(engine.get_status()).ahead.last == engine.state.ahead.last_use


def test_prefix_window_with_a_clean_cut_is_used_and_the_new_turn_stays():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    job_window = engine.state.ahead.pending.window
    later = later_turn(msgs)
    out = engine.compress(later)
    assert len(model.prompts) == 1 and ahead(engine)["used"] == 1
    assert validate_messages(out, "strict") == []
    assert engine.state.last_outcome.stats.window_messages == job_window.size
    kept = json.dumps(out)
    assert "One more thing 7" in kept and NEWEST in kept


def test_prefix_whose_longer_tail_is_over_budget_is_not_used():
    model = RecordingModel()
    engine = make_engine(model=model, stowage={"compaction": {"prepare_at": 0.99}})
    msgs = history()
    near_trigger(engine, 1.0)
    prepare(engine, msgs)
    later = later_turn(msgs, calls=8, chars=8000)  # far more growth than 1% of the trigger
    engine.compress(later)
    assert len(model.prompts) == 2  # the prepared call was wasted, the compaction summarized the whole window
    assert ahead(engine)["used"] == 0 and ahead(engine)["discarded"] == 1
    assert engine.get_status()["last_compaction"]["summary_source"] == "model"


def test_changed_history_is_not_used():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    edited = copy.deepcopy(msgs)
    inside = next(i for i in range(engine.state.ahead.pending.window.head_end, len(msgs)) if msgs[i]["role"] == "user")
    edited[inside]["content"] = "an edited message inside the prepared window"
    engine.compress(edited)
    assert len(model.prompts) == 2 and "an edited message" in model.prompts[1]
    assert ahead(engine)["used"] == 0 and ahead(engine)["discarded"] == 1


def test_a_focus_topic_never_uses_it():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    engine.compress(msgs, focus_topic="database migrations", force=True)
    assert len(model.prompts) == 2 and 'FOCUS TOPIC: "database migrations"' in model.prompts[1]
    assert ahead(engine)["used"] == 0 and ahead(engine)["discarded"] == 1


def test_memory_context_is_part_of_the_key_and_stops_further_preparations():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    out = engine.compress(msgs, memory_context="user prefers tabs")
    assert len(model.prompts) == 2 and ahead(engine)["discarded"] == 1
    near_trigger(engine)
    prepare(engine, later_turn(out))  # the host passes memory context: a preparation could never match
    assert len(model.prompts) == 2 and ahead(engine)["prepared"] == 1


def test_a_failed_preparation_reaches_the_governor_and_the_compaction_does_not_call_again():
    for failure in (SummaryFailure("timeout", "took too long"), RuntimeError("bug")):
        model = RecordingModel(failure)
        engine = make_engine(model=model)
        msgs = history()
        near_trigger(engine)
        prepare(engine, msgs)
        governor = engine.get_status()["governor"]
        assert governor["summary_failures"] == 1 and governor["summary_cooldown_seconds"] > 0  # before any compaction
        out = engine.compress(msgs)
        assert len(model.prompts) == 1  # the cooldown holds: the fallback summary, no second call
        assert engine._last_summary_fallback_used and "without the summary model" in json.dumps(out)
        assert engine.get_status()["governor"]["summary_failures"] == 1  # counted once
        assert engine.get_status()["last_compaction"]["summary_source"] == "fallback"


def test_a_preparation_that_failed_before_the_cooldown_ended_is_retried_within_the_deadline():
    model = RecordingModel(SummaryFailure("http", "HTTP 500"))
    engine = make_engine(
        model=model, stowage={"compaction": {"failure_cooldown_seconds": 0, "summary_timeout_seconds": 40}}
    )
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    assert engine.get_status()["governor"]["summary_failures"] == 1
    out = engine.compress(msgs)
    assert len(model.prompts) == 2 and model.prompts[0] == model.prompts[1]
    assert not engine._last_summary_fallback_used and "Fix the failing parser tests" in json.dumps(out)
    assert ahead(engine)["failed"] == 1 and ahead(engine)["used"] == 0
    assert (
        0 < (model.timeouts[1] or 0) <= 40 and "timeout" not in model.runtimes[1]
    )  # the call got what was left of the compaction's deadline


def test_a_hung_preparation_costs_one_deadline_and_one_call():
    """The model hangs: the compaction waits within its deadline, writes the fallback, never calls twice."""
    gate, entered = threading.Event(), threading.Event()
    timeouts: list[float | None] = []

    def hanging(prompt, runtime, timeout=None):
        timeouts.append(timeout)
        entered.set()
        gate.wait(30)
        raise SummaryFailure("timeout", "the host's own timeout, long after the compaction gave up")

    engine = make_engine(model=hanging, stowage={"compaction": {"summary_timeout_seconds": 0.2}})
    msgs = history()
    near_trigger(engine)
    engine.prepare_ahead(msgs)
    assert entered.wait(30)
    run = engine.state.ahead._run
    out = engine.compress(msgs)
    last = engine.get_status()["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith("timeout"), last
    assert "without the summary model" in json.dumps(out) and NEWEST in json.dumps(out)
    assert engine.state.ahead.last_use.outcome == "failed" and ahead(engine)["failed"] == 1
    governor = engine.get_status()["governor"]
    assert governor["summary_failures"] == 1 and governor["summary_cooldown_seconds"] > 0
    assert timeouts == [0.2]  # one call, given the configured deadline
    gate.set()  # the hung call fails at last: the compaction already reported it, it is not counted again
    assert run.done.wait(30) and run.failure is not None
    assert engine.get_status()["governor"]["summary_failures"] == 1


def test_a_preparation_failing_while_the_compaction_waits_is_that_compactions_failure():
    gate, entered = threading.Event(), threading.Event()
    calls: list[str] = []

    def failing_later(prompt, runtime, timeout=None):
        calls.append(prompt)
        entered.set()
        gate.wait(30)
        raise SummaryFailure("http", "HTTP 502 while the compaction waited")

    engine = make_engine(model=failing_later, stowage={"compaction": {"summary_timeout_seconds": 60}})
    msgs = history()
    near_trigger(engine)
    engine.prepare_ahead(msgs)
    assert entered.wait(30)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(engine.compress(msgs)))
    worker.start()
    while engine.state.ahead._run is not None and worker.is_alive():  # the compaction claims the job, then waits
        worker.join(0.01)
    gate.set()
    worker.join(30)
    assert result and len(calls) == 1
    last = engine.get_status()["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith("http"), last
    assert engine.get_status()["governor"]["summary_failures"] == 1  # counted once, by the compaction


def test_a_running_preparation_is_waited_for_not_called_twice():
    gate, entered = threading.Event(), threading.Event()
    inner = RecordingModel()

    def slow(prompt, runtime, timeout=None):
        entered.set()
        gate.wait(30)
        return inner(prompt, runtime, timeout)

    engine = make_engine(model=slow)
    msgs = history()
    near_trigger(engine)
    engine.prepare_ahead(msgs)
    assert entered.wait(30) and ahead(engine)["state"] == "running"
    result: list = []
    worker = threading.Thread(target=lambda: result.append(engine.compress(msgs)))
    worker.start()
    gate.set()
    worker.join(30)
    assert result and len(inner.prompts) == 1 and ahead(engine)["used"] == 1


# -- lifetime --------------------------------------------------------------------------------


def test_session_end_reset_and_copies_drop_the_pending_preparation():
    engine = make_engine(model=RecordingModel())
    engine.on_session_start("s1")
    msgs = history()
    near_trigger(engine)
    prepare(engine, msgs)
    clone = copy.deepcopy(engine)
    assert clone.state.ahead is not engine.state.ahead and clone.state.ahead.pending is None
    engine.on_session_end("s1", msgs)
    assert engine.state.ahead.pending is None and ahead(engine)["discarded"] == 1
    prepare(engine, msgs)
    engine.on_session_reset()
    assert engine.state.ahead.pending is None and ahead(engine)["discarded"] == 2


# -- pure parts ------------------------------------------------------------------------------


def test_clean_cut_never_splits_a_call_from_its_result():
    msgs = [
        {"role": "user", "content": "go"},
        *tool_turn(["a"], ["out"]),
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
    ]
    assert clean_cut(msgs, Window(0, 4))
    assert not clean_cut(msgs, Window(0, 2))  # the result would open the tail
    assert not clean_cut(msgs, Window(2, 4))  # the result without its call


def test_job_prompt_is_the_compactors():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    plan = engine.state.compaction_plan(engine.limits)
    job = build_job(msgs, plan, engine.state.counter.estimate_message, today="2026-01-02")
    compact(
        msgs,
        CompactionInputs(
            plan, count=engine.state.counter.estimate_message, summarize=lambda p: model(p, {}), today="2026-01-02"
        ),
    )
    assert job is not None and model.prompts == [job.prompt]


def test_a_dropped_preparation_that_fails_later_is_not_counted():
    gate, entered = threading.Event(), threading.Event()

    def hanging(prompt, runtime, timeout=None):
        entered.set()
        gate.wait(30)
        raise SummaryFailure("timeout", "late")

    engine = make_engine(model=hanging)
    near_trigger(engine)
    engine.prepare_ahead(history())
    assert entered.wait(30)
    run = engine.state.ahead._run
    engine.on_session_reset()  # the session moved on: its preparation is dropped
    gate.set()
    assert run.done.wait(30) and run.failure is not None
    assert engine.get_status()["governor"]["summary_failures"] == 0  # another session's failure is not ours


def plan_of(engine):
    """The plan a compaction of this engine uses now."""
    return engine.state.compaction_plan(engine.limits)


# -- the compactor's rule, the early take and why a compaction found nothing usable ---------------


def test_take_early_only_once_ready_and_only_under_the_trigger():
    assert take_early(9_000, 10_000, ready=True)
    assert not take_early(9_000, 10_000, ready=False)  # still being written: the trigger decides
    assert not take_early(10_000, 10_000, ready=True)  # at the trigger the usual decision applies
    assert not take_early(-1, 10_000, ready=True) and not take_early(9_000, 0, ready=True)


def test_what_arrived_since_the_prepared_window_is_measured_as_the_compaction_keeps_it():
    engine = make_engine(model=RecordingModel())
    msgs = history()
    job = build_job(msgs, plan_of(engine), engine.state.counter.estimate_message)
    plan, count = plan_of(engine), engine.state.counter.estimate_message
    assert arrived_since(msgs, plan, count, job) == 0  # nothing came since
    later = later_turn(msgs, calls=3)
    since = arrived_since(later, plan, count, job)
    assert since is not None and 0 < since < sum(map(count, later[len(msgs) :]))  # older outputs as stubs
    edited = copy.deepcopy(later)
    edited[job.window.head_end + 1]["content"] = "edited inside the prepared window"
    assert arrived_since(edited, plan, count, job) is None
    assert prefix_miss(edited, Window(job.window.head_end, len(edited)), job) == (
        "the history changed under the prepared window"
    )


def test_the_compaction_takes_a_prepared_window_with_up_to_twice_its_slack_arrived_since():
    """What came between the last check and the compaction (a new turn's task) costs a longer tail, not a call."""
    plan_slack = {"compaction": {"prepare_at": 0.95}}
    for factor, used in ((1.1, True), (2.5, False)):
        model = RecordingModel()
        engine = make_engine(model=model, stowage=plan_slack)
        msgs = history()
        near_trigger(engine)
        prepare(engine, msgs)
        job, plan, count = engine.state.ahead.pending, plan_of(engine), engine.state.counter.estimate_message
        slack = prepared_slack(plan)
        later = list(msgs)
        for step in range(200):
            engine.state.counter.calibrate(later[-40:])  # as compress() does
            since = arrived_since(later, plan, count, job)
            if since is None or since > factor * slack:
                break
            later = later + [{"role": "user", "content": f"task {step}"}, {"role": "assistant", "content": "w " * 400}]
        assert since is not None and factor * slack < since < (factor + 0.4) * slack
        engine.compress(later)
        assert (engine.state.compaction_log[-1].summary_source == "prepared") is used, (
            engine.state.ahead.last_use,
            since,
            slack,
        )
        assert len(model.prompts) == (1 if used else 2)


def test_a_compaction_says_why_it_found_nothing_prepared():
    engine = make_engine(model=RecordingModel())
    msgs = history()
    engine.compress(msgs)
    assert engine.state.ahead.last_use.outcome == "none" and not engine.state.ahead.last_use.prepared
    assert engine.state.ahead.last_use.why.startswith("nothing started")


# -- one summary call in flight (issue 40: a hung model is called once) ----------------------------------------------


def hanging_model(entered: threading.Event, gate: threading.Event, calls: list[str]):
    def hanging(prompt, runtime, timeout=None):
        calls.append(prompt)
        entered.set()
        gate.wait(30)
        raise SummaryFailure("timeout", "the host's own timeout, long after the compaction gave up")

    return hanging


def test_a_dropped_call_in_flight_blocks_a_new_one_and_the_compaction_waits_for_it():
    """The history outgrew the window being summarized (dropped), the model hangs: one call, one timeout."""
    gate, entered, calls = threading.Event(), threading.Event(), []
    engine = make_engine(
        model=hanging_model(entered, gate, calls), stowage={"compaction": {"summary_timeout_seconds": 0.2}}
    )
    msgs = history()
    near_trigger(engine)
    engine.prepare_ahead(msgs)
    assert entered.wait(30)
    engine.state.ahead.discard("outgrown before its compaction came")
    assert engine.state.ahead.pending is None and engine.state.ahead.running  # its call has not returned
    later = later_turn(msgs)
    engine.prepare_ahead(later)  # never a second call while one is in flight
    out = engine.compress(later)
    last = engine.get_status()["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith("timeout"), last
    assert "did not return" in engine.state.ahead.last_use.error
    assert NEWEST in json.dumps(out) and len(calls) == 1
    assert engine.get_status()["governor"]["summary_failures"] == 1  # the compaction's own timeout
    gate.set()


def test_a_call_in_flight_for_another_window_is_waited_for_then_the_compaction_calls():
    """The model answers, but for a window the compaction no longer uses: it waits, then makes its own call."""
    gate, entered = threading.Event(), threading.Event()
    inner = RecordingModel()
    opened_before: list[bool] = []  # per call: had the first call returned when it was made?

    def slow(prompt, runtime, timeout=None):
        opened_before.append(gate.is_set())
        entered.set()
        gate.wait(30)
        return inner(prompt, runtime, timeout)

    engine = make_engine(model=slow, stowage={"compaction": {"prepare_at": 0.99, "summary_timeout_seconds": 60}})
    msgs = history()
    near_trigger(engine, 1.0)
    engine.prepare_ahead(msgs)
    assert entered.wait(30)
    later = later_turn(msgs, calls=8, chars=8000)  # far more growth than 1% of the trigger: another window
    result: list = []
    worker = threading.Thread(target=lambda: result.append(engine.compress(later)))
    worker.start()
    worker.join(0.3)  # a compaction that did not wait would have made its call by now
    gate.set()
    worker.join(30)
    # the stale reply, then the compaction's own call, made only once the call in flight had returned
    assert result and len(inner.prompts) == 2 and opened_before == [False, True]
    last = engine.get_status()["last_compaction"]
    assert last["result"] == "compacted" and last["summary_source"] == "model", last


def test_a_call_in_flight_for_another_window_that_hangs_costs_one_timeout():
    gate, entered, calls = threading.Event(), threading.Event(), []
    engine = make_engine(
        model=hanging_model(entered, gate, calls),
        stowage={"compaction": {"prepare_at": 0.99, "summary_timeout_seconds": 0.2}},
    )
    msgs = history()
    near_trigger(engine, 1.0)
    engine.prepare_ahead(msgs)
    assert entered.wait(30)
    engine.compress(later_turn(msgs, calls=8, chars=8000))
    last = engine.get_status()["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith("timeout"), last
    assert len(calls) == 1 and engine.state.ahead.last_use.outcome == "failed"
    gate.set()
