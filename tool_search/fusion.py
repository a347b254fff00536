"""Reciprocal rank fusion: merge rankings without calibrating their scores.

BM25 scores and cosine similarities live on unrelated scales; RRF only uses
each item's rank in each list (score = sum of 1 / (k + rank)), so the two
rankers can be combined without tuning a mixing weight per catalog.
"""

from __future__ import annotations

from typing import Hashable, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[T]], *, k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[T, float]]:
    """Fused (item, score) list, best first; ties keep first-seen order."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("weights must match rankings one to one")
    scores: dict[T, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
