"""A compaction's dry run: what :func:`compactor.compact` would cut, prune and keep, without doing it.

It runs the same boundary and prune phases on the same plan (pruned outputs
get the default stub: nothing is stored) and stops before the summary: no
model call, no store write.  The boundary steps mirror the top of
``compact()``; ``tests/context_engine/test_preview.py`` checks they choose the
same window, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..chat.messages import Message, is_real_user_turn, last_index, leading_system_count, role_of
from ..summary.prompt import summary_budget_tokens
from .inputs import CompactionPlan
from .prune import prune
from .window_choice import choose

CountFn = Callable[[Message], int]


@dataclass(frozen=True)
class SeenMessages:
    """The newest history the engine was shown, when, and by what (``request`` or ``compaction``)."""

    messages: list[Message]
    at: float
    source: str


@dataclass(frozen=True)
class CompactionPreview:
    """Figures of a compaction that has not happened; tokens are the engine's estimates."""

    seen_at: float
    source: str
    system_messages: int
    messages: int  # conversation messages (the system prompt aside), as compress() counts them
    tokens: int
    last_prompt_tokens: int  # the provider's figure for the last request
    threshold_tokens: int
    would_compact: bool
    reason: str | None  # why not, in should_compress_info's words
    compactions_so_far: int
    head_messages: int
    head_tokens: int
    window_messages: int
    window_tokens: int
    window_tool_outputs: int
    window_first: int  # 1-based positions in the conversation (0 when the window is empty)
    window_last: int
    pruned_outputs: int
    pruned_tokens_saved: int
    arguments_shrunk: int
    images_removed: int
    tail_messages: int
    tail_tokens: int
    summary_budget_tokens: int  # the most the summary may take (what the model is asked to stay under)
    estimated_after_tokens: int  # head + tail after pruning + the summary budget: an upper estimate

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def preview_compaction(
    seen: SeenMessages,
    plan: CompactionPlan,
    *,
    count: CountFn,
    last_prompt_tokens: int,
    threshold_tokens: int,
    would_compact: bool,
    reason: str | None,
    compactions_so_far: int,
) -> CompactionPreview:
    """The dry run of ``compact(conversation, plan)`` on ``seen`` (its leading system messages set aside)."""
    system = leading_system_count(seen.messages)
    messages = seen.messages[system:]
    choice = choose(messages, plan, count)  # the window compact() would take
    plan, prune_from, window = choice.plan, choice.prune_from, choice.window
    pruned = prune(
        messages,
        protect_from=prune_from,
        settings=plan.prune,
        keep_images_at=frozenset({last_index(messages, is_real_user_turn)}),
        skip=range(window.head_end, window.tail_start),
    )
    before = [count(m) for m in messages]
    after = [count(m) for m in pruned.messages]
    window_tokens = sum(before[window.head_end : window.tail_start])
    kept = sum(after[: window.head_end]) + sum(after[window.tail_start :])
    budget = summary_budget_tokens(window_tokens, plan.context_length, plan.summary_max_tokens) if window.size else 0
    return CompactionPreview(
        seen_at=seen.at,
        source=seen.source,
        system_messages=system,
        messages=len(messages),
        tokens=sum(before),
        last_prompt_tokens=last_prompt_tokens,
        threshold_tokens=threshold_tokens,
        would_compact=would_compact,
        reason=reason,
        compactions_so_far=compactions_so_far,
        head_messages=window.head_end,
        head_tokens=sum(after[: window.head_end]),
        window_messages=window.size,
        window_tokens=window_tokens,
        window_tool_outputs=sum(role_of(m) == "tool" for m in messages[window.head_end : window.tail_start]),
        window_first=window.head_end + 1 if window.size else 0,
        window_last=window.tail_start if window.size else 0,
        pruned_outputs=len(pruned.pruned),
        pruned_tokens_saved=max(0, sum(before) - sum(after)),
        arguments_shrunk=pruned.arguments_shrunk,
        images_removed=pruned.images_removed,
        tail_messages=len(messages) - window.tail_start,
        tail_tokens=sum(after[window.tail_start :]),
        summary_budget_tokens=budget,
        estimated_after_tokens=kept + budget,
    )
