"""The background summary: at most one per engine, used by the compaction it was written for.

:class:`AheadSummaries` holds one :class:`~.job.SummaryJob` and the thread
writing its reply.  The compaction asks it (through the compactor's
``PreparedSummaries`` protocol) for the window to summarize and for the
reply to a prompt; only a reply whose key matches is ever returned, and a
running one is waited for, within the compaction's one deadline, rather
than calling the model a second time.  One summary call is in flight at a
time: a call made ahead that has not returned (for another window, or
dropped as outgrown) blocks a new preparation, and the compaction waits for
it before calling the model itself; a hung model costs one call and one
timeout.  Whatever is not used is discarded
and counted: it was a wasted call.

A failed call is counted once, by whoever holds the job when it fails:
while it is pending, ``on_failure`` tells the governor (the cooldown starts
then, and a compaction during it writes the fallback summary); once a
compaction has claimed it, the failure is that compaction's own (raised to
the compactor, which falls back or aborts and reports it).  A reply that
never came within the deadline is the compaction's timeout.

Time is read from ``clock`` (monotonic seconds; a replay's simulated clock,
``replay/clock.py``, through :meth:`AheadSummaries.use_clock`): when each
call started and finished, so the :class:`~.pace.Pace` learns the model's
latency and each use says how long the compaction waited.

Nothing here outlives its session: ``discard`` drops the job (a reply that
still arrives is thrown away), a deep copy (a new agent, a guest engine)
starts empty, and a forked child forgets the parent's thread.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import weakref
from typing import Any, Callable

from ..chat.messages import Message
from ..compaction.boundaries import Window
from ..compaction.inputs import CompactionPlan
from ..compaction.window_choice import PREPARED_OVERRUN, prepared_slack
from ..records.part_status import AheadStatus, PreparedUse
from ..redaction.shown import shown_error
from ..summary.deadline import SummaryDeadline
from ..summary.reply import SummaryFailure, clean_reply
from .job import CountFn, SummaryJob, arrived_since, job_key, prefix_miss, prepared_prefix
from .pace import Pace

logger = logging.getLogger(__name__)

Summarizer = Callable[[str], str]
FailureHook = Callable[[], None]
Clock = Callable[[], float]
STUB_MARGIN = 0.05  # of the slack: the store's stubs name a handle, a little longer than plain ones


def _already_there(moment: float) -> None:
    """A real clock's wait for a reply has already happened (the thread waited on its event)."""


class _Run:
    """One job and the thread writing its reply."""

    def __init__(self, job: SummaryJob, clock: Clock, prompt_tokens: int = 0) -> None:
        self.job = job
        self.clock = clock
        self.prompt_tokens = prompt_tokens
        self.done = threading.Event()
        self.reply: str | None = None
        self.error: str | None = None
        self.failure: Exception | None = None
        self.started = clock()
        self.finished_at: float | None = None
        # who holds the job (under AheadSummaries._lock): a compaction claimed it, or it was dropped
        self.claimed = self.dropped = False
        self.counted = False  # its failure reached the governor while it was pending

    def work(self, summarize: Summarizer, failed: Callable[["_Run"], None]) -> None:
        try:
            self.reply = clean_reply(summarize(self.job.prompt))
        except Exception as exc:  # noqa: BLE001 - reported below, never raised on this thread
            self.error, self.failure = shown_error(exc), exc
            failed(self)  # before done is set: a compaction that sees it done sees it counted
        finally:
            self.finished_at = self.clock()  # this thread's time (a simulated clock keeps one per thread)
            self.done.set()


