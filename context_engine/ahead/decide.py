"""When to start writing the next summary."""

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
