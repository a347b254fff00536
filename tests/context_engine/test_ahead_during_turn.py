"""Summaries prepared during a long turn: started on the request path when the measured pace says so, and used.

Time is a replay's simulated clock (``replay/clock.py``): the summary model
advances its own thread's time by its latency, each request moves the
turn's time on, so the decisions and the waits are exact, not timed.
"""

from __future__ import annotations

import random
import threading
from functools import partial
from typing import Any

from stowage.command.replay.offline.clock import SimClock
from stowage.context_engine.ahead.job import arrived_since
from stowage.context_engine.ahead.pace import MARGIN_REQUESTS, Pace, due
from stowage.context_engine.compaction.window_choice import PREPARED_OVERRUN
from stowage.context_engine.policy.rules import AWAIT_CEILING, AWAIT_REQUESTS, OverTrigger, await_over_trigger

from .helpers import GOOD_SUMMARY, history, make_engine, tool_turn

LATENCY = 8.0  # seconds the summary model takes
STEP = 2.0  # seconds a main request takes


class SlowModel:
    """A summary model that takes ``LATENCY`` seconds on the simulated clock."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.prompts: list[str] = []

    def __call__(self, prompt: str, runtime: dict[str, Any], timeout: float | None = None) -> str:
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

    def blocking(prompt: str, runtime: dict[str, Any], timeout: float | None = None) -> str:
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
        # kept while the compaction would still use it: its reply is due within a few requests, and the compaction
        # takes it as soon as it is ready, with up to PREPARED_OVERRUN times the slack arrived since
        assert since is not None and since <= PREPARED_OVERRUN * slack
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


def _huge_step_while_writing(turn: Turn, over: float) -> int:
    """A preparation is running; one tool output takes the request to ``over`` times the trigger."""
    while turn.engine.state.ahead.pending is None:
        turn.request()
    assert turn.engine.state.ahead.writing()  # the reply is due later on the turn's clock
    threshold = turn.engine.threshold_tokens
    turn.msgs += tool_turn(["huge"], ["w" * int((over - 1) * threshold * 3.5)])
    return max(turn.size(), int(over * threshold))


def test_a_huge_step_over_the_trigger_waits_for_the_running_summary_without_blocking():
    """Crossing the trigger while the summary is being written: requests go on, the compaction comes when ready."""
    turn = Turn(stowage={"view": {"enabled": False}, "compaction": {"prepare_at": 0.85}})
    engine = turn.engine
    tokens = _huge_step_while_writing(turn, 1.1)
    assert tokens <= 0.9 * engine.context_length
    assert not engine.should_compress(tokens)  # not blocking the turn for the reply still being written
    while engine.state.ahead.writing():  # the turn goes on over the trigger, one request at a time
        assert not engine.should_compress(tokens)
        engine.prepare_during_turn(turn.msgs, tokens)
        turn.clock.advance(STEP)
    assert engine.state.ahead.pending is not None  # kept: the compactor would still use it (twice the slack)
    assert engine.should_compress(tokens)  # ready now: compact
    engine.compress(turn.msgs, tokens)
    record = engine.state.compaction_log[-1]
    assert record.summary_source == "prepared" and record.wait_s == 0.0
    assert len(turn.model.prompts) == 1  # never two calls for the same window


def test_near_the_window_the_compaction_waits_for_the_running_summary():
    """Over the ceiling the next step might not fit the window: compact now, waiting for the rest of the reply."""
    turn = Turn(stowage={"view": {"enabled": False}, "compaction": {"prepare_at": 0.85}})
    engine = turn.engine
    _huge_step_while_writing(turn, 1.3)
    near = int(0.95 * engine.context_length)
    assert engine.should_compress(near)
    engine.compress(turn.msgs, near)
    record = engine.state.compaction_log[-1]
    assert record.summary_source == "prepared" and record.wait_s > 0 and len(turn.model.prompts) == 1


# -- over the trigger with nothing being written (the huge step the band never saw coming) ------------------


def test_await_over_trigger_rules():
    window = 100_000
    await_ = partial(await_over_trigger, window=window)
    assert await_(50_000, over=OverTrigger(5, started=True), writing=True, prepared=False)  # written: go on
    too_large = int(AWAIT_CEILING * window) + 1  # the next large step might not fit the window
    assert not await_(too_large, over=OverTrigger(0), writing=True, prepared=False)
    assert not await_(50_000, over=OverTrigger(0), writing=False, prepared=True)  # ready: compact
    # nothing written: the first requests go on and start nothing, the next one starts it, once
    assert await_(50_000, over=OverTrigger(0), writing=False, prepared=False)
    assert await_(50_000, over=OverTrigger(AWAIT_REQUESTS), writing=False, prepared=False)
    assert not await_(50_000, over=OverTrigger(AWAIT_REQUESTS, started=True), writing=False, prepared=False)
    assert not await_(50_000, over=OverTrigger(AWAIT_REQUESTS + 1), writing=False, prepared=False)
    assert not OverTrigger(AWAIT_REQUESTS - 1).may_start()
    assert OverTrigger(AWAIT_REQUESTS).may_start() and not OverTrigger(AWAIT_REQUESTS, started=True).may_start()


def _jump_over_the_trigger(turn: Turn, over: float, *, hook: bool = True) -> int:
    """One ordinary request (nothing prepared: under the band), then one output takes the request over the trigger."""
    if hook:
        turn.request()
    else:  # a host whose pre_api_request hook never reaches the engine
        turn.engine.update_from_response({"prompt_tokens": turn.size()})
    assert turn.engine.state.ahead.pending is None
    threshold = turn.engine.threshold_tokens
    probe = tool_turn(["huge"], ["w" * 10_000])
    per_char = (sum(turn.engine.state.counter.estimate_message(m) for m in probe) - 100) / 10_000
    turn.msgs += tool_turn(["huge"], ["w" * int((over * threshold - turn.size()) / per_char)])
    tokens = turn.size()
    assert threshold <= tokens <= AWAIT_CEILING * turn.engine.context_length
    return tokens


def _request_over(turn: Turn, tokens: int, *, hook: bool = True) -> None:
    if hook:
        turn.engine.prepare_during_turn(turn.msgs, tokens)  # the host's pre_api_request hook
    turn.engine.state.ahead.settle()
    turn.clock.advance(STEP)
    turn.engine.update_from_response({"prompt_tokens": tokens})


class GatedModel:
    """A summary model that writes until the test releases it: "still being written" holds as long as the test
    needs, whatever the threads' timing (a model that returns at once let the job finish between the test's
    ``writing()`` and ``should_compress`` on a loaded machine)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.release = threading.Event()

    def __call__(self, prompt: str, runtime: dict[str, Any], timeout: float | None = None) -> str:
        self.prompts.append(prompt)
        self.release.wait(30)
        return GOOD_SUMMARY


