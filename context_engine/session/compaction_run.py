"""The session's compactions: the governor's checks, :func:`..compaction.compactor.compact`, and its record.

The compactor does the work on plain messages; :class:`CompactionRun` (a
base of ``SessionState``) connects it to the session: when to compact,
which summarizer (or none while the model cools down), which plan, the
summary prepared ahead, and what the outcome changes (the host-read flags,
``compression_count``, the governor, the typed :class:`CompactionRecord` in
the log, the summary log on disk).  It also answers the two questions about
a compaction that does not run: the dry run (``/stowage preview``) and the
status line before one.  Whether to compact is :func:`..policy.decision.decide`'s,
for every one of them: this module gathers the figures and carries the answer out.
"""

from __future__ import annotations

import logging
from typing import Any

from ..chat.messages import Message, is_real_user_turn, last_index, message_text
from ..compaction.compactor import compact
from ..compaction.inputs import CompactionInputs, CompactionOutcome
from ..compaction.preview import CompactionPreview, preview_compaction
from ..config.settings import Settings
from ..policy.decision import ONCE_PER_TURN, Action, Asked, Decision, decide
from ..policy.request_count import SentRequest
from ..policy.rules import OverTrigger
from ..policy.thresholds import as_int
from ..records.compaction_record import LOG_LIMIT, CompactionRecord
from ..records.host_facts import HostFacts
from ..records.summary_log import append_summary, window_handle
from ..summary.deadline import SummaryDeadline
from .limits import Limits
from .parts import CompactionFlags, SessionParts

logger = logging.getLogger(__name__)

COOLDOWN_REASON = "the summary model is cooling down after a recent failure; used the fallback summary"


