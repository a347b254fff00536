"""The session's next summary, prepared ahead: started at a turn's end or during a long turn.

:class:`Preparation` (a base of ``SessionState``) decides when to start a
summary on a background thread (``.ahead`` holds the job, ``.ahead.pace``
and ``.ahead.decide`` the timing); the compaction then finds it ready
(``CompactionRun.prepared_due``) and the turn does not wait for the model.
Preparing ahead must never cost the turn anything: any failure is logged
and the compaction calls the model itself.
"""

from __future__ import annotations

import logging
from typing import Any

from ..ahead import build_job, likely_used, should_prepare
from ..ahead.job import kept_size
from ..ahead.pace import due
from ..policy.thresholds import as_int
from ..records.host_facts import HostFacts
from .limits import Limits
from .parts import SessionParts

logger = logging.getLogger(__name__)


class Preparation(SessionParts):
    """When the session starts the next compaction's summary ahead."""

    def prepare_ahead(self, limits: Limits, host: HostFacts, messages: Any) -> None:
        """At turn end: start the next compaction's summary on a background thread once the request nears the trigger.

        ``messages`` is the live history, the list ``compress()`` will later
        receive.  A pending preparation that is still a prefix of it is kept.
        """
        c = limits.settings.compaction
        full = self.request_log[-1].full if self.request_log else 0
        previous, self.turn_end_full = self.turn_end_full, full
        if not isinstance(messages, list) or not should_prepare(
            self.last_prompt_tokens, limits.threshold_tokens, c.prepare_at
        ):
            return
        if not self.may_prepare(limits, host):
            return
        turn_growth = full - previous if previous and full >= previous else None  # None: first turn, or compacted
        if not likely_used(turn_growth, limits.threshold_tokens, c.prepare_at):
            return  # the next turn would outgrow the prepared window before its compaction: a wasted call
        self._start(limits, messages, "ahead")

    def prepare_during_turn(self, limits: Limits, host: HostFacts, messages: Any, approx_tokens: Any = None) -> None:
        """Before each request: start the coming compaction's summary once :func:`.ahead.pace.due` says it is time.

        ``messages`` is the live history (the ``pre_api_request`` hook's);
        ``approx_tokens`` the host's estimate of the request (what its pre-API
        check compares with the trigger).  At most one preparation runs at a
        time, and a pending one that is still a prefix of the history is kept:
        within a turn the history only grows, so the compaction uses it and keeps
        what came since in its verbatim tail.
        """
        c = limits.settings.compaction
        ahead = self.ahead
        if c.prepare_at <= 0 or not isinstance(messages, list) or not messages:
            return
        tokens = self.request_as_sent(host, as_int(approx_tokens))
        history_tokens = kept_size(messages, self.counter.estimate_message, c.prune_min_chars)
        ahead.pace.observe_request(ahead.clock(), tokens, history_tokens)
        if not self.may_prepare(limits, host):
            return
        if self.governor.compacted_this_turn():
            return  # this turn compacts no more (the next one starts from another history)
        slack = int(limits.threshold_tokens * (1 - c.prepare_at))
        # over the trigger the compaction waits for this summary, not for the model (CompactionRun.awaits_summary),
        # and takes it as soon as it is ready: judged by the compactor's own limit, also once the view's step took
        # this request back under the trigger
        over = tokens >= limits.threshold_tokens > 0
        if ahead.pending is not None:  # drop one the compaction could no longer use (ahead.review)
            awaited = over or self.over_trigger.awaiting
            ahead.review(messages, self.compaction_plan(limits), self.counter.estimate_message, due_now=awaited)
        if ahead.running:
            return
        if not over:
            if due(tokens, limits.threshold_tokens, slack, ahead.pace):
                self._start(limits, messages, "during the turn")
        elif self.over_trigger.may_start():
            self.over_trigger.started = True  # once per compaction
            self._start(limits, messages, "over the trigger")

    def _start(self, limits: Limits, messages: list[Any], when: str) -> None:
        """Start the summary of the window ``compress()`` would choose now, unless one is kept or being written."""
        summarize = self.summarizer(limits)
        if summarize is None:
            return  # cooling down: the compaction will use the fallback summary anyway
        with self.lock:
            try:
                if self.ahead.keeps(messages) or self.ahead.running:
                    return  # kept, or one is still being written: never two at a time
                self.calibrate(messages)  # as compress() does: the same window
                job = build_job(messages, self.compaction_plan(limits), self.counter.estimate_message)
                prompt_tokens = self.counter.count_text(job.prompt) if job is not None else 0
            except Exception:  # preparing ahead must never cost the turn anything
                logger.exception("stowage: could not prepare the next summary %s", when)
                return
            if job is not None:
                self.ahead.start(
                    job, summarize, on_failure=self.governor.record_summary_failure, prompt_tokens=prompt_tokens
                )
