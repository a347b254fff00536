"""When to start writing the next summary, and when a compaction takes it before the trigger."""

from __future__ import annotations


def should_prepare(prompt_tokens: int, threshold_tokens: int, prepare_at: float) -> bool:
    """True once the last request as sent reached ``prepare_at`` of the compaction trigger.

    ``prompt_tokens`` is the provider's count for the last request (the -1
    sentinel right after a compaction, or 0 before any usage, never
    prepares); ``prepare_at`` 0 turns preparation off.  A request already
    over the trigger still prepares: the compaction it calls for has not
    run yet.
    """
    if prepare_at <= 0 or threshold_tokens <= 0 or prompt_tokens <= 0:
        return False
    return prompt_tokens >= prepare_at * threshold_tokens


def take_early(tokens: int, threshold_tokens: int, *, ready: bool) -> bool:
    """Compact now, under the trigger, with the summary prepared for it?

    Yes once it is ready: the compaction keeps what came since verbatim and
    the turn does not wait (left to the trigger, the history could outgrow
    the prepared window first, and its call would be wasted).  At or over
    the trigger the usual decision applies.
    """
    if threshold_tokens <= 0 or tokens <= 0 or tokens >= threshold_tokens:
        return False
    return ready


def likely_used(turn_growth: int | None, threshold_tokens: int, prepare_at: float) -> bool:
    """Whether a summary prepared at this turn end will fit the compaction that needs it.

    The compaction uses it while the history grew no more than the prepared
    window's slack (``threshold * (1 - prepare_at)`` tokens of longer tail)
    since it was prepared, and that compaction usually comes during the next
    turn.  So it is prepared when the last turn grew the history (all of it,
    not the request as sent: stubs hide most growth) by no more than the
    slack; ``turn_growth`` None (not known yet) prepares.  Long agent turns
    (a whole task per user message) grow far more: a summary prepared at
    their end is for a window the compaction no longer picks, a wasted call.
    """
    return turn_growth is None or turn_growth <= threshold_tokens * (1 - prepare_at)
