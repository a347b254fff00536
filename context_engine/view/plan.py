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
* with ``release_reach`` (the cache arithmetic), items whose pin ended long
  ago (older than the step's fresh items) go with a step only when they are
  worth the extra prefix the step then rewrites: their tokens times
  ``release_reach`` at least the tokens between them and the fresh items
  (a write costs 12.5 reads; an item stubbed saves a read in every later
  request); otherwise they wait, verbatim, for a compaction or a bigger step;
* a *deep step* (``deep_at``): when the request as this plan sends it grows
  past ``deep_at`` tokens (just under the compaction trigger), the cold
  items still verbatim are stubbed at once even below ``step_tokens``, if
  they are worth ``deep_min`` tokens: a cache break instead of a summary;
* with ``payback`` (the cache arithmetic of a step), a regular step waits
  for ``sqrt(2 x payback x pace x hot_tokens)`` cold tokens when that is
  more than ``step_tokens``.  A step rewrites the hot zone and the items it
  stubs (a cache write each, ``payback`` reads more than reading them: 11.5
  at reads 0.1x, writes 1.25x), while each cold token still verbatim costs
  a read per request; ``pace`` is the cold tokens a model turn adds (the
  history's own, so the plan stays a pure function of it).  That size
  (the economic order quantity of the two) makes the rewrites per request
  least for the reads the waiting outputs cost: the boundary moves in few,
  large steps and most requests extend the cached prefix;
* an item marked ``early`` (the working set moved on from it: a later call
  superseded it, or it is a listing or an install log) joins the pending
  items when it is superseded, even from inside the hot zone: stale
  outputs go first, with the next step.

Because the plan depends only on the messages (their sizes and pins), the
same history gives the same plan in every process and after a resume, and
between steps each request's view extends the previous one byte for byte.
Once stubbed, an item stays stubbed for every longer history.
"""

from __future__ import annotations

import math
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
    superseded_at: int = -1  # the message that superseded this output (``supersede.py``), -1: never
    superseded_by: str = ""
    early: bool = False  # leaves the hot zone at ``superseded_at`` (``view.working_set``)

    def pinned_at(self, position: int) -> bool:
        return any(start <= position < end for start, end in self.pins)


@dataclass
class ViewPlan:
    stubbed: list[int] = field(default_factory=list)  # ascending message indices
    hot_start: int = 0  # first message of the hot zone
    pinned: list[int] = field(default_factory=list)  # cold items a pin keeps verbatim now
    deep_steps: int = 0  # steps made early because the request neared the trigger (counted in ``steps`` too)
    step_ends: list[int] = field(default_factory=list)  # hot_start at each step: what lies before it is settled
    stubbed_at: dict[int, int] = field(default_factory=dict)  # item -> the history position of the step stubbing it

    @property
    def steps(self) -> int:
        """How many times the boundary moved (each is one prompt-cache break)."""
        return len(self.step_ends)


def plan_view(
    items: Sequence[ViewItem],
    *,
    hot_tokens: int,
    step_tokens: int,
    deep_at: int = 0,
    deep_min: int = 0,
    release_reach: float = 0.0,
    payback: float = 0.0,
) -> ViewPlan:
    """Replay the history's growth and return what the newest request stubs."""
    plan = ViewPlan()
    reach = _Reach(release_reach, items, plan)
    early_at: dict[int, list[int]] = {}
    for index, entry in enumerate(items):
        if entry.early and entry.cold_tokens > 0 and index < entry.superseded_at:
            early_at.setdefault(entry.superseded_at, []).append(index)
    went_early: set[int] = set()
    hot = 0  # tokens of items[hot_start:position + 1]
    sent = 0  # tokens of items[:position + 1] as this plan sends them (about: see STUB_SLACK_TOKENS)
    newest_batch = -1
    pending: list[int] = []  # cold items not stubbed yet, oldest first
    pending_tokens = 0
    cold_seen = turns = 0  # the pace (``payback``): cold tokens a model turn adds
    for position, item in enumerate(items):
        hot += item.tokens
        sent += item.tokens
        cold_seen += item.cold_tokens
        turns += item.batch
        if item.batch:
            newest_batch = position
        floor = newest_batch if newest_batch >= 0 else position
        while hot > hot_tokens and plan.hot_start < floor:
            leaving = items[plan.hot_start]
            hot -= leaving.tokens
            if leaving.cold_tokens > 0 and plan.hot_start not in went_early:
                pending.append(plan.hot_start)
                pending_tokens += leaving.cold_tokens
            plan.hot_start += 1
        for stale in early_at.get(position, ()):
            if stale >= plan.hot_start:  # still in the hot zone: the working set moved on, it goes with the next step
                went_early.add(stale)
                pending.append(stale)
                pending_tokens += items[stale].cold_tokens
        size = step_tokens
        if payback > 0 and turns:
            size = max(step_tokens, int(math.sqrt(2 * payback * cold_seen / turns * hot_tokens)))
        regular = pending_tokens >= size
        if regular:
            before = plan.steps
            pending, pending_tokens, sent = _step(plan, items, pending, position, size, sent, reach)
            # items held back by the cache arithmetic do not hold back a deep step
            regular = plan.steps > before or release_reach <= 0
        if not regular and deep_at > 0 and sent > deep_at and pending_tokens >= max(1, deep_min):
            # Pinned items in ``pending`` hold back this step as they hold back a regular one: measured on the
            # shared trajectories, letting deep steps through then (or holding released pins for later) made
            # many small cache breaks for few summaries saved, or the reverse (docs/lean-view.md).
            before = plan.steps
            pending, pending_tokens, sent = _step(plan, items, pending, position, deep_min, sent)
            plan.deep_steps += plan.steps - before
            if plan.steps > before:
                reach.stepped()
    plan.stubbed.sort()
    last = len(items) - 1
    plan.pinned = [i for i in pending if items[i].pinned_at(last)]
    return plan


class _Reach:
    """The cache arithmetic of a step (``release_reach``): which long-released items are worth its extra reach."""

    def __init__(self, ratio: float, items: Sequence[ViewItem], plan: ViewPlan) -> None:
        self.ratio = ratio
        self.items = items
        self.plan = plan
        self.fresh_from = 0  # items at or after this left the hot zone since the last step

    def held(self, free: list[int]) -> list[int]:
        """The free items this step leaves verbatim: old ones not worth rewriting the prefix down to them."""
        if self.ratio <= 0:
            return []
        old = [i for i in free if i < self.fresh_from]
        fresh = [i for i in free if i >= self.fresh_from]
        if not old or not fresh:
            return []
        stubbed = set(self.plan.stubbed)
        reach = sum(
            item.tokens - (item.cold_tokens - STUB_SLACK_TOKENS if i in stubbed else 0)
            for i, item in enumerate(self.items[old[0] : fresh[0]], old[0])
        )
        worth = sum(self.items[i].cold_tokens for i in old)
        return [] if worth * self.ratio >= reach else old

    def stepped(self) -> None:
        self.fresh_from = self.plan.hot_start


def _step(
    plan: ViewPlan,
    items: Sequence[ViewItem],
    pending: list[int],
    position: int,
    step_tokens: int,
    sent: int,
    reach: _Reach | None = None,
) -> tuple[list[int], int, int]:
    """Stub every unpinned pending item when they alone make a step; keep the pinned ones pending."""
    kept = [i for i in pending if items[i].pinned_at(position)]
    free = [i for i in pending if not items[i].pinned_at(position)]
    held = reach.held(free) if reach is not None else []
    if held:
        held_set = set(held)
        free = [i for i in free if i not in held_set]
        kept = sorted([*kept, *held])
    freed = sum(items[i].cold_tokens for i in free)
    if kept and freed < step_tokens or not free:
        return pending, sum(items[i].cold_tokens for i in pending), sent
    plan.stubbed.extend(free)
    plan.stubbed_at.update(dict.fromkeys(free, position))
    plan.step_ends.append(plan.hot_start)
    if reach is not None:
        reach.stepped()
    return kept, sum(items[i].cold_tokens for i in kept), sent - freed + STUB_SLACK_TOKENS * len(free)
