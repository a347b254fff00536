"""Phase 3: the summary body of a compaction's window, from the model, prepared ahead, or the fallback.

:func:`window_prompt` is the one prompt for the compaction and for a summary
prepared ahead (a prepared reply answers exactly the prompt the compaction
would send); :func:`summarize_window` gets the body, or says the compaction
aborts, while the archive keeps the window whole.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable

from ..chat.markers import FailureKind
from ..chat.messages import (
    Message,
    call_id,
    call_name,
    is_real_user_turn,
    is_summary,
    last_index,
    message_text,
    tool_calls_of,
)
from ..redaction.shown import shown_error
from ..summary.deadline import SummaryDeadline
from ..summary.fallback import build_fallback
from ..summary.prompt import SummaryRequest, build_prompt, summary_budget_tokens
from ..summary.reply import SummaryFailure, clean_reply, extract_previous, ground, remainder_after_summary
from ..summary.transcript import serialize_window
from .boundaries import Window
from .inputs import Archive, CompactionInputs, CompactionOutcome, CompactionPlan, CompactionStats

logger = logging.getLogger(__name__)


def window_prompt(
    messages: list[Message],
    window: Window,
    plan: CompactionPlan,
    *,
    summaries: list[int],
    focus_topic: str | None,
    memory_context: str,
    today: str,
) -> tuple[str, str | None]:
    """The summary prompt for ``messages[window]`` and the previous summary it updates.

    One function for the compaction and for a summary prepared ahead, so a
    prepared reply answers exactly the prompt the compaction would send.
    Pruning never touches the window, so the original messages give the
    same prompt as the pruned ones.
    """
    window_messages = messages[window.head_end : window.tail_start]
    previous = extract_previous(messages, [i for i in summaries if i < window.tail_start])
    previous_body = previous[1] if previous else None
    # Only the summary that becomes PREVIOUS SUMMARY is reduced; an older one
    # in the window keeps its text so nothing of it is lost.
    transcript_input = [
        _without_summary(m) if previous and window.head_end + i == previous[0] else m
        for i, m in enumerate(window_messages)
    ]
    names = {cid: call_name(call) for message in messages for call in tool_calls_of(message) if (cid := call_id(call))}
    # The transcript shows the window's long outputs as verdicts and sizes
    # (they are kept whole in the store), which keeps the request small and fast.
    transcript = serialize_window(
        transcript_input,
        names=names,
        first_number=window.head_end + 1,
        limits=replace(plan.transcript, tool_output_chars=plan.prune.min_chars),
    )
    request = SummaryRequest(
        transcript=transcript,
        # the budget only needs a rough size: 4 chars per token
        budget_tokens=summary_budget_tokens(len(transcript) // 4, plan.context_length, plan.summary_max_tokens),
        today=today,
        previous_summary=previous_body,
        focus_topic=focus_topic,
        memory_context=memory_context,
    )
    return build_prompt(request), previous_body


def summarize_window(
    original: list[Message],
    pruned: list[Message],
    window: Window,
    inputs: CompactionInputs,
    *,
    plan: CompactionPlan,
    summaries: list[int],
    today: str,
    deadline: SummaryDeadline,
    stats: CompactionStats,
) -> CompactionOutcome:
    """Phase 3: the summary body (model, prepared ahead, or fallback), or an abort.

    ``plan`` is the compaction's as adjusted for this history (:func:`.window_choice.choose`).
    """
    summarize, prepared = inputs.summarize, inputs.prepared
    window_messages = original[window.head_end : window.tail_start]
    newest_user = last_index(pruned, is_real_user_turn)
    newest_request = remainder_after_summary(message_text(pruned[newest_user])) if newest_user >= 0 else None
    prompt, previous_body = window_prompt(
        original,
        window,
        plan,
        summaries=summaries,
        focus_topic=inputs.focus_topic,
        memory_context=inputs.memory_context,
        today=today,
    )

    error: str | None = None
    failure_kind: FailureKind | None = None
    body: str | None = None
    if summarize is None:
        error, failure_kind = inputs.cooldown_reason, FailureKind.MODEL_UNAVAILABLE
    # Stored while the model writes the summary (seconds); the summary names it only once the put has returned.
    reference = _start_window(inputs.archive, original[window.head_end : window.tail_start])
    try:
        if summarize is not None:
            try:
                body = prepared.reply_for(prompt, window_messages, deadline) if prepared is not None else None
                stats.summary_source = "prepared"
                if body is None:
                    if deadline.spent():  # one deadline per compaction: no call once it is spent
                        raise SummaryFailure(
                            "timeout",
                            f"the summary model timed out (the compaction's {deadline.describe()} were spent)",
                        )
                    stats.summary_source, stats.summary_calls = "model", 1
                    body = clean_reply(summarize(prompt))
            except SummaryFailure as failure:
                error = str(failure)
                if failure.aborts or plan.abort_on_summary_failure:
                    return CompactionOutcome(
                        original, changed=False, aborted=True, summary_error=error, failure=FailureKind.MODEL_FAILED
                    )
                failure_kind = FailureKind.MODEL_FAILED
            except Exception as exc:  # noqa: BLE001 - any summarizer bug degrades to the fallback
                error, failure_kind = f"error: {shown_error(exc)}", FailureKind.SUMMARIZER_ERROR
                if plan.abort_on_summary_failure:
                    return CompactionOutcome(
                        original, changed=False, aborted=True, summary_error=error, failure=failure_kind
                    )
        fallback_used = body is None
        if body is None:
            stats.summary_source = "fallback"
            body = build_fallback(window_messages, previous_summary=previous_body, reason=error or "unknown")
        stored = reference()
        body = ground(body, newest_request=newest_request, store_reference=stored)
        return CompactionOutcome(
            original,
            changed=True,
            summary_error=error,
            failure=failure_kind,
            fallback_used=fallback_used,
            summary_body=body,
            window_reference=stored,
        )
    finally:
        reference()  # even an aborted compaction leaves no write running behind it


def _start_window(archive: Archive | None, window: list[Message]) -> Callable[[], str | None]:
    """Start keeping ``window``; the result waits for it once (later calls repeat the answer)."""
    if archive is None:
        return lambda: None
    try:
        wait = archive.keep_window(window)
    except Exception:  # a failing store must not break compaction
        logger.warning("stowage: could not store the summarized window", exc_info=True)
        return lambda: None
    answer: list[str | None] = []

    def reference() -> str | None:
        if not answer:
            try:
                answer.append(wait())
            except Exception:
                logger.warning("stowage: could not store the summarized window", exc_info=True)
                answer.append(None)
        return answer[0]

    return reference


def _without_summary(message: Message) -> Message:
    """A message with an embedded earlier summary reduced to its own text."""
    if not is_summary(message):
        return message
    remainder = remainder_after_summary(message_text(message))
    return {"role": message.get("role"), "content": remainder or "(earlier summary, see PREVIOUS SUMMARY)"}
