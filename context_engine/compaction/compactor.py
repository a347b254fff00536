"""One compaction: prune, choose the window, summarize, assemble and sanitize.

:func:`compact` is the only place the four phases meet.  It is pure apart
from the two callables it is given: ``summarize`` (the host's auxiliary LLM,
or ``None`` while the summary model is cooling down) and an optional
``archive`` that keeps what leaves the window (the blob store).  It never
raises for bad input and never returns an invalid message list: if it cannot
do better it returns the input unchanged and says why.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Callable, Protocol

from ..chat.markers import IMAGE_PLACEHOLDER, FailureKind
from ..chat.messages import (
    Message,
    call_id,
    call_name,
    is_real_user_turn,
    is_summary,
    last_index,
    message_text,
    role_of,
    summary_positions,
    tool_calls_of,
)
from ..chat.stubs import PrunedOutput, default_stub, shrink_json_arguments
from ..chat.validate import validate_messages
from ..redaction.shown import shown_error
from ..summary.deadline import SummaryDeadline
from ..summary.fallback import build_fallback
from ..summary.prompt import SummaryRequest, build_prompt, summary_budget_tokens
from ..summary.reply import SummaryFailure, clean_reply, extract_previous, ground, remainder_after_summary, wrap
from ..summary.transcript import TranscriptLimits, serialize_window
from .assemble import place_summary, sanitize, without_summary_flag
from .boundaries import Window, budget_tail_start, choose_window, head_end_index
from .prune import PruneResult, PruneSettings, prune

logger = logging.getLogger(__name__)

CountFn = Callable[[Message], int]
Summarizer = Callable[[str], str]


class Archive(Protocol):
    """Where content leaving the window is kept: the store session's archive (store_session/archive.py)."""

    def render_pruned(self, output: PrunedOutput) -> str | None:
        """Keep a pruned tool output; return its replacement text (None = default stub)."""

    def keep_window(self, window: list[Message]) -> Callable[[], str | None]:
        """Start keeping the summarized turns; the callable waits until they are kept durably.

        It returns the reference for the summary (None = not kept).  The
        write may run while the summary model works, but nothing names the
        window before the callable has returned.
        """

    def keep_part(self, part: Any) -> str | None:
        """Keep a message part taken out of the context (an image); return its placeholder (None = plain)."""

    def cut_arguments(self, tool_name: str, arguments: str, max_chars: int) -> str | None:
        """Keep oversized call arguments; return the shortened JSON naming their handle (None = plain cut)."""


class PreparedSummaries(Protocol):
    """Summaries written ahead of the compaction (``context_engine.ahead``)."""

    def window_for(self, messages: list[Message], window: Window) -> Window:
        """``window``, or a prepared window that is a prefix of it and ends at a clean cut."""

    def reply_for(self, prompt: str, window: list[Message], deadline: SummaryDeadline) -> str | None:
        """The prepared reply for exactly this prompt and window (waiting for a running one within
        ``deadline``), else None; raises SummaryFailure when it failed or did not come in time."""


@dataclass(frozen=True)
class CompactionPlan:
    """The numbers one compaction works with (derived from settings and model)."""

    protect_first_n: int
    tail_budget_tokens: int
    tail_min_messages: int
    context_length: int
    summary_max_tokens: int = 8000
    abort_on_summary_failure: bool = False
    profile: str = "strict"
    prune: PruneSettings = PruneSettings()
    transcript: TranscriptLimits = TranscriptLimits()
    # a prepared window's end may leave up to this minus tail_budget_tokens more tail than the compaction's own cut
    prepared_tail_tokens: int = 0  # (0 = never)


@dataclass
class CompactionStats:
    messages_before: int = 0
    messages_after: int = 0
    pruned_outputs: int = 0
    images_removed: int = 0
    arguments_shrunk: int = 0
    window_messages: int = 0
    window_tool_outputs: int = 0  # shown to the summary model as verdicts, kept whole with the stored window
    summary_chars: int = 0
    summary_source: str = ""  # "model" (called now), "prepared" (written ahead), "fallback", or "" (no summary)
    summary_calls: int = 0  # model calls this compaction made itself (a prepared summary's call was made before)
    phase_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class CompactionOutcome:
    messages: list[Message]
    changed: bool
    aborted: bool = False
    summary_error: str | None = None
    failure: FailureKind | None = None  # why summary_error is set: the model's side or ours
    fallback_used: bool = False
    summary_body: str | None = None
    window_reference: str | None = None
    pruned: list[PrunedOutput] = field(default_factory=list)
    stats: CompactionStats = field(default_factory=CompactionStats)


