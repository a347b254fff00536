"""Summaries prepared during a long turn: started on the request path when the measured pace says so, and used.

Time is a replay's simulated clock (``replay/clock.py``): the summary model
advances its own thread's time by its latency, each request moves the
turn's time on, so the decisions and the waits are exact, not timed.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from stowage.command.replay.offline.clock import SimClock
from stowage.context_engine.ahead.job import arrived_since
from stowage.context_engine.ahead.pace import MARGIN_REQUESTS, Pace, due

from .helpers import GOOD_SUMMARY, history, make_engine, tool_turn

LATENCY = 8.0  # seconds the summary model takes
STEP = 2.0  # seconds a main request takes


class SlowModel:
    """A summary model that takes ``LATENCY`` seconds on the simulated clock."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.prompts: list[str] = []

    def __call__(self, prompt: str, runtime: dict[str, Any]) -> str:
        self.prompts.append(prompt)
        self.clock.advance(LATENCY)
        return GOOD_SUMMARY


def paced(requests: list[tuple[float, int, int]], latency: float | None = None) -> Pace:
    pace = Pace(latency_s=latency)
    for point in requests:
        pace.observe_request(*point)
    return pace


# -- the decision (pure) ------------------------------------------------------------------------


def test_due_waits_for_the_band_and_for_two_measured_requests():
    steady = paced([(0, 9_000, 50_000), (2, 9_100, 50_500)], latency=8.0)  # 100 as sent, 500 of history a request
    assert not due(8_900, 10_000, 1_000, steady)  # below the band (trigger - slack)
    assert not due(9_500, 10_000, 1_000, paced([(0, 9_500, 50_000)]))  # one request: no pace yet
    assert not due(9_500, 10_000, 0, steady)  # no slack: a prepared window could never be used


def test_due_starts_when_the_requests_left_are_what_the_summary_takes():
    # 8 s latency at 2 s a request: 4 requests + the margin; 100 tokens as sent per request
    pace = paced([(0, 5_000, 10_000), (2, 5_100, 10_500), (4, 5_200, 11_000)], latency=8.0)
    lead = 4 + MARGIN_REQUESTS
    slack = 100_000  # wide: only the time decides
    assert not due(10_000 - 100 * (lead + 1), 10_000, slack, pace)
    assert due(10_000 - 100 * lead, 10_000, slack, pace)
    # a slower model (30 s: 15 requests + margin) starts earlier
    slow = paced(list(pace.requests), latency=30.0)
    assert due(10_000 - 100 * 16, 10_000, slack, slow)


def test_due_never_starts_a_window_the_history_would_outgrow_first():
    pace = paced([(0, 5_000, 10_000), (2, 5_100, 12_000), (4, 5_200, 14_000)], latency=8.0)  # 2,000 of history
    # 6 requests left at 100 each; the slack holds 3,000 / 2,000 - 1 = 0.5 request of growth: not yet
    assert not due(9_400, 10_000, 3_000, pace)
    assert due(9_950, 10_000, 3_000, pace)  # under one request left: fits


def test_a_large_recent_step_counts_as_the_trigger_being_one_request_away():
    pace = paced([(0, 5_000, 10_000), (2, 5_100, 10_500), (4, 7_000, 11_000), (6, 7_050, 11_500)], latency=8.0)
    assert due(10_000 - 1_800, 10_000, 100_000, pace)  # the 1,900 jump could come again


def test_unknown_latency_starts_as_early_as_the_band_allows_and_a_compaction_starts_over():
    pace = paced([(0, 9_000, 50_000), (2, 9_010, 50_010)])  # 10 as sent and 10 of history a request
    assert due(9_010, 10_000, 1_000, pace)  # 99 requests left, and the slack holds 99 more
    pace.observe_request(4, 3_000, 20_000)  # a compaction shrank the history
    assert len(pace.requests) == 1 and pace.sent_growth() is None
    pace.observe_latency(10.0)
    pace.observe_latency(6.0)
    assert pace.latency_s == 8.0


# -- the engine on the request path -----------------------------------------------------------------


class Turn:
    """One long agent turn: each request adds one tool step, takes ``STEP`` seconds, and runs the host's hooks."""

    def __init__(self, stowage: dict[str, Any] | None = None, model: Any = None) -> None:
        self.clock = SimClock()
        self.model = model or SlowModel(self.clock)
        self.engine = make_engine(model=self.model, stowage=stowage)
        self.engine.use_clock(self.clock)
        self.msgs = history(turns=14)
        self.rng = random.Random(3)
        self.steps = 0

    def size(self) -> int:
        return sum(self.engine.state.counter.estimate_message(m) for m in self.msgs)

    def request(self) -> bool:
        """The host's pre-API hook, the call, usage, one tool step and the post-tool check (True: it compacts)."""
        self.engine.prepare_during_turn(self.msgs, self.size())
        self.engine.state.ahead.settle()  # the background call finishes (in real time) before the clock moves on
        self.clock.advance(STEP)
        self.engine.update_from_response({"prompt_tokens": self.size()})
        self.steps += 1
        cid = f"s{self.steps}"
        self.msgs += tool_turn([cid], ["x" * 2_400 + f" step {self.steps} {self.rng.random()}"])
        return self.engine.should_compress(self.engine.last_prompt_tokens)

    def until_compaction(self, limit: int = 200) -> None:
        for _ in range(limit):
            if self.request():
                return
        raise AssertionError("no compaction")


