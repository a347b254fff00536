"""One compaction: prune, choose the window, summarize, assemble and sanitize.

:func:`compact` is the only place the four phases meet: prune (``prune.py``),
choose the window (``window_choice.py``), summarize (``summarize.py``),
assemble (``assemble.py``).  Its inputs are one record (``inputs.py``).  It
is pure apart from the callables it is given: ``summarize`` (the host's
auxiliary LLM, or ``None`` while the summary model is cooling down) and an
optional ``archive`` that keeps what leaves the window (the blob store).  It never
raises for bad input and never returns an invalid message list: if it cannot
do better it returns the input unchanged and says why.
"""

from __future__ import annotations

import logging
import time
from datetime import date
from typing import Any, Callable

from ..chat.markers import IMAGE_PLACEHOLDER, FailureKind
from ..chat.messages import Message, is_real_user_turn, last_index, role_of
from ..chat.stubs import PrunedOutput, default_stub, shrink_json_arguments
from ..chat.validate import validate_messages
from ..summary.deadline import SummaryDeadline
from ..summary.reply import wrap
from .assemble import place_summary, sanitize, without_summary_flag
from .boundaries import Window
from .inputs import Archive, CompactionInputs, CompactionOutcome, CompactionPlan, CompactionStats, CountFn
from .prune import PruneResult, prune
from .summarize import summarize_window
from .window_choice import PREPARED_OVERRUN, choose, prepared_slack, since_prepared

logger = logging.getLogger(__name__)


def compact(messages: list[Message], inputs: CompactionInputs) -> CompactionOutcome:
    """Compact ``messages`` (the input list is never mutated) with ``inputs`` (:class:`.inputs.CompactionInputs`).

    Once the deadline is spent nothing calls the model and the fallback summary is written.
    """
    plan, count, archive, prepared = inputs.plan, inputs.count, inputs.archive, inputs.prepared
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

    outcome = summarize_window(
        messages,
        pruned.messages,
        window,
        inputs,
        plan=plan,
        summaries=summaries,
        today=inputs.today or date.today().isoformat(),
        deadline=inputs.deadline or SummaryDeadline(None),
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