def compact(
    messages: list[Message],
    plan: CompactionPlan,
    *,
    count: CountFn,
    summarize: Summarizer | None,
    focus_topic: str | None = None,
    memory_context: str = "",
    archive: Archive | None = None,
    cooldown_reason: str = "the summary model is cooling down after a failure",
    today: str | None = None,
    prepared: PreparedSummaries | None = None,
    deadline: SummaryDeadline | None = None,
) -> CompactionOutcome:
    """Compact ``messages`` (the input list is never mutated).

    ``prepared`` may supply the summary written ahead for this window (or a
    prefix of it whose kept tail stays within ``plan.prepared_tail_tokens``).
    ``deadline`` bounds the wait for it and the model call together (default:
    Hermes's own 300 s from now); once it is spent nothing calls the model
    and the fallback summary is written.
    """
    stats = CompactionStats(messages_before=len(messages))
    clock = _PhaseClock(stats)
    if not messages:
        return CompactionOutcome(messages, changed=False, stats=stats)

    choice = choose(messages, plan, count)
    plan, summaries, prune_from, window = choice.plan, choice.summaries, choice.prune_from, choice.window
    chosen = window
    if prepared is not None and window.size:
        window = prepared.window_for(messages, window)
    clock.lap("boundaries")

    # The window is summarized from its original messages (long outputs
    # shown as verdicts) and stored whole: only what stays is pruned.
    newest_user = last_index(messages, is_real_user_turn)

    def pruned_for(w: Window) -> PruneResult:
        return prune(
            messages,
            protect_from=prune_from,
            settings=plan.prune,
            render=_renderer(archive),
            keep_images_at=frozenset({newest_user}),
            skip=range(w.head_end, w.tail_start),
            cut_arguments=_argument_cutter(archive),
            keep_part=_part_keeper(archive),
        )

    pruned = pruned_for(window)
    if window != chosen and since_prepared(pruned.messages, window, chosen, count) > PREPARED_OVERRUN * prepared_slack(
        plan
    ):
        window = chosen  # the longer tail would leave the request over budget: summarize the whole window
        pruned = pruned_for(window)
    stats.pruned_outputs, stats.images_removed = len(pruned.pruned), pruned.images_removed
    stats.arguments_shrunk = pruned.arguments_shrunk
    clock.lap("prune")
    if window.size == 0:
        if not pruned.changed:
            return CompactionOutcome(messages, changed=False, stats=stats)
        return _finish(messages, pruned.messages, plan, stats, count, pruned=pruned.pruned, clock=clock)

    outcome = _summarize(
        messages,
        pruned.messages,
        window,
        plan,
        summaries=summaries,
        summarize=summarize,
        focus_topic=focus_topic,
        memory_context=memory_context,
        archive=archive,
        cooldown_reason=cooldown_reason,
        today=today or date.today().isoformat(),
        prepared=prepared,
        deadline=deadline or SummaryDeadline(None),
        stats=stats,
    )
    clock.lap("summary")
    if outcome.aborted:
        outcome.stats = stats
        return outcome
    head, tail = pruned.messages[: window.head_end], pruned.messages[window.tail_start :]
    result = place_summary(head, wrap(outcome.summary_body or ""), tail)
    stats.window_messages = window.size
    stats.window_tool_outputs = sum(role_of(m) == "tool" for m in messages[window.head_end : window.tail_start])
    stats.summary_chars = len(outcome.summary_body or "")
    final = _finish(messages, result, plan, stats, count, pruned=pruned.pruned, clock=clock)
    if final.aborted:
        return final  # keep the internal-error reason
    final.summary_error, final.failure = outcome.summary_error, outcome.failure
    final.fallback_used = outcome.fallback_used
    final.summary_body, final.window_reference = outcome.summary_body, outcome.window_reference
    return final


# A prepared window is kept while what arrived since fits its slack (ahead.review drops it beyond that); the
# compaction still takes it with up to this many times as much, for what came between that check and the
# compaction (a new turn's task, a large output): a slightly longer tail instead of a 10-second call.
PREPARED_OVERRUN = 2


def prepared_slack(plan: CompactionPlan) -> int:
    """How much longer than the compaction's own tail the tail after a prepared window may be (tokens)."""
    return max(0, plan.prepared_tail_tokens - plan.tail_budget_tokens)


def since_prepared(pruned: list[Message], prepared: Window, chosen: Window, count: CountFn) -> int:
    """What arrived between a prepared window's end and the compaction's own, as it would be kept (pruned)."""
    return sum(map(count, pruned[prepared.tail_start : chosen.tail_start]))


def _renderer(archive: Archive | None) -> Callable[[PrunedOutput], str]:
    if archive is None:
        return default_stub
    return _stored_or(lambda output: archive.render_pruned(output), default_stub, "a pruned output; using a plain stub")


def _part_keeper(archive: Archive | None) -> Callable[[Any], str] | None:
    if archive is None:
        return None
    return _stored_or(
        lambda part: archive.keep_part(part),
        lambda _part: IMAGE_PLACEHOLDER,
        "a removed image; using a plain placeholder",
    )


