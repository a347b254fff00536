"""Phase 2: choose which messages the summary replaces.

The list is split into ``head`` (kept verbatim), ``window`` (summarized) and
``tail`` (kept verbatim).  Rules, in order:

* the head is the leading system messages plus ``protect_first_n`` further
  messages, stopping at a previous summary (after a compaction the summary
  carries the early context, so the head decays to the system prompt);
* the tail is filled from the end until its token budget is spent, never
  with fewer than ``tail_min_messages`` messages;
* no cut separates an assistant's ``tool_calls`` from their results;
* the newest real user turn and the newest assistant turn stay in the tail
  (or in the head: a newest request that would open the window joins it).

Pure functions over message dicts; token counts come from a callable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..chat.messages import Message, is_real_user_turn, is_summary, last_index, leading_system_count, role_of

CountFn = Callable[[Message], int]


@dataclass(frozen=True)
class Window:
    """``messages[head_end:tail_start]`` is summarized."""

    head_end: int
    tail_start: int

    @property
    def size(self) -> int:
        return max(0, self.tail_start - self.head_end)


def head_end_index(messages: list[Message], protect_first_n: int) -> int:
    """End of the verbatim head, aligned so it never ends inside a tool group."""
    index = leading_system_count(messages)
    kept = 0
    while index < len(messages) and kept < protect_first_n and not is_summary(messages[index]):
        index += 1
        kept += 1
    return align_forward(messages, index)


def align_forward(messages: list[Message], index: int) -> int:
    """Move a cut forward past tool results so they stay with their call."""
    while index < len(messages) and role_of(messages[index]) == "tool":
        index += 1
    return index


def align_backward(messages: list[Message], index: int) -> int:
    """Move a cut back to the assistant whose tool results it would split."""
    while 0 < index < len(messages) and role_of(messages[index]) == "tool":
        index -= 1
    return index


def budget_tail_start(
    messages: list[Message], *, budget_tokens: int, min_messages: int, count: CountFn, floor_index: int = 0
) -> int:
    """First index of the tail that fits ``budget_tokens`` (with a message floor)."""
    index = len(messages)
    spent = 0
    while index > floor_index:
        cost = count(messages[index - 1])
        kept = len(messages) - index
        if kept >= min_messages and spent + cost > budget_tokens:
            break
        spent += cost
        index -= 1
    return max(floor_index, align_backward(messages, index))


def keep_newest_turns(messages: list[Message], tail_start: int, head_end: int = 0) -> int:
    """Pull the cut back so the newest user turn and assistant turn are in the tail.

    Anchors inside the head (before ``head_end``) are kept verbatim there already.
    """
    newest_user = last_index(messages, is_real_user_turn)
    newest_assistant = last_index(messages, lambda m: role_of(m) == "assistant")
    for anchor in (newest_user, newest_assistant):
        if head_end <= anchor < tail_start:
            tail_start = anchor
    return align_backward(messages, tail_start)


def choose_window(
    messages: list[Message],
    *,
    protect_first_n: int,
    tail_budget_tokens: int,
    tail_min_messages: int,
    count: CountFn,
    budget_tail: int | None = None,
) -> Window:
    """The summary window; ``Window.size == 0`` means nothing to summarize.

    ``budget_tail`` is a ``budget_tail_start`` the caller already walked (same
    messages and budget, floor at the plain head): it is reused, not re-walked.
    """
    head_end = head_end_index(messages, protect_first_n)
    if last_index(messages, is_real_user_turn) == head_end:
        # The newest request opens the window (one long task): keep it with the
        # head so the work after it can still be summarized.
        head_end = align_forward(messages, head_end + 1)
    if budget_tail is None:
        tail_start = budget_tail_start(
            messages,
            budget_tokens=tail_budget_tokens,
            min_messages=tail_min_messages,
            count=count,
            floor_index=head_end,
        )
    else:
        tail_start = max(budget_tail, head_end)
    tail_start = keep_newest_turns(messages, tail_start, head_end)
    if tail_start <= head_end:
        return Window(head_end, head_end)
    return Window(head_end, tail_start)
