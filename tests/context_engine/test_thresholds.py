"""The engine's numbers (policy/thresholds.py) and the host's answer of the one decision (policy/decision.py)."""

from __future__ import annotations

from stowage.context_engine.policy.decision import Asked, Pressure, decide
from stowage.context_engine.policy.governor import Governor, GovernorPolicy
from stowage.context_engine.policy.thresholds import trigger_for


def compaction_decision(
    tokens: int, threshold: int, governor: Governor, *, past_ceiling: bool = False
) -> tuple[bool, str | None]:
    """The host's answer at ``tokens`` with ``governor`` (a request counted past the ceiling: ``past_ceiling``)."""
    pressure = Pressure(
        Asked.CHECK,
        tokens,
        threshold,
        window=1000 if past_ceiling else 0,
        prepare_at=0,
        counted=tokens if past_ceiling else None,
        hook_driven=governor.hook_driven,
        compacted_this_turn=governor.compacted_this_turn(),
        backoff=governor.backoff_reason(),
    )
    return decide(pressure).host_answer()


def _governor() -> Governor:
    return Governor(GovernorPolicy(max_ineffective=1, backoff_turns=2), clock=lambda: 0.0)


def test_below_the_threshold_or_without_one_nothing_is_compacted_and_no_reason_given():
    governor = _governor()
    assert compaction_decision(999, 1000, governor) == (False, None)
    assert compaction_decision(-1, 1000, governor) == (False, None)  # the host's "compression just ran"
    assert compaction_decision(5000, 0, governor) == (False, None)  # no window known yet
    assert compaction_decision(1000, 1000, governor) == (True, None)


def test_the_governor_blocks_with_the_reason_the_host_shows():
    governor = _governor()
    governor.end_turn()  # the turn clock: once per turn applies
    governor.record_compaction()
    assert compaction_decision(2000, 1000, governor) == (False, "once_per_turn")
    # a request that would still pass the ceiling after this turn's compaction compacts again
    assert compaction_decision(2000, 1000, governor, past_ceiling=True) == (True, None)
    governor.end_turn()
    assert compaction_decision(2000, 1000, governor) == (True, None)
    governor.record_compaction()
    governor.verify(2000, 1000)  # still over the threshold: ineffective, and max_ineffective is 1
    governor.end_turn()
    allowed, reason = compaction_decision(2000, 1000, governor)
    assert not allowed and reason is not None and reason.startswith("backoff:backing off after 1 ineffective")


def test_a_model_threshold_beats_the_configured_share_and_names_its_key():
    default = trigger_for({"other": 0.9}, "m", "p", 200_000, default=0.5, view_enabled=True)
    assert (default.key, default.share, default.tokens) == ("view.compact_at", 0.5, 100_000)
    plain = trigger_for(None, "m", "p", 200_000, default=0.75, view_enabled=False)
    assert (plain.key, plain.tokens) == ("compaction.threshold", 150_000)
    model = trigger_for({"p:m": 60_000}, "m", "p", 200_000, default=0.5, view_enabled=True)
    assert (model.key, model.share, model.tokens) == ("compression.model_thresholds", 0.3, 60_000)