def _stored_or(store: Callable[[Any], str | None], plain: Callable[[Any], str], what: str) -> Callable[[Any], str]:
    """``store(item)``'s text, or ``plain(item)`` when the archive declines or fails (never breaking compaction)."""

    def text_for(item: Any) -> str:
        try:
            text = store(item)
        except Exception:  # a failing store must not break compaction
            logger.warning("stowage: archive failed for %s", what, exc_info=True)
            text = None
        return text if text is not None else plain(item)

    return text_for


def _argument_cutter(archive: Archive | None) -> Callable[[str, str, int], str] | None:
    if archive is None:
        return None

    def cut(tool_name: str, arguments: str, max_chars: int) -> str:
        try:
            text = archive.cut_arguments(tool_name, arguments, max_chars)
        except Exception:  # a failing store must not break compaction
            logger.warning("stowage: archive failed for oversized arguments; cutting them plainly", exc_info=True)
            text = None
        return text if text is not None else shrink_json_arguments(arguments, max_chars)

    return cut


@dataclass(frozen=True)
class WindowChoice:
    """Phase 2's answer: the plan as adjusted for this history, and where the window lies."""

    plan: CompactionPlan
    summaries: list[int]
    prune_from: int
    window: Window


def choose(messages: list[Message], plan: CompactionPlan, count: CountFn) -> WindowChoice:
    """The window :func:`compact` summarizes for ``messages`` (also what a summary prepared ahead is for)."""
    summaries = summary_positions(messages)
    if summaries:
        plan = replace(plan, protect_first_n=0)  # compacted before: the summary carries the early context
    head_end = head_end_index(messages, plan.protect_first_n)
    prune_from = budget_tail_start(
        messages,
        budget_tokens=plan.tail_budget_tokens,
        min_messages=plan.tail_min_messages,
        count=count,
        floor_index=head_end,
    )
    # Boundaries are chosen on the original messages: measured after pruning,
    # the cheap stubs would let the token-budget tail swallow the whole
    # history and leave nothing to summarize.
    window = choose_window(
        messages,
        protect_first_n=plan.protect_first_n,
        tail_budget_tokens=plan.tail_budget_tokens,
        tail_min_messages=plan.tail_min_messages,
        count=count,
        budget_tail=prune_from,
    )
    return WindowChoice(plan, summaries, prune_from, window)


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


def _summarize(
    original: list[Message],
    pruned: list[Message],
    window: Window,
    plan: CompactionPlan,
    *,
    summaries: list[int],
    summarize: Summarizer | None,
    focus_topic: str | None,
    memory_context: str,
    archive: Archive | None,
    cooldown_reason: str,
    today: str,
    prepared: PreparedSummaries | None,
    deadline: SummaryDeadline,
    stats: CompactionStats,
) -> CompactionOutcome:
    """Phase 3: the summary body (model, prepared ahead, or fallback), or an abort."""
    window_messages = original[window.head_end : window.tail_start]
    newest_user = last_index(pruned, is_real_user_turn)
    newest_request = remainder_after_summary(message_text(pruned[newest_user])) if newest_user >= 0 else None
    prompt, previous_body = window_prompt(
        original, window, plan, summaries=summaries, focus_topic=focus_topic, memory_context=memory_context, today=today
    )

    error: str | None = None
    failure_kind: FailureKind | None = None
    body: str | None = None
    if summarize is None:
        error, failure_kind = cooldown_reason, FailureKind.MODEL_UNAVAILABLE
    # Stored while the model writes the summary (seconds); the summary names it only once the put has returned.
    reference = _start_window(archive, original[window.head_end : window.tail_start])
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


def _finish(
    original: list[Message],
    result: list[Message],
    plan: CompactionPlan,
    stats: CompactionStats,
    count: CountFn,
    *,
    pruned: list[PrunedOutput],
    clock: "_PhaseClock",
) -> CompactionOutcome:
    """Phase 4's last step: sanitize only what validation finds wrong, then check."""
    problems = validate_messages(result, plan.profile)
    if problems:
        result = sanitize(result)
        problems = validate_messages(result, plan.profile)
    clock.lap("assemble")
    if problems:
        logger.error(
            "stowage: compaction produced an invalid list (%s); keeping the messages unchanged",
            "; ".join(map(str, problems[:3])),
        )
        return CompactionOutcome(
            original,
            changed=False,
            aborted=True,
            summary_error=f"internal error: invalid result ({problems[0]})",
            failure=FailureKind.INTERNAL,
            stats=stats,
        )
    stats.messages_after = len(result)
    return CompactionOutcome(without_summary_flag(result), changed=True, pruned=pruned, stats=stats)


class _PhaseClock:
    def __init__(self, stats: CompactionStats) -> None:
        self._stats = stats
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self._stats.phase_ms[phase] = round((now - self._last) * 1000, 3)
        self._last = now
