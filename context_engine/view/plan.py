"""Which messages of a request are shown as stubs: a pure, deterministic plan.

The plan replays the history's growth one message at a time, the way the
session grew, and moves a stub boundary forward in steps:

* the *hot zone* is the newest ``hot_tokens`` of the history (never less than
  the newest tool batch); nothing in it is stubbed;
* outputs that leave the hot zone become *cold* but stay verbatim until the
  cold, still-verbatim ones reach ``step_tokens``; then all of them are
  stubbed at once (one cache break per step, at the oldest of them);
* a pinned item (recently fetched, or referred to by a recent call) is
  passed over by a step and stubbed by the first step after its pin ends;
* a *deep step* (``deep_at``): when the request as this plan sends it grows
  past ``deep_at`` tokens (just under the compaction trigger), the cold
  items still verbatim are stubbed at once even below ``step_tokens``, if
  they are worth ``deep_min`` tokens: a cache break instead of a summary.

Because the plan depends only on the messages (their sizes and pins), the
same history gives the same plan in every process and after a resume, and
between steps each request's view extends the previous one byte for byte.
Once stubbed, an item stays stubbed for every longer history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

# A stub (tool, verdict, size, handle) or a condensed head (200 characters and a handle) is this much larger than
# ``cold_tokens`` assumes: measured on the shared trajectories (about 51 tokens a stub, 83 a condensed message).
STUB_SLACK_TOKENS = 30


@dataclass(frozen=True)
class ViewItem:
    """What the plan needs to know of one message.

    ``tokens`` is its size as sent; ``cold_tokens`` what stubbing it would
    take out of the request (0: nothing to stub); ``batch`` marks an assistant
    message with tool calls (the hot zone keeps the newest batch whole);
    ``pins`` are ``(start, end)`` message positions: while the history ends
    inside one, a step passes the item over.
    """

    tokens: int
    cold_tokens: int = 0
    batch: bool = False
    pins: tuple[tuple[int, int], ...] = ()

    def pinned_at(self, position: int) -> bool:
        return any(start <= position < end for start, end in self.pins)


@dataclass
class ViewPlan:
    stubbed: list[int] = field(default_factory=list)  # ascending message indices
    hot_start: int = 0  # first message of the hot zone
    pinned: list[int] = field(default_factory=list)  # cold items a pin keeps verbatim now
    deep_steps: int = 0  # steps made early because the request neared the trigger (counted in ``steps`` too)
    step_ends: list[int] = field(default_factory=list)  # hot_start at each step: what lies before it is settled

    @property
    def steps(self) -> int:
        """How many times the boundary moved (each is one prompt-cache break)."""
        return len(self.step_ends)


def plan_view(
    items: Sequence[ViewItem], *, hot_tokens: int, step_tokens: int, deep_at: int = 0, deep_min: int = 0
) -> ViewPlan:
    """Replay the history's growth and return what the newest request stubs."""
    plan = ViewPlan()
    hot = 0  # tokens of items[hot_start:position + 1]
    sent = 0  # tokens of items[:position + 1] as this plan sends them (about: see STUB_SLACK_TOKENS)
    newest_batch = -1
    pending: list[int] = []  # cold items not stubbed yet, oldest first
    pending_tokens = 0
    for position, item in enumerate(items):
        hot += item.tokens
        sent += item.tokens
        if item.batch:
            newest_batch = position
        floor = newest_batch if newest_batch >= 0 else position
        while hot > hot_tokens and plan.hot_start < floor:
            leaving = items[plan.hot_start]
            hot -= leaving.tokens
            if leaving.cold_tokens > 0:
                pending.append(plan.hot_start)
                pending_tokens += leaving.cold_tokens
            plan.hot_start += 1
        if pending_tokens >= step_tokens:
            pending, pending_tokens, sent = _step(plan, items, pending, position, step_tokens, sent)
        elif deep_at > 0 and sent > deep_at and pending_tokens >= max(1, deep_min):
            # Pinned items in ``pending`` hold back this step as they hold back a regular one: measured on the
            # shared trajectories, letting deep steps through then (or holding released pins for later) made
            # many small cache breaks for few summaries saved, or the reverse (docs/lean-view.md).
            before = plan.steps
            pending, pending_tokens, sent = _step(plan, items, pending, position, deep_min, sent)
            plan.deep_steps += plan.steps - before
    plan.stubbed.sort()
    last = len(items) - 1
    plan.pinned = [i for i in pending if items[i].pinned_at(last)]
    return plan


def _step(
    plan: ViewPlan, items: Sequence[ViewItem], pending: list[int], position: int, step_tokens: int, sent: int
) -> tuple[list[int], int, int]:
    """Stub every unpinned pending item when they alone make a step; keep the pinned ones pending."""
    pinned = [i for i in pending if items[i].pinned_at(position)]
    if not pinned:
        plan.stubbed.extend(pending)
        plan.step_ends.append(plan.hot_start)
        return [], 0, sent - sum(items[i].cold_tokens - STUB_SLACK_TOKENS for i in pending)
    pinned_set = set(pinned)
    free = [i for i in pending if i not in pinned_set]
    freed = sum(items[i].cold_tokens for i in free)
    if freed < step_tokens:
        return pending, sum(items[i].cold_tokens for i in pending), sent
    plan.stubbed.extend(free)
    plan.step_ends.append(plan.hot_start)
    return pinned, sum(items[i].cold_tokens for i in pinned), sent - freed + STUB_SLACK_TOKENS * len(free)
