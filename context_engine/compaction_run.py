"""One ``compress()`` call on an engine: the governor's checks, :func:`compactor.compact`, and its record.

The compactor does the work on plain messages; this module connects it to
one session: which summarizer (or none while the model cools down), which
plan, the summary prepared ahead, and what the outcome changes in the
session's state (the host-read flags, ``compression_count``, the governor,
the typed :class:`CompactionRecord` in the log, the summary log on disk).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from .ahead import build_job, likely_used, should_prepare, take_early
from .ahead.job import kept_size
from .ahead.pace import due
from .compaction_record import LOG_LIMIT, CompactionRecord
from .compactor import CompactionOutcome, CompactionPlan, compact
from .config import Settings
from .deadline import TIMEOUT_KEY, SummaryDeadline
from .egress import gated
from .engine_parts import EngineParts
from .messages import Message, is_real_user_turn, last_index, message_text
from .preview import CompactionPreview, preview_compaction
from .prune import PruneSettings
from .session_state import CompactionFlags, SessionState
from .summary import SummaryFailure
from .summary_log import append_summary, window_handle
from .thresholds import as_int

logger = logging.getLogger(__name__)

CALIBRATION_MESSAGES = 40  # the newest messages the token estimate is calibrated on
COOLDOWN_REASON = "the summary model is cooling down after a recent failure; used the fallback summary"


def compaction_plan(engine: EngineParts, *, force: bool = False) -> CompactionPlan:
    """The numbers of a compaction now.

    A forced compaction (``/compress``) keeps only the tail's message floor:
    the user asked to compact now, and a tail sized by the token budget may
    already hold everything since the last compaction.
    """
    c = engine.settings.compaction
    tail = engine.tail_budget_tokens
    return CompactionPlan(
        # after a compaction the summary carries the early context (compact() also
        # sees summaries in the history, e.g. after a resume)
        protect_first_n=0 if engine.compression_count > 0 else c.protect_first_n,
        tail_budget_tokens=0 if force else tail,
        tail_min_messages=c.protect_last_n,
        context_length=engine.context_length,
        summary_max_tokens=c.summary_max_tokens,
        abort_on_summary_failure=c.abort_on_summary_failure,
        profile=c.provider_profile,
        prune=PruneSettings(min_chars=c.prune_min_chars, max_args_chars=c.max_tool_args_chars),
        # a prepared window may leave a longer tail: by what the request grew since it was prepared
        prepared_tail_tokens=tail + int(engine.threshold_tokens * max(0.0, 1 - c.prepare_at)),
    )


def summarizer(engine: EngineParts, deadline: SummaryDeadline | None = None) -> Callable[[str], str] | None:
    """The summary call for this session now; None while the model cools down (the fallback is used).

    A compaction passes its deadline on: the call gets what is left of it
    (``runtime[TIMEOUT_KEY]``); a preparation ahead gets the configured timeout.
    Every route to the model (the compaction, a summary prepared ahead, the
    replay's stand-in) calls it here, so the prompt is sealed here as it leaves.
    """
    if engine.governor.cooldown_remaining() > 0:
        return None
    model = engine.summary_model
    if model is None:

        def unavailable(prompt: str) -> str:
            raise SummaryFailure("no_provider", "no summary model is attached to the engine")

        return unavailable
    runtime = dict(engine.runtime)
    configured = engine.settings.compaction.summary_timeout_seconds or None

    def call(prompt: str) -> str:
        return model(prompt, {**runtime, TIMEOUT_KEY: deadline.call_timeout() if deadline else configured})

    return gated(call)


def run_compaction(
    engine: EngineParts,
    messages: list[Message],
    current_tokens: int | None,
    focus_topic: str | None,
    force: bool,
    memory_context: str,
    bypass_cooldown: bool,
) -> list[Message]:
    """One compaction at a time (the engine's lock); the input list itself when nothing changed."""
    with engine._lock:
        result = _compact_locked(engine, messages, current_tokens, focus_topic, force, memory_context, bypass_cooldown)
    engine.state.store.pin_request(result)  # the size cap spares what the compacted history points to, no more
    return result


def _compact_locked(
    engine: EngineParts,
    messages: list[Message],
    current_tokens: int | None,
    focus_topic: str | None,
    force: bool,
    memory_context: str,
    bypass_cooldown: bool,
) -> list[Message]:
    state = engine.state
    state.flags = CompactionFlags()
    if not isinstance(messages, list) or not messages:
        return messages
    governor = state.governor
    newest = last_index(messages, is_real_user_turn)
    governor.observe_turn_key(message_text(messages[newest]) if newest >= 0 else None)
    overflowing = bool(current_tokens and engine.context_length and current_tokens >= engine.context_length)
    if not force and not overflowing and governor.compacted_this_turn():
        logger.info("stowage: already compacted this turn; skipping (use /compress to force)")
        return messages
    if force or bypass_cooldown:
        governor.clear_cooldown()
    deadline = SummaryDeadline(engine.settings.compaction.summary_timeout_seconds)
    summarize = summarizer(engine, deadline)
    state.counter.calibrate(messages[-CALIBRATION_MESSAGES:])
    engine.host.compress_gets_memory = engine.host.compress_gets_memory or bool(memory_context)
    state.ahead.begin_compaction()
    clock = state.ahead.clock
    started = clock()
    outcome = compact(
        messages,
        compaction_plan(engine, force=force),
        count=state.counter.estimate_message,
        summarize=summarize,
        focus_topic=focus_topic or None,
        memory_context=memory_context or "",
        archive=engine.archive or state.store.archive(),
        cooldown_reason=COOLDOWN_REASON,
        # on cooldown no model summary is used at all, so neither is the shorter prepared window
        prepared=state.ahead if engine.settings.compaction.prepare_at > 0 and summarize is not None else None,
        deadline=deadline,
    )
    blocked_s = max(0.0, clock() - started)  # the turn waited this long (the host's compress() call)
    if outcome.stats.summary_source == "model" and not outcome.summary_error:
        state.ahead.pace.observe_latency(blocked_s)  # the summary call was most of it
    if outcome.changed:
        state.ahead.discard("the history it was written for was compacted")
    result = _apply(engine, outcome, model_called=summarize is not None)
    record = _log(state, outcome, result, messages, current_tokens=current_tokens, focus_topic=focus_topic, force=force)
    record.wait_s = round(blocked_s, 3)
    compacted = result in ("compacted", "fallback")
    if compacted:
        _record_summary(engine, outcome)
    state.saw(outcome.messages if compacted else messages, "compaction")  # the history now, for /stowage preview
    return outcome.messages if compacted else messages


def status_line(engine: EngineParts, context: dict[str, Any], default: str | None) -> str | None:
    """The user's status line before an automatic compaction (newer hosts): what Stowage will do.

    ``default`` (the host's own line) when it cannot be said: a status line must never break a compaction.
    """
    try:
        return _status_line(engine, context)
    except Exception:  # a status line must never break a compaction
        logger.debug("stowage: status message failed", exc_info=True)
        return default


def _status_line(engine: EngineParts, context: dict[str, Any]) -> str:
    approx = as_int(context.get("approx_tokens"))
    threshold = as_int(context.get("threshold_tokens")) or engine.threshold_tokens
    size = f" ({approx:,} of {threshold:,} tokens)" if approx and threshold else ""
    governor = engine.governor
    if governor.compacted_this_turn():
        return f"Stowage: already compacted this turn; nothing to do{size}"
    backoff = governor.backoff_reason()
    if backoff is not None:
        return f"Stowage: not compacting, {backoff}{size}"
    cooldown = governor.cooldown_remaining()
    if cooldown > 0:
        return (
            f"Stowage: compacting{size}: storing old tool outputs and writing the fallback summary "
            f"(the summary model is cooling down, {int(cooldown)} s left)"
        )
    model = engine.runtime.get("model") or "the summary model"
    return f"Stowage: compacting{size}: storing old tool outputs and summarizing older turns with {model}"


def _apply(engine: EngineParts, outcome: CompactionOutcome, *, model_called: bool) -> str:
    """What the outcome changes in the session; returns the record's ``result``."""
    state = engine.state
    flags, governor = state.flags, state.governor
    state.last_outcome = outcome
    model_failed = (
        bool(outcome.summary_error) and model_called and outcome.failure is not None and not outcome.failure.is_ours
    )  # our bug, not the model's
    if model_failed:
        governor.record_summary_failure()
        flags.aux_failure_model = engine.runtime.get("model") or None
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
    state.compression_count += 1
    governor.record_compaction()
    flags.made_progress = True
    flags.fallback_used = outcome.fallback_used
    flags.summary_error = outcome.summary_error
    return "fallback" if outcome.fallback_used else "compacted"


def _log(
    state: SessionState,
    outcome: CompactionOutcome,
    result: str,
    messages: list[Message],
    *,
    current_tokens: int | None,
    focus_topic: str | None,
    force: bool,
) -> CompactionRecord:
    tokens_after = _tokens_after(state, outcome, messages, current_tokens) if outcome.changed else None
    record = CompactionRecord.of(
        outcome, result, current_tokens=current_tokens, focus_topic=focus_topic, forced=force, tokens_after=tokens_after
    )
    state.compaction_log.append(record)
    del state.compaction_log[:-LOG_LIMIT]
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


def _tokens_after(
    state: SessionState, outcome: CompactionOutcome, messages: list[Message], current_tokens: int | None
) -> int:
    """The request after a compaction, on the same basis as ``current_tokens`` (the host's figure).

    The host measures the whole request (system prompt and tool schemas
    included; Hermes prints ``~before -> ~after`` that way), the messages
    are all a compaction changes: the rest is carried over unchanged.
    """
    after = sum(map(state.counter.estimate_message, outcome.messages))
    if not current_tokens:
        return after
    before = sum(state.counter.estimate_message(m) for m in messages if isinstance(m, dict))
    return after + max(0, current_tokens - before)


def _record_summary(engine: EngineParts, outcome: CompactionOutcome) -> None:
    """Keep the summary as it went into the history, where ``stowage summary`` reads it."""
    if outcome.summary_body is None:
        return  # only outputs were pruned: there is no summary to show
    state = engine.state
    record = state.compaction_log[-1]
    append_summary(
        state.store.root,
        state.session_id,
        {
            "compaction": state.compression_count,
            **record.summary_fields(),
            "fallback_used": outcome.fallback_used,
            "model": engine.runtime.get("model") or None,
            "window_handle": window_handle(outcome.window_reference),
            "body": outcome.summary_body,
        },
    )


def prepare_ahead(engine: EngineParts, messages: Any) -> None:
    """At turn end: start the next compaction's summary on a background thread once the request nears the trigger.

    ``messages`` is the live history, the list ``compress()`` will later
    receive.  A pending preparation that is still a prefix of it is kept.
    """
    full = engine.request_log[-1].full if engine.request_log else 0
    previous, engine.state.turn_end_full = engine.state.turn_end_full, full
    if not isinstance(messages, list) or not should_prepare(
        engine.last_prompt_tokens, engine.threshold_tokens, engine.settings.compaction.prepare_at
    ):
        return
    if engine.summary_model is None or engine.host.compress_gets_memory or engine.governor.backoff_reason() is not None:
        return
    turn_growth = full - previous if previous and full >= previous else None  # None: first turn, or compacted
    if not likely_used(turn_growth, engine.threshold_tokens, engine.settings.compaction.prepare_at):
        return  # the next turn would outgrow the prepared window before its compaction: a wasted call
    summarize = summarizer(engine)
    if summarize is None:
        return  # cooling down: the compaction will use the fallback summary anyway
    state = engine.state
    with engine._lock:
        try:
            if state.ahead.keeps(messages) or state.ahead.running:
                return  # kept, or one is still being written: never two at a time
            state.counter.calibrate(messages[-CALIBRATION_MESSAGES:])  # as compress() does: the same window
            job = build_job(messages, compaction_plan(engine), state.counter.estimate_message)
        except Exception:  # preparing ahead must never cost the turn anything
            logger.exception("stowage: could not prepare the next summary ahead")
            return
        if job is not None:
            state.ahead.start(
                job,
                summarize,
                on_failure=state.governor.record_summary_failure,
                prompt_tokens=state.counter.count_text(job.prompt),
            )


def prepare_during_turn(engine: EngineParts, messages: Any, approx_tokens: Any = None) -> None:
    """Before each request: start the coming compaction's summary once :func:`.ahead.pace.due` says it is time.

    ``messages`` is the live history (the ``pre_api_request`` hook's);
    ``approx_tokens`` the host's estimate of the request (what its pre-API
    check compares with the trigger).  At most one preparation runs at a
    time, and a pending one that is still a prefix of the history is kept:
    within a turn the history only grows, so the compaction uses it and keeps
    what came since in its verbatim tail.
    """
    c = engine.settings.compaction
    state = engine.state
    ahead = state.ahead
    if c.prepare_at <= 0 or not isinstance(messages, list) or not messages:
        return
    tokens = _request_estimate(engine, as_int(approx_tokens))
    history_tokens = kept_size(messages, state.counter.estimate_message, c.prune_min_chars)
    ahead.pace.observe_request(ahead.clock(), tokens, history_tokens)
    if engine.summary_model is None or engine.host.compress_gets_memory or engine.governor.backoff_reason() is not None:
        return
    if engine.governor.compacted_this_turn():
        return  # this turn compacts no more (the next one starts from another history)
    slack = int(engine.threshold_tokens * (1 - c.prepare_at))
    if ahead.pending is not None:  # drop one the compaction could no longer use (ahead.review)
        ahead.review(messages, compaction_plan(engine), state.counter.estimate_message)
    if ahead.running or not due(tokens, engine.threshold_tokens, slack, ahead.pace):
        return
    summarize = summarizer(engine)
    if summarize is None:
        return  # cooling down: the compaction will use the fallback summary anyway
    with engine._lock:
        try:
            if ahead.keeps(messages):
                return
            state.counter.calibrate(messages[-CALIBRATION_MESSAGES:])  # as compress() does: the same window
            job = build_job(messages, compaction_plan(engine), state.counter.estimate_message)
            prompt_tokens = state.counter.count_text(job.prompt) if job is not None else 0
        except Exception:  # preparing ahead must never cost the turn anything
            logger.exception("stowage: could not prepare the next summary during the turn")
            return
        if job is not None:
            ahead.start(
                job,
                summarize,
                on_failure=state.governor.record_summary_failure,
                prompt_tokens=prompt_tokens,
                history_tokens=history_tokens,
            )


def prepared_due(engine: EngineParts, tokens: int) -> bool:
    """Compact now although ``tokens`` is under the trigger: the summary written for it is ready (``ahead.take_early``).

    A summary is only started within the band where summaries are prepared
    (``prepare_at`` of the trigger and above, ``ahead.pace.due``); once it is
    ready the compaction takes it at once and keeps what came since
    verbatim, instead of the history growing on until the prepared window is
    outgrown.
    """
    if engine.settings.compaction.prepare_at <= 0:
        return False
    ahead = engine.state.ahead
    return take_early(tokens, engine.threshold_tokens, ready=ahead.ready())


def _request_estimate(engine: EngineParts, approx: int) -> int:
    """This request's size on the trigger's basis: as sent (after the view), as the host's checks compare it.

    With the view shaping requests on an older host, the host's rough figure
    counts the whole history: the trigger is on the last real prompt plus
    the rough growth since (``thresholds.RoughBasis``, what the pre-API
    deferral decides on).  Otherwise the larger of the host's figure and the
    last real prompt.
    """
    last = max(0, engine.last_prompt_tokens)
    if approx <= 0:
        return last
    if engine.view.settings.enabled and not engine.host.selects_context:
        estimate = engine.state.rough_basis.estimate(approx, last)
        return estimate if estimate is not None else last
    return max(approx, last)


def preview_now(engine: EngineParts) -> CompactionPreview | None:
    """What a compaction of the last history the engine saw would do now (no model call, no write).

    Hermes 0.19.0 gives a slash command no messages, so the preview works on
    the newest history the engine saw; the result says how fresh that is.
    None before the engine has seen any history.
    """
    seen = engine.last_seen
    if seen is None:
        return None
    conversation = [m for m in seen.messages if isinstance(m, dict)]
    engine.counter.calibrate(conversation[-CALIBRATION_MESSAGES:])  # as compress() does: the same estimates
    would, reason = engine.should_compress_info(engine.last_prompt_tokens)
    if not would and reason is None:
        reason = f"below_threshold:{max(engine.last_prompt_tokens, 0)}<{engine.threshold_tokens}"
    return preview_compaction(
        seen,
        compaction_plan(engine),
        count=engine.counter.estimate_message,
        last_prompt_tokens=max(engine.last_prompt_tokens, 0),
        threshold_tokens=engine.threshold_tokens,
        would_compact=would,
        reason=reason,
        compactions_so_far=engine.compression_count,
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
