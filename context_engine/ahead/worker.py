"""The background summary: at most one per engine, used by the compaction it was written for.

:class:`AheadSummaries` holds one :class:`~.job.SummaryJob` and the thread
writing its reply.  The compaction asks it (through the compactor's
``PreparedSummaries`` protocol) for the window to summarize and for the
reply to a prompt; only a reply whose key matches is ever returned, and a
running one is waited for rather than calling the model a second time.
Whatever is not used is discarded and counted: it was a wasted call.

Nothing here outlives its session: ``discard`` drops the job (a reply that
still arrives is thrown away), a deep copy (a new agent, a guest engine)
starts empty, and a forked child forgets the parent's thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from typing import Any, Callable

from ..boundaries import Window
from ..messages import Message
from ..summary import clean_reply
from .job import SummaryJob, job_key, prepared_prefix

logger = logging.getLogger(__name__)

Summarizer = Callable[[str], str]


class _Run:
    """One job and the thread writing its reply."""

    def __init__(self, job: SummaryJob) -> None:
        self.job = job
        self.done = threading.Event()
        self.reply: str | None = None
        self.error: str | None = None
        self.started = time.monotonic()

    def work(self, summarize: Summarizer) -> None:
        try:
            self.reply = clean_reply(summarize(self.job.prompt))
        except Exception as exc:  # noqa: BLE001 - a failed preparation only means the sync path runs
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()


class AheadSummaries:
    """At most one summary written ahead, and the figures of how they were used."""

    def __init__(self, wait_seconds: float = 300.0) -> None:
        self.wait_seconds = wait_seconds  # how long a compaction waits for a running preparation
        self._init_state()
        _LIVE.add(self)

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._run: _Run | None = None
        self.counts = {"prepared": 0, "used": 0, "discarded": 0, "failed": 0}
        self.discard_reasons: dict[str, int] = {}  # why preparations were wasted (the status says)
        self.last_use: dict[str, Any] | None = None  # of the last compaction: prepared ahead? waited how long?

    def __deepcopy__(self, memo: dict[int, Any]) -> "AheadSummaries":
        """A new agent or guest engine starts empty: no thread and no reply is shared."""
        clone = AheadSummaries(self.wait_seconds)
        memo[id(self)] = clone
        return clone

    # -- preparing ----------------------------------------------------------------
    @property
    def pending(self) -> SummaryJob | None:
        run = self._run
        return run.job if run is not None else None

    def start(self, job: SummaryJob, summarize: Summarizer) -> None:
        """Write ``job``'s reply on a daemon thread (any earlier job is discarded)."""
        run = _Run(job)
        with self._lock:
            self._drop_locked("replaced by a newer window")
            self._run = run
            self.counts["prepared"] += 1
        threading.Thread(target=run.work, args=(summarize,), name="stowage-ahead", daemon=True).start()

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
        if run is None:
            return window
        prefix = prepared_prefix(messages, window, run.job)
        return prefix if prefix is not None else window

    def reply_for(self, prompt: str, window: list[Message]) -> str | None:
        """The prepared reply for this exact prompt and window; None sends the compaction to the model.

        The job is consumed either way: a compaction changes the history, so a
        reply for another window could never be used afterwards.
        """
        with self._lock:
            run, self._run = self._run, None
        started = time.monotonic()
        if run is None:
            self.last_use = {"prepared_ahead": False, "wait_ms": 0.0, "outcome": "none"}
            return None
        if run.job.key != job_key(prompt, window):
            self._count("discarded", "another window or prompt at compaction")
            self.last_use = {"prepared_ahead": False, "wait_ms": 0.0, "outcome": "stale"}
            return None
        finished = run.done.wait(self.wait_seconds)
        waited = round((time.monotonic() - started) * 1000, 1)
        if not finished or run.reply is None:
            self._count("failed")
            reason = run.error or f"no reply after {self.wait_seconds:g} s"
            logger.info("stowage: the summary prepared ahead failed (%s); summarizing now", reason)
            self.last_use = {"prepared_ahead": False, "wait_ms": waited, "outcome": "failed", "error": reason}
            return None
        self._count("used")
        self.last_use = {"prepared_ahead": True, "wait_ms": waited, "outcome": "used",
                         "prepared_ms": round((time.monotonic() - run.started) * 1000, 1)}
        return run.reply

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
            self.counts["discarded"] += 1
            self.discard_reasons[reason] = self.discard_reasons.get(reason, 0) + 1
            logger.debug("stowage: dropped a summary prepared ahead (%s)", reason)
            self._run = None

    def _count(self, name: str, reason: str | None = None) -> None:
        with self._lock:
            self.counts[name] += 1
            if reason is not None:
                self.discard_reasons[reason] = self.discard_reasons.get(reason, 0) + 1

    def status(self) -> dict[str, Any]:
        run = self._run
        state = "idle" if run is None else "ready" if run.done.is_set() else "running"
        return {**self.counts, "state": state, "discard_reasons": dict(self.discard_reasons)}


_LIVE: "weakref.WeakSet[AheadSummaries]" = weakref.WeakSet()


def _forget_after_fork() -> None:
    """A forked child has none of the parent's threads: a pending job would never finish."""
    for ahead in list(_LIVE):
        ahead._lock = threading.Lock()
        ahead._run = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
