"""The session's next summary, prepared ahead: started at a turn's end or during a long turn.

:class:`Preparation` (a base of ``SessionState``) decides when to start a
summary on a background thread (``.ahead`` holds the job, ``.ahead.pace``
the timing; ``policy.decision`` whether to start); the compaction then finds it ready
(``policy.decision``: ``prepared_ready``) and the turn does not wait for the model.
Preparing ahead must never cost the turn anything: any failure is logged
and the compaction calls the model itself.
"""

from __future__ import annotations

import logging
from typing import Any

from ..ahead import build_job
from ..ahead.job import kept_size
from ..ahead.pace import due
from ..policy.decision import OVER_TRIGGER, Action, Asked, decide
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
        Whether to start is :func:`..policy.decision.decide`'s (``Asked.TURN_END``).
        """
        full = self.request_log[-1].full if self.request_log else 0
        previous, self.turn_end_full = self.turn_end_full, full
        if not isinstance(messages, list):
            return
        turn_growth = full - previous if previous and full >= previous else None  # None: first turn, or compacted
        decision = decide(self.pressure(Asked.TURN_END, limits, host, self.last_prompt_tokens, turn_growth=turn_growth))
        if decision.start:
            self._start(limits, messages, "ahead")

    def prepare_during_turn(self, limits: Limits, host: HostFacts, messages: Any, approx_tokens: Any = None) -> None:
        """Before each request: start the coming compaction's summary once :func:`.ahead.pace.due` says it is time.

        ``messages`` is the live history (the ``pre_api_request`` hook's);
        ``approx_tokens`` the host's estimate of the request (what its pre-API
        check compares with the trigger).  At most one preparation runs at a
        time, and a pending one that is still a prefix of the history is kept:
        within a turn the history only grows, so the compaction uses it and keeps
        what came since in its verbatim tail.  Whether preparing applies, and
        whether to start one now, is :func:`..policy.decision.decide`'s
        (``Asked.REQUEST``); the pace is measured on every request.
        """
        c = limits.settings.compaction
        ahead = self.ahead
        if not isinstance(messages, list) or not messages:
            return
        tokens = self.request_as_sent(host, as_int(approx_tokens))
        history_tokens = kept_size(messages, self.counter.estimate_message, c.prune_min_chars)
        ahead.pace.observe_request(ahead.clock(), tokens, history_tokens)
        slack = int(limits.threshold_tokens * (1 - c.prepare_at))
        is_due = due(tokens, limits.threshold_tokens, slack, ahead.pace)
        decision = decide(self.pressure(Asked.REQUEST, limits, host, tokens, sent=tokens, due=is_due))
        if decision.action is not Action.PREPARE:
            return
        if ahead.pending is not None:  # drop one the compaction could no longer use (ahead.review)
            ahead.review(
                messages, self.compaction_plan(limits), self.counter.estimate_message, due_now=decision.awaited
            )
        if ahead.running or not decision.start:
            return
        if decision.reason == OVER_TRIGGER:
            self.over_trigger.started = True  # once per compaction
            self._start(limits, messages, "over the trigger")
        else:
            self._start(limits, messages, "during the turn")

    def _start(self, limits: Limits, messages: list[Any], when: str) -> None:
        """Start the summary of the window ``compress()`` would choose now, unless one is kept or being written."""
        summarize = self.summarizer(limits)  # never while it cools down: the decision said so
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
