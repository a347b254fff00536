"""When to start writing the next summary."""

from __future__ import annotations

from typing import Sequence


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


GROWTH_REQUESTS = 30  # the newest requests the history's growth rate is measured on


def growth_ratio(figures: Sequence[tuple[int, int]]) -> float:
    """Tokens the whole history grew per token the request as sent grew (1 with nothing shaped).

    ``figures`` are ``(full, sent)`` per request, oldest first; only the
    newest requests since the last compaction (where ``full`` fell) count.
    """
    run = list(figures[-GROWTH_REQUESTS:])
    for index in range(len(run) - 1, 0, -1):
        if run[index - 1][0] > run[index][0]:
            run = run[index:]
            break
    if len(run) < 2:
        return 1.0
    grew_full, grew_sent = run[-1][0] - run[0][0], run[-1][1] - run[0][1]
    return 1.0 if grew_full <= 0 else max(1.0, grew_full / max(1, grew_sent))


def likely_used(prompt_tokens: int, threshold_tokens: int, prepare_at: float, ratio: float) -> bool:
    """Whether a summary prepared now will fit the compaction that needs it.

    The compaction uses it while the history grew no more than the prepared
    window's slack (``threshold * (1 - prepare_at)`` tokens of longer tail)
    since it was prepared.  Until the trigger the request as sent still grows
    ``threshold - prompt`` tokens, the history ``ratio`` times that: with the
    lean view on, stubs hide most of the growth, so a summary prepared at
    ``prepare_at`` would usually be for a window the compaction no longer
    picks, a wasted call.
    """
    return (threshold_tokens - prompt_tokens) * ratio <= threshold_tokens * (1 - prepare_at)