def test_over_the_trigger_with_nothing_written_the_requests_go_on_then_one_starts_it():
    """A jump the band never saw: no 10 s wait; the summary is started a few requests later, the compaction then."""
    model = GatedModel()
    turn = Turn(stowage={"compaction": {"prepare_at": 0.85}}, model=model)
    engine = turn.engine
    try:
        tokens = _jump_over_the_trigger(turn, 1.1)
        for _ in range(AWAIT_REQUESTS):  # the newest output may be stubbed by the view once it is no longer hot
            assert not engine.should_compress(tokens)
            _request_over(turn, tokens)
            assert engine.state.ahead.pending is None and model.prompts == []
        assert not engine.should_compress(tokens)
        engine.prepare_during_turn(turn.msgs, tokens)  # still over: this request starts the summary
        for _ in range(3):  # while it is being written, the requests go on
            assert engine.state.ahead.writing() and not engine.should_compress(tokens)
            turn.clock.advance(STEP)
            engine.update_from_response({"prompt_tokens": tokens})
    finally:
        model.release.set()
    engine.state.ahead.settle()
    assert not engine.state.ahead.writing() and engine.should_compress(tokens)
    engine.compress(turn.msgs, tokens)
    record = engine.state.compaction_log[-1]
    assert record.summary_source == "prepared" and record.wait_s == 0.0 and len(model.prompts) == 1


def test_a_host_that_never_starts_it_compacts_after_the_requests_over():
    """The hook ran once, then no more: after the requests over, the compaction calls the model itself."""
    turn = Turn(stowage={"compaction": {"prepare_at": 0.85}})
    engine = turn.engine
    tokens = _jump_over_the_trigger(turn, 1.1)
    for _ in range(AWAIT_REQUESTS + 1):
        assert not engine.should_compress(tokens)
        _request_over(turn, tokens, hook=False)
    assert engine.should_compress(tokens)
    engine.compress(turn.msgs, tokens)
    record = engine.state.compaction_log[-1]
    assert record.summary_source == "model" and len(turn.model.prompts) == 1


def test_without_the_pre_api_request_hook_nothing_is_awaited():
    """A host that never reaches prepare_during_turn cannot start a summary over the trigger: compact at once."""
    turn = Turn(stowage={"compaction": {"prepare_at": 0.85}})
    tokens = _jump_over_the_trigger(turn, 1.1, hook=False)
    assert not turn.engine.host.history_before_requests
    assert turn.engine.should_compress(tokens)


def test_the_check_after_a_tool_batch_passes_the_real_figure():
    """0.17-0.19 ask should_compress(last real prompt) after a tool batch: that is the request as sent."""
    engine = make_engine(stowage={"view": {"enabled": True}})
    engine.state.defer_preflight(20_000, engine.threshold_tokens, False)
    engine.update_from_response({"prompt_tokens": 50_000})
    assert engine.state.request_as_sent(engine.host, 50_000) == 50_000


def test_the_request_estimate_ignores_the_preflight_raising_the_hosts_figure():
    """A preflight that is not deferred raises last_prompt_tokens to its whole-history figure; the estimate of the
    request as sent stays on the last real prompt plus the rough growth since (not the whole history twice)."""
    engine = make_engine(stowage={"view": {"enabled": True}})
    state = engine.state
    state.defer_preflight(60_000, engine.threshold_tokens, False)  # the question before a request
    engine.update_from_response({"prompt_tokens": 20_000})  # that request's real size (the view sent less)
    state.defer_preflight(61_000, engine.threshold_tokens, False)
    engine.last_prompt_tokens = 61_000  # the host's preflight raises it (turn_context.py)
    assert state.request_as_sent(engine.host, 61_000) == 21_000