class AheadSummaries:
    """At most one summary written ahead, and the figures of how they were used."""

    def __init__(self) -> None:
        self._init_state()
        _LIVE.add(self)

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._run: _Run | None = None
        # the newest summary call made ahead, until it returns: dropped or claimed, it is still the model's one call
        self._calling: _Run | None = None
        self.counts = {"prepared": 0, "used": 0, "discarded": 0, "failed": 0, "wasted_tokens": 0}
        self.pace = Pace()  # recent requests and the model's latency: when to start (pace.due)
        self.clock: Clock = time.monotonic
        self.advance_to: Callable[[float], None] = _already_there
        self.discard_reasons: dict[str, int] = {}  # why preparations were wasted (the status says)
        self.last_use: PreparedUse | None = None  # of the last compaction: prepared ahead? waited how long?
        self._since: list[str] = []  # what happened to preparations since the last compaction (why it waited)
        self._prefix_miss: str | None = None  # why the last window_for kept the compaction's own window

    def __deepcopy__(self, memo: dict[int, Any]) -> "AheadSummaries":
        """A new agent or guest engine starts empty: no thread and no reply is shared."""
        clone = AheadSummaries()
        memo[id(self)] = clone
        return clone

    def use_clock(self, clock: Any) -> None:
        """Read time from ``clock`` (a replay's simulated clock: callable, with ``advance_to``)."""
        self.clock = clock
        self.advance_to = getattr(clock, "advance_to", _already_there)

    # -- preparing ----------------------------------------------------------------
    @property
    def pending(self) -> SummaryJob | None:
        run = self._run
        return run.job if run is not None else None

    @property
    def running(self) -> bool:
        """A summary call made ahead has not returned yet, even one dropped since: never start a second one.

        A hung model then costs one call, however often the history outgrows
        the window it was asked for.
        """
        return self.call_in_flight() is not None

    def call_in_flight(self) -> _Run | None:
        """The summary call made ahead that has not returned yet (pending, claimed or dropped), or None."""
        run = self._calling
        return run if run is not None and not run.done.is_set() else None

    def start(
        self, job: SummaryJob, summarize: Summarizer, on_failure: FailureHook | None = None, *, prompt_tokens: int = 0
    ) -> None:
        """Write ``job``'s reply on a daemon thread (any earlier job is discarded).

        ``on_failure`` (the governor's failure count) is called on that thread
        if the call fails while the job is still pending; ``prompt_tokens`` is
        counted as wasted if no compaction uses the reply.
        """
        run = _Run(job, self.clock, prompt_tokens)
        with self._lock:
            self._drop_locked("replaced by a newer window")
            self._run = self._calling = run
            self.counts["prepared"] += 1
            self._since.append("started")

        def failed(failed_run: _Run) -> None:
            with self._lock:
                failed_run.counted = not (failed_run.claimed or failed_run.dropped)
            if failed_run.counted:
                logger.info("stowage: the summary prepared ahead failed (%s)", failed_run.error)
                if on_failure is not None:
                    on_failure()

        threading.Thread(target=run.work, args=(summarize, failed), name="stowage-ahead", daemon=True).start()

    def writing(self) -> bool:
        """A preparation's reply is still to come (on this engine's clock); a failed one is not."""
        run = self._run
        if run is None:
            return False
        if not run.done.is_set():
            return True
        return run.reply is not None and run.finished_at is not None and run.finished_at > self.clock()

    def ready(self) -> bool:
        """A preparation has its reply by now (on this engine's clock)."""
        run = self._run
        if run is None or not run.done.is_set() or run.reply is None or run.finished_at is None:
            return False
        return run.finished_at <= self.clock()

    def review(self, messages: list[Message], plan: CompactionPlan, count: CountFn, *, due_now: bool = False) -> None:
        """Before a request: drop the pending preparation once the compaction could no longer use it.

        The compactor's own rule decides (:func:`.job.arrived_since`): the
        prepared window is a clean prefix of the window it would choose and
        what arrived since, plus one request's measured growth (the next
        compaction check sees one more request), fits
        :func:`..compaction.window_choice.prepared_slack`.  Dropped now, a new one can start
        in time (at most one runs at a time).  A reply due within k requests
        (:meth:`_requests_until_ready`) is taken as soon as it is ready, so the
        compactor's own limit applies (``PREPARED_OVERRUN`` times the slack) to
        what arrived since plus k requests' growth.  ``due_now``: the
        compaction only waits for this reply (``policy.decision``: await):
        that limit, with no growth to come.
        """
        run = self._run
        if run is None:
            return
        since = arrived_since(messages, plan, count, run.job)
        if due_now:
            limit, growth = PREPARED_OVERRUN * prepared_slack(plan), 0.0
        elif (left := self._requests_until_ready(run)) is not None:
            limit, growth = PREPARED_OVERRUN * prepared_slack(plan), left * (self.pace.history_growth() or 0.0)
        else:
            limit, growth = prepared_slack(plan), self.pace.history_growth() or 0.0
        if since is None or since + growth > limit * (1 - STUB_MARGIN):
            self.discard("outgrown before its compaction came")

    def _requests_until_ready(self, run: _Run) -> int | None:
        """Requests before ``run``'s reply is expected (at the model's observed latency), None when not known."""
        latency, interval = self.pace.latency_s, self.pace.seconds_per_request()
        if latency is None or not interval or interval <= 0:
            return None
        return max(1, math.ceil((run.started + latency - self.clock()) / interval))

    def keeps(self, messages: list[Message]) -> bool:
        """True when the pending job is still a clean prefix of what ``messages`` would compact."""
        run = self._run
        if run is None:
            return False
        job = run.job
        return prepared_prefix(messages, Window(job.window.head_end, len(messages)), job) is not None

    # -- the compaction (compactor.PreparedSummaries) --------------------------------
    def window_for(self, messages: list[Message], window: Window) -> Window:
        run = self._run
        self._prefix_miss = None
        if run is None:
            return window
        prefix = prepared_prefix(messages, window, run.job)
        if prefix is None:
            self._prefix_miss = prefix_miss(messages, window, run.job)
        return prefix if prefix is not None else window

    def reply_for(self, prompt: str, window: list[Message], deadline: SummaryDeadline) -> str | None:
        """The prepared reply for this exact prompt and window; None sends the compaction to the model.

        A running preparation is waited for within ``deadline``.  Raises
        :class:`SummaryFailure` (or the call's own error) when the reply did
        not come in time or the call failed while this compaction waited:
        either is this compaction's failed summary call, never followed by a
        second one.  A call that had already failed before (the governor
        counted it then) sends the compaction to the model, which it reaches
        only outside the cooldown.  The job is consumed either way: a
        compaction changes the history, so a reply for another window could
        never be used afterwards.
        """
        with self._lock:
            run, self._run = self._run, None
            if run is not None:
                run.claimed = True
            since, self._since = self._since, []
        started = time.monotonic()
        if run is None:
            self.last_use = PreparedUse(outcome="none", why=self._why_none(since))
            self._await_call_in_flight(deadline)
            return None
        if run.job.key != job_key(prompt, window):
            self._count("discarded", "another window or prompt at compaction", run)
            why = self._prefix_miss or (
                "the prepared window's tail was too long: the whole window was summarized"
                if len(window) != run.job.window.size
                else "another prompt for the same window"
            )
            self.last_use = PreparedUse(outcome="stale", why=why)
            self._await_call_in_flight(deadline)
            return None
        if run.done.is_set() and run.counted:
            self._count("failed", None, run)
            self.last_use = PreparedUse(outcome="failed earlier", error=run.error or "")
            return None
        claimed_at = self.clock()
        finished = deadline.wait(run.done)
        waited = round((time.monotonic() - started) * 1000, 1)
        if finished and run.finished_at is not None:
            self.pace.observe_latency(run.finished_at - run.started)
            if run.finished_at > claimed_at:  # the reply came after the compaction asked for it
                self.advance_to(run.finished_at)
                waited = max(waited, round((run.finished_at - claimed_at) * 1000, 1))
        if not finished or run.reply is None:
            self._count("failed", None, run)
            reason = run.error or f"no reply within the compaction's {deadline.describe()} deadline"
            logger.info("stowage: the summary prepared ahead failed (%s); writing the fallback summary", reason)
            self.last_use = PreparedUse(outcome="failed", wait_s=round(waited / 1000, 4), error=reason)
            if not finished:  # claimed: its late failure is not counted again, this compaction reports the timeout
                raise SummaryFailure("timeout", f"the summary model timed out (prepared ahead, {reason})")
            raise run.failure if run.failure is not None else SummaryFailure("error", reason)
        self._count("used")
        self.last_use = PreparedUse(
            outcome="used", prepared=True, wait_s=round(waited / 1000, 4), lead_s=round(self.clock() - run.started, 4)
        )
        return run.reply

    def _await_call_in_flight(self, deadline: SummaryDeadline) -> None:
        """Before the compaction calls the model itself: a call made ahead that has not returned is waited for.

        The compaction calls only once that call came back with a reply within
        its deadline (the model answers; the reply was for another window).
        If it did not come back, or came back failed, the model is hung or
        failing: that is the compaction's failed summary, with no second call
        (raises :class:`SummaryFailure`; the fallback summary is written).
        """
        flight = self.call_in_flight()
        if flight is None:
            return
        started = time.monotonic()
        returned = deadline.wait(flight.done)
        if returned and flight.reply is not None:
            return
        if returned and isinstance(flight.failure, SummaryFailure):
            raise flight.failure  # its own kind: an auth or quota failure aborts the compaction, as the call would
        waited = round(time.monotonic() - started, 4)
        reason = (
            f"the summary call made ahead failed ({flight.error})"
            if returned
            else f"the summary call made ahead did not return within the compaction's {deadline.describe()} deadline"
        )
        logger.info("stowage: %s; the model is not called again, writing the fallback summary", reason)
        self.last_use = PreparedUse(outcome="failed", wait_s=waited, error=reason)
        raise SummaryFailure("timeout" if not returned else "error", f"the summary model failed ({reason})")

    def _why_none(self, since: list[str]) -> str:
        """Why a compaction found nothing prepared (what happened since the last one)."""
        drops = [event for event in since if event.startswith("dropped")]
        if drops:
            return drops[-1]
        if len(self.pace.requests) < 2:
            return "nothing started: fewer than two requests measured since the last compaction"
        return "nothing started: not due yet"

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until a running preparation has its reply (replays bill every call; never on a turn's path)."""
        run = self._run
        if run is not None:
            run.done.wait(timeout)

    def begin_compaction(self) -> None:
        """Forget the last compaction's figures (set again by :meth:`reply_for`)."""
        self.last_use = None

    # -- ending ---------------------------------------------------------------------
    def discard(self, reason: str = "discarded") -> None:
        """Drop the pending job (session end or reset); a reply still arriving is thrown away."""
        with self._lock:
            self._drop_locked(reason)

    def _drop_locked(self, reason: str) -> None:
        if self._run is not None:
            self._run.dropped = True
            self.counts["discarded"] += 1
            self.counts["wasted_tokens"] += self._run.prompt_tokens
            self.discard_reasons[reason] = self.discard_reasons.get(reason, 0) + 1
            self._since.append(f"dropped: {reason}")
            logger.debug("stowage: dropped a summary prepared ahead (%s)", reason)
            self._run = None

    def _count(self, name: str, reason: str | None = None, wasted: _Run | None = None) -> None:
        with self._lock:
            self.counts[name] += 1
            if wasted is not None:
                self.counts["wasted_tokens"] += wasted.prompt_tokens
            if reason is not None:
                self.discard_reasons[reason] = self.discard_reasons.get(reason, 0) + 1

    def status(self, prepare_at: float = 0.0) -> AheadStatus:
        """What was prepared and used; ``prepare_at`` is the setting that starts a preparation (0: never)."""
        run = self._run
        counts = self.counts
        return AheadStatus(
            prepare_at=float(prepare_at),
            prepared=counts["prepared"],
            used=counts["used"],
            discarded=counts["discarded"],
            failed=counts["failed"],
            wasted=counts["discarded"] + counts["failed"],
            wasted_tokens=counts["wasted_tokens"],
            latency_s=None if self.pace.latency_s is None else round(self.pace.latency_s, 2),
            state="idle" if run is None else "ready" if run.done.is_set() else "running",
            discard_reasons=dict(self.discard_reasons),
            last=self.last_use,
        )


_LIVE: "weakref.WeakSet[AheadSummaries]" = weakref.WeakSet()


def _forget_after_fork() -> None:
    """A forked child has none of the parent's threads: a pending job would never finish."""
    for ahead in list(_LIVE):
        ahead._lock = threading.Lock()
        ahead._run = ahead._calling = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
