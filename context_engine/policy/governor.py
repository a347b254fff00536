"""When automatic compaction may run: Stowage's own anti-thrash policy.

The host gives no protection against a compaction loop: it asks
``should_compress`` before every API call and after every tool batch.  The
governor enforces, for automatic (not forced) compactions:

* at most one compaction per user turn (unless the context actually
  overflows the window);
* an effectiveness check on the first real prompt count after a compaction:
  still over the threshold counts as ineffective; after ``max_ineffective``
  in a row, compaction backs off for ``backoff_turns`` turns, doubling each
  further time;
* a cooldown after a summary-model failure, during which compactions still
  run but use the deterministic fallback instead of calling the model.  A
  summary prepared ahead that fails counts when it fails (from its thread,
  ``ahead/worker.py``); one that a compaction waited for in vain counts as
  that compaction's failure, once.

Turns are counted by the host's per-turn hook when it is installed;
otherwise by the newest user message seen by ``compress`` and, for the
backoff, by API calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Hashable

from ..records.part_status import GovernorStatus

API_CALLS_PER_TURN_ESTIMATE = 3


@dataclass(frozen=True)
class GovernorPolicy:
    max_ineffective: int = 2
    backoff_turns: int = 2
    failure_cooldown_seconds: float = 600.0


class Governor:
    def __init__(self, policy: GovernorPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._clock = clock
        self.reset()

    def reset(self) -> None:
        self.turn = 0
        self.api_calls = 0
        self.hook_driven = False
        self._turn_key: Hashable | None = None
        self._compacted_turn: int | None = None
        self._compacted_key: Hashable | None = None
        self.ineffective_streak = 0
        self.verify_pending = False
        self._backoff_until_turn: int | None = None
        self._backoff_until_call: int | None = None
        self.summary_failures = 0
        self._cooldown_until = 0.0

    # -- turns ---------------------------------------------------------------
    def end_turn(self) -> None:
        """Called by the per-turn hook when a user turn finishes."""
        self.hook_driven = True
        self.turn += 1

    def observe_turn_key(self, key: Hashable) -> None:
        """``compress`` saw the newest user message; a new one means a new turn."""
        if key != self._turn_key:
            self._turn_key = key
            if not self.hook_driven:
                self.turn += 1

    def compacted_this_turn(self) -> bool:
        if self.hook_driven:
            return self._compacted_turn == self.turn
        return self._compacted_key is not None and self._compacted_key == self._turn_key

    def api_call(self) -> None:
        self.api_calls += 1

    # -- outcomes ------------------------------------------------------------
    def record_compaction(self) -> None:
        self._compacted_turn = self.turn
        self._compacted_key = self._turn_key
        self.verify_pending = True

    def record_noop(self) -> None:
        """A requested compaction found nothing to do: that is ineffective too."""
        self._count_ineffective()

    def verify(self, prompt_tokens: int, threshold_tokens: int) -> bool | None:
        """Judge the last compaction on the first real prompt count after it."""
        if not self.verify_pending or prompt_tokens <= 0:
            return None
        self.verify_pending = False
        if threshold_tokens and prompt_tokens >= threshold_tokens:
            self._count_ineffective()
            return False
        self.ineffective_streak = 0
        return True

    def _count_ineffective(self) -> None:
        self.ineffective_streak += 1
        excess = self.ineffective_streak - self.policy.max_ineffective
        if excess >= 0:
            turns = self.policy.backoff_turns * (2 ** min(excess, 6))
            self._backoff_until_turn = self.turn + turns
            self._backoff_until_call = self.api_calls + turns * API_CALLS_PER_TURN_ESTIMATE

    def backoff_reason(self) -> str | None:
        """Why automatic compaction is paused, or None."""
        if self._backoff_until_turn is None:
            return None
        if self.turn >= self._backoff_until_turn or (
            not self.hook_driven and self._backoff_until_call is not None and self.api_calls >= self._backoff_until_call
        ):
            self._backoff_until_turn = self._backoff_until_call = None
            return None
        return (
            f"backing off after {self.ineffective_streak} ineffective compactions "
            f"(until turn {self._backoff_until_turn})"
        )

    # -- summary model failures ---------------------------------------------
    def record_summary_failure(self) -> None:
        self.summary_failures += 1
        factor = 2 ** min(self.summary_failures - 1, 2)
        self._cooldown_until = self._clock() + self.policy.failure_cooldown_seconds * factor

    def record_summary_success(self) -> None:
        self.summary_failures = 0
        self._cooldown_until = 0.0

    def cooldown_remaining(self) -> float:
        return max(0.0, self._cooldown_until - self._clock())

    def clear_cooldown(self) -> None:
        self._cooldown_until = 0.0

    def status(self) -> GovernorStatus:
        return GovernorStatus(
            turn=self.turn,
            ineffective_streak=self.ineffective_streak,
            backoff=self.backoff_reason(),
            summary_failures=self.summary_failures,
            summary_cooldown_seconds=round(self.cooldown_remaining(), 1),
            compacted_this_turn=self.compacted_this_turn(),
        )
