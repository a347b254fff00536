"""The anti-thrash governor: one compaction per turn, effectiveness verdicts, backoff, cooldown."""

from __future__ import annotations

import copy

from stowage.context_engine.policy.governor import API_CALLS_PER_TURN_ESTIMATE, Governor, GovernorPolicy


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(**policy) -> tuple[Governor, Clock]:
    clock = Clock()
    return Governor(GovernorPolicy(**policy), clock=clock), clock


def test_one_compaction_per_turn_by_turn_key():
    g, _ = make()
    g.observe_turn_key("ask 1")
    assert not g.compacted_this_turn()
    g.record_compaction()
    assert g.compacted_this_turn()
    g.observe_turn_key("ask 1")  # same newest user message: same turn
    assert g.compacted_this_turn()
    g.observe_turn_key("ask 2")
    assert not g.compacted_this_turn() and g.turn == 2


def test_one_compaction_per_turn_by_hook():
    g, _ = make()
    g.observe_turn_key("ask")
    g.record_compaction()
    g.end_turn()
    assert g.hook_driven and not g.compacted_this_turn()
    g.record_compaction()
    g.observe_turn_key("another ask")  # with the hook, keys do not count turns
    assert g.compacted_this_turn()
    turn = g.turn
    g.observe_turn_key("third")
    assert g.turn == turn


def test_verdict_only_on_first_real_count_after_compaction():
    g, _ = make()
    assert g.verify(90_000, 48_000) is None  # nothing pending
    g.record_compaction()
    assert g.verify(-1, 48_000) is None and g.verify(0, 48_000) is None  # sentinel / no usage
    assert g.verify_pending
    assert g.verify(20_000, 48_000) is True
    assert g.verify(90_000, 48_000) is None  # judged once
    assert g.ineffective_streak == 0


def test_backoff_after_max_ineffective_then_doubles_and_expires():
    g, _ = make(max_ineffective=2, backoff_turns=2)
    g.end_turn()  # hook-driven turns
    for expected_streak in (1, 2):
        g.record_compaction()
        assert g.verify(60_000, 48_000) is False
        assert g.ineffective_streak == expected_streak
    reason = g.backoff_reason()
    assert reason and "2 ineffective" in reason
    start = g.turn
    g.end_turn()
    assert g.backoff_reason() is not None
    g.end_turn()
    assert g.turn == start + 2 and g.backoff_reason() is None
    # a third ineffective compaction doubles the pause
    g.record_compaction()
    assert g.verify(60_000, 48_000) is False
    for _ in range(3):
        g.end_turn()
        assert g.backoff_reason() is not None
    g.end_turn()
    assert g.backoff_reason() is None
    # an effective one resets the streak
    g.record_compaction()
    assert g.verify(10_000, 48_000) is True and g.ineffective_streak == 0


def test_backoff_expires_by_api_calls_without_hook():
    g, _ = make(max_ineffective=1, backoff_turns=1)
    g.record_noop()
    assert g.backoff_reason() is not None
    for _ in range(API_CALLS_PER_TURN_ESTIMATE - 1):
        g.api_call()
    assert g.backoff_reason() is not None
    g.api_call()
    assert g.backoff_reason() is None


def test_noop_counts_as_ineffective():
    g, _ = make(max_ineffective=2)
    g.record_noop()
    assert g.backoff_reason() is None
    g.record_noop()
    assert g.backoff_reason() is not None


def test_failure_cooldown_grows_and_clears():
    g, clock = make(failure_cooldown_seconds=100)
    assert g.cooldown_remaining() == 0
    g.record_summary_failure()
    assert g.cooldown_remaining() == 100
    clock.now += 60
    assert g.cooldown_remaining() == 40
    g.record_summary_failure()
    assert g.cooldown_remaining() == 200
    g.record_summary_failure()
    g.record_summary_failure()
    assert g.cooldown_remaining() == 400  # capped at 4x
    clock.now += 401
    assert g.cooldown_remaining() == 0
    g.record_summary_failure()
    g.record_summary_success()
    assert g.cooldown_remaining() == 0 and g.summary_failures == 0
    g.record_summary_failure()
    g.clear_cooldown()
    assert g.cooldown_remaining() == 0


def test_reset_and_snapshot_and_deepcopy():
    g, _ = make()
    g.observe_turn_key("x")
    g.record_compaction()
    g.record_summary_failure()
    clone = copy.deepcopy(g)
    snap = g.status()
    assert snap.compacted_this_turn and snap.summary_failures == 1 and snap.turn == 1
    g.reset()
    assert g.turn == 0 and not g.compacted_this_turn() and g.cooldown_remaining() == 0
    assert clone.turn == 1 and clone.compacted_this_turn()