class CompactionRun(SessionParts):
    """The session's compactions, their decision, dry run and status line."""

    # -- the decision -----------------------------------------------------------------------
    def decide(self, tokens: int, limits: Limits, host: HostFacts | None = None, history: Any = None) -> Decision:
        """Compact at ``tokens``?  (``should_compress_info``: :meth:`Decision.host_answer`.)

        ``host`` None (the dry run) only answers: no summary is asked for or awaited.  ``history`` is the host's
        live history when the call brings it: the request it makes is counted with the tokenizer
        (``policy.decision.decide`` compacts first where it would pass the ceiling, whatever the host's
        characters/4 figure says, and lets requests go on over the trigger while the summary is written).
        """
        figures: dict[str, Any] = {}
        if host is not None:
            figures = {"counted": self.judged_request(history), "sent": self.request_as_sent(host, tokens, history)}
        decision = decide(
            self.pressure(Asked.CHECK if host is not None else Asked.DRY_RUN, limits, host, tokens, **figures)
        )
        if decision.action is Action.AWAIT:
            # its summary is being written: compact once it is ready; until then the compactor's own limit judges
            # that summary (ahead.review), even once the view took a request back under the trigger
            self.over_trigger.awaiting = True
        return decision

    # -- one compaction ---------------------------------------------------------------------
    def compact(
        self,
        limits: Limits,
        host: HostFacts,
        messages: list[Message],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
        memory_context: str,
        bypass_cooldown: bool,
    ) -> list[Message]:
        """One compaction at a time (the session's lock); the input list itself when nothing changed."""
        with self.lock:
            result = self._compact_locked(
                limits, host, messages, current_tokens, focus_topic, force, memory_context, bypass_cooldown
            )
        self.store.pin_request(result)  # the size cap spares what the compacted history points to, no more
        return result

    def _compact_locked(
        self,
        limits: Limits,
        host: HostFacts,
        messages: list[Message],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
        memory_context: str,
        bypass_cooldown: bool,
    ) -> list[Message]:
        self.flags = CompactionFlags()
        if not isinstance(messages, list) or not messages:
            return messages
        governor = self.governor
        newest = last_index(messages, is_real_user_turn)
        governor.observe_turn_key(message_text(messages[newest]) if newest >= 0 else None)
        # the request this history makes would still pass the ceiling (counted, e.g. a prepared window's longer tail
        # kept a large paste): compact again, even twice a turn
        to_fit = self.passes_ceiling(messages, limits, provider_count=False)  # the content itself is too large
        overflowing = self.passes_ceiling(messages, limits) or bool(
            current_tokens and limits.context_length and current_tokens >= limits.context_length
        )
        decision = decide(
            self.pressure(
                Asked.COMPRESS,
                limits,
                host,
                current_tokens or 0,
                forced=force,
                bypass_cooldown=bypass_cooldown,
                overflowing=overflowing,
            )
        )
        if not decision.compact:
            logger.info("stowage: already compacted this turn; skipping (use /compress to force)")
            return messages
        if decision.clear_cooldown:
            governor.clear_cooldown()
        compaction = limits.settings.compaction
        deadline = SummaryDeadline(compaction.summary_timeout_seconds)
        # cooling down: the fallback summary, and so no shorter prepared window either
        summarize = self.summarizer(limits, deadline) if decision.model_summary else None
        self.calibrate(messages)
        host.compress_gets_memory = host.compress_gets_memory or bool(memory_context)
        self.ahead.begin_compaction()
        self.over_trigger = OverTrigger()  # the next compaction starts afresh
        # the requests after it are counted afresh: until the next one is sent, the whole history is the growth
        self.sent_request = SentRequest.fixed_part_only(self.fixed_part.tokens)
        clock = self.ahead.clock
        started = clock()
        inputs = CompactionInputs(
            self.compaction_plan(limits, force=force, to_fit=to_fit),
            count=self.counter.estimate_message,
            summarize=summarize,
            focus_topic=focus_topic or None,
            memory_context=memory_context or "",
            archive=limits.archive or self.store.archive(),
            cooldown_reason=COOLDOWN_REASON,
            prepared=self.ahead if decision.use_prepared else None,
            deadline=deadline,
        )
        outcome = compact(messages, inputs)
        blocked_s = max(0.0, clock() - started)  # the turn waited this long (the host's compress() call)
        if outcome.stats.summary_source == "model" and not outcome.summary_error:
            self.ahead.pace.observe_latency(blocked_s)  # the summary call was most of it
        if outcome.changed:
            self.ahead.discard("the history it was written for was compacted")
        result = self._apply(outcome, limits, model_called=summarize is not None)
        record = self._log(
            outcome, result, messages, current_tokens=current_tokens, focus_topic=focus_topic, force=force
        )
        record.wait_s = round(blocked_s, 3)
        compacted = result in ("compacted", "fallback")
        if compacted:
            self._record_summary(outcome, limits)
        self.saw(outcome.messages if compacted else messages, "compaction")  # the history now, for /stowage preview
        return outcome.messages if compacted else messages

    # -- what a compaction would do, and what it will do ------------------------------------
    def preview(self, limits: Limits) -> CompactionPreview | None:
        """What a compaction of the last history the session saw would do now (no model call, no write).

        Hermes 0.19.0 gives a slash command no messages, so the preview works on
        the newest history the session saw; the result says how fresh that is.
        None before the session has seen any history.
        """
        seen = self.last_seen
        if seen is None:
            return None
        conversation = [m for m in seen.messages if isinstance(m, dict)]
        self.calibrate(conversation)  # as compress() does: the same estimates
        decision = self.decide(self.last_prompt_tokens, limits)
        return preview_compaction(
            seen,
            self.compaction_plan(limits),
            count=self.counter.estimate_message,
            last_prompt_tokens=max(self.last_prompt_tokens, 0),
            threshold_tokens=limits.threshold_tokens,
            would_compact=decision.compact,
            reason=None if decision.compact else decision.reason,
            compactions_so_far=self.compression_count,
        )

    def status_line(self, limits: Limits, context: dict[str, Any], default: str | None) -> str | None:
        """The user's status line before an automatic compaction (newer hosts): what Stowage will do.

        ``default`` (the host's own line) when it cannot be said: a status line must never break a compaction.
        """
        try:
            return self._status_line(limits, context)
        except Exception:  # a status line must never break a compaction
            logger.debug("stowage: status message failed", exc_info=True)
            return default

    def _status_line(self, limits: Limits, context: dict[str, Any]) -> str:
        approx = as_int(context.get("approx_tokens"))
        threshold = as_int(context.get("threshold_tokens")) or limits.threshold_tokens
        size = f" ({approx:,} of {threshold:,} tokens)" if approx and threshold else ""
        pressure = self.pressure(Asked.STATUS, limits, None, approx)
        decision = decide(pressure)
        if decision.reason == ONCE_PER_TURN:
            return f"Stowage: already compacted this turn; nothing to do{size}"
        if not decision.compact:
            return f"Stowage: not compacting, {pressure.backoff}{size}"
        if not decision.model_summary:
            return (
                f"Stowage: compacting{size}: storing old tool outputs and writing the fallback summary "
                f"(the summary model is cooling down, {int(pressure.cooldown_s)} s left)"
            )
        model = limits.model or "the summary model"
        return f"Stowage: compacting{size}: storing old tool outputs and summarizing older turns with {model}"

    # -- what the outcome changes ---------------------------------------------------------
    def _apply(self, outcome: CompactionOutcome, limits: Limits, *, model_called: bool) -> str:
        """What the outcome changes in the session; returns the record's ``result``."""
        flags, governor = self.flags, self.governor
        self.last_outcome = outcome
        model_failed = (
            bool(outcome.summary_error) and model_called and outcome.failure is not None and not outcome.failure.is_ours
        )  # our bug, not the model's
        if model_failed:
            governor.record_summary_failure()
            flags.aux_failure_model = limits.model
            flags.aux_failure_error = outcome.summary_error
        elif outcome.changed and not outcome.fallback_used:
            governor.record_summary_success()
        if outcome.aborted:
            flags.aborted = True
            flags.summary_error = outcome.summary_error
            return "aborted"
        if not outcome.changed:
            governor.record_noop()
            return "no-op"
        self.compression_count += 1
        governor.record_compaction()
        flags.made_progress = True
        flags.fallback_used = outcome.fallback_used
        flags.summary_error = outcome.summary_error
        return "fallback" if outcome.fallback_used else "compacted"

    def _log(
        self,
        outcome: CompactionOutcome,
        result: str,
        messages: list[Message],
        *,
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
    ) -> CompactionRecord:
        tokens_after = self._tokens_after(outcome, messages, current_tokens) if outcome.changed else None
        record = CompactionRecord.of(
            outcome,
            result,
            current_tokens=current_tokens,
            focus_topic=focus_topic,
            forced=force,
            tokens_after=tokens_after,
        )
        self.compaction_log.append(record)
        del self.compaction_log[:-LOG_LIMIT]
        logger.info(
            "stowage: compaction %s: %s",
            result,
            {
                "messages_before": record.messages_before,
                "messages_after": record.messages_after,
                "pruned_outputs": record.pruned_outputs,
                "window_messages": record.window_messages,
            },
        )
        return record

    def _tokens_after(self, outcome: CompactionOutcome, messages: list[Message], current_tokens: int | None) -> int:
        """The request after a compaction, on the same basis as ``current_tokens`` (the host's figure).

        The host measures the whole request (system prompt and tool schemas
        included; Hermes prints ``~before -> ~after`` that way), the messages
        are all a compaction changes: the rest is carried over unchanged.
        """
        after = sum(map(self.counter.estimate_message, outcome.messages))
        if not current_tokens:
            return after
        before = sum(self.counter.estimate_message(m) for m in messages if isinstance(m, dict))
        return after + max(0, current_tokens - before)

    def _record_summary(self, outcome: CompactionOutcome, limits: Limits) -> None:
        """Keep the summary as it went into the history, where ``stowage summary`` reads it."""
        if outcome.summary_body is None:
            return  # only outputs were pruned: there is no summary to show
        record = self.compaction_log[-1]
        append_summary(
            self.store.root,
            self.session_id,
            {
                "compaction": self.compression_count,
                **record.summary_fields(),
                "fallback_used": outcome.fallback_used,
                "model": limits.model,
                "window_handle": window_handle(outcome.window_reference),
                "body": outcome.summary_body,
            },
        )


def has_content(settings: Settings, messages: Any) -> bool:
    """Whether a ``/compress`` has anything to do (the gateway asks before it runs one)."""
    if not isinstance(messages, list):
        return False
    conversation = [m for m in messages if isinstance(m, dict) and m.get("role") not in ("system", "developer")]
    return len(conversation) > 2 or any(
        m.get("role") == "tool" and len(message_text(m)) >= settings.compaction.prune_min_chars
        for m in conversation[:-1]
    )