def test_a_long_turn_prepares_on_the_request_path_and_compacts_without_waiting():
    turn = Turn()
    assert turn.size() < turn.engine.threshold_tokens * 0.9  # the turn starts below the band
    turn.until_compaction()
    engine = turn.engine
    # the compaction came because the summary was ready, before the request reached the trigger
    assert engine.last_prompt_tokens < engine.threshold_tokens
    assert engine.state.ahead.status().state == "ready" and len(turn.model.prompts) == 1
    before = turn.clock()
    out = engine.compress(turn.msgs, engine.last_prompt_tokens)
    record = engine.state.compaction_log[-1]
    assert record.result == "compacted" and record.summary_source == "prepared"
    assert record.wait_s == 0.0 and turn.clock() == before  # the turn did not wait
    assert len(turn.model.prompts) == 1  # never twice for the same window
    assert any("step" in str(m.get("content")) for m in out[-4:])  # what came since stays verbatim
    status = engine.get_status()["ahead"]
    assert status["used"] == 1 and status["wasted"] == 0 and status["latency_s"] == LATENCY


def test_a_compaction_before_the_reply_is_ready_waits_only_for_the_rest():
    turn = Turn()
    while turn.engine.state.ahead.pending is None:
        turn.request()
    started = turn.engine.state.ahead._run.started
    assert turn.clock() - started < LATENCY  # the reply is due later on the turn's clock
    engine = turn.engine
    engine.compress(turn.msgs, engine.threshold_tokens)  # the trigger came early (e.g. a huge tool output)
    record = engine.state.compaction_log[-1]
    assert record.summary_source == "prepared" and len(turn.model.prompts) == 1
    assert record.wait_s == round(started + LATENCY - (turn.clock() - record.wait_s), 3)
    assert turn.clock() == started + LATENCY  # the turn waited exactly until the reply came


def test_at_most_one_preparation_runs_at_a_time():
    release = threading.Event()
    calls: list[str] = []

    called = threading.Event()

    def blocking(prompt: str, runtime: dict[str, Any]) -> str:
        calls.append(prompt)
        called.set()
        release.wait(30)
        return GOOD_SUMMARY

    turn = Turn(model=blocking)
    try:
        while turn.engine.state.ahead.pending is None:
            turn.engine.prepare_during_turn(turn.msgs, turn.size())
            turn.steps += 1
            turn.msgs += tool_turn([f"b{turn.steps}"], ["y" * 2_400 + str(turn.steps)])
            turn.clock.advance(STEP)
        assert called.wait(30)  # the worker thread has reached the model (it may start late on a loaded machine)
        for i in range(10):  # the turn goes on while the model is still writing
            turn.msgs += tool_turn([f"c{i}"], ["z" * 2_400 + str(i)])
            turn.engine.prepare_during_turn(turn.msgs, turn.size())
        assert turn.engine.state.ahead.status().state == "running" and len(calls) == 1
    finally:
        release.set()
        turn.engine.state.ahead.settle()


def test_a_preparation_the_history_outgrew_is_dropped_and_counted_as_wasted():
    turn = Turn(stowage={"view": {"enabled": False}, "compaction": {"prepare_at": 0.9}})
    while turn.engine.state.ahead.pending is None:
        turn.request()
    turn.engine.state.ahead.settle()
    first = turn.engine.state.ahead.pending
    slack = int(turn.engine.threshold_tokens * 0.1)
    plan = turn.engine.state.compaction_plan(turn.engine.limits)
    count = turn.engine.state.counter.estimate_message
    usable = 0
    for step in range(200):  # long answers: once they leave the token-budget tail they stay whole after the window
        turn.msgs += [{"role": "user", "content": f"next {step}"}, {"role": "assistant", "content": "why " * 600}]
        since = arrived_since(turn.msgs, plan, count, first)
        turn.engine.prepare_during_turn(turn.msgs, turn.size())
        if turn.engine.state.ahead.pending is not first:
            break
        assert since is not None and since <= slack  # kept while the compaction would still use it
        usable += 1
    assert usable > 5  # the whole history grew far past the slack long before: that alone drops nothing
    status = turn.engine.state.ahead.status()
    assert status.discard_reasons.get("outgrown before its compaction came") == 1
    assert status.wasted == 1 and status.wasted_tokens > 0
    assert turn.engine.state.ahead.pending is not first


def test_a_huge_newest_output_does_not_outgrow_the_prepared_window():
    """The compactor's rule decides, not the history's size: a huge output stays in the verbatim tail."""
    turn = Turn(stowage={"view": {"enabled": False}, "compaction": {"prepare_at": 0.9}})
    while turn.engine.state.ahead.pending is None:
        turn.request()
    turn.engine.state.ahead.settle()
    first = turn.engine.state.ahead.pending
    slack = int(turn.engine.threshold_tokens * 0.1)
    turn.msgs += tool_turn(["huge"], ["w" * (slack * 6)])  # the whole history grows past the slack at once
    turn.engine.prepare_during_turn(turn.msgs, turn.size())
    assert turn.engine.state.ahead.pending is first and turn.engine.state.ahead.status().discarded == 0
    turn.clock.advance(LATENCY)
    out = turn.engine.compress(turn.msgs, turn.engine.threshold_tokens)
    record = turn.engine.state.compaction_log[-1]
    assert record.summary_source == "prepared" and record.wait_s == 0.0 and len(turn.model.prompts) == 1
    assert any("w" * 1000 in str(m.get("content")) for m in out)  # the huge output kept verbatim in the tail


def test_prepare_at_zero_keeps_the_request_path_quiet():
    turn = Turn(stowage={"view": {"enabled": False}, "compaction": {"prepare_at": 0}})
    for _ in range(40):
        turn.request()
    assert turn.model.prompts == [] and turn.engine.state.ahead.status().prepared == 0
