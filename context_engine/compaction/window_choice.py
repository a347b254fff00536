"""Which window a compaction summarizes: its own choice, and how far a window prepared ahead may stand in for it.

:func:`choose` is phase 2 for :func:`.compactor.compact`, the dry run
(``preview.py``) and a summary prepared ahead (``ahead/job.py``), so the
three choose the same window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..chat.messages import Message, summary_positions
from .boundaries import Window, budget_tail_start, choose_window, head_end_index
from .inputs import CompactionPlan, CountFn

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
