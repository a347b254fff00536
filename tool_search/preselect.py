"""Pick the few deferred tools worth keeping directly visible this turn.

Search costs the model a round-trip; when the user's message plainly calls
for a tool, showing that tool's real schema saves it. Preselection ranks the
deferrable tools against the latest user message with BM25, optionally fused
with an embedding ranking (RRF), and returns the top K names. Tools with no
evidence at all are never padded in: fewer, relevant tools beat K random ones.
"""

from __future__ import annotations

from typing import Protocol

from .cache import IndexCache, default_cache
from .catalog import Catalog
from .embeddings import Embedder, EmbeddingIndexCache, default_embedding_cache
from .fusion import RRF_K, reciprocal_rank_fusion
from .index import MATCH_CLOSEST

DEFAULT_K = 8


class DenseRanker(Protocol):
    """A semantic ranking that may be unavailable (``None``: rank with BM25 alone); see ``dense_leg``."""

    def rank(self, catalog: Catalog, query: str, limit: int) -> list[str] | None: ...


# Depth of each ranking fed into fusion: deep enough that a tool ranked
# modestly by both rankers can still surface.
FUSION_DEPTH = 50


def bm25_ranking(catalog: Catalog, message: str, limit: int, cache: IndexCache | None = None) -> list[str]:
    """Names ranked by the lexical index, name matches first; no fallback guesses."""
    index = (cache if cache is not None else default_cache).get(catalog)
    return [h.name for h in index.search(message, limit) if h.match != MATCH_CLOSEST]


def preselect(
    catalog: Catalog,
    user_message: str,
    k: int = DEFAULT_K,
    *,
    embedder: Embedder | None = None,
    cache: IndexCache | None = None,
    embedding_cache: EmbeddingIndexCache | None = None,
    rrf_k: int = RRF_K,
    dense: DenseRanker | None = None,
) -> list[str]:
    """Top ``k`` tool names for ``user_message``, best first.

    With an ``embedder`` (see ``embeddings.load_default_embedder``) the BM25
    and embedding rankings are fused by reciprocal rank fusion; without one,
    BM25 alone decides.  ``dense`` (a ``DenseLeg``: cached vectors, an
    endpoint that may fail) takes the place of ``embedder``; when it answers
    ``None`` BM25 alone decides too.
    """
    message = (user_message or "").strip()
    if k <= 0 or not message or not len(catalog):
        return []
    lexical = bm25_ranking(catalog, message, max(k, FUSION_DEPTH), cache)
    if dense is not None:
        ranked = dense.rank(catalog, message, max(k, FUSION_DEPTH))
        if ranked is None:
            return lexical[:k]
        return [name for name, _ in reciprocal_rank_fusion([lexical, ranked], k=rrf_k)[:k]]
    if embedder is None:
        return lexical[:k]
    dense_cache = embedding_cache if embedding_cache is not None else default_embedding_cache
    dense_index = dense_cache.get(catalog, embedder)
    by_vector = [name for name, _ in dense_index.rank(message, max(k, FUSION_DEPTH))]
    fused = reciprocal_rank_fusion([lexical, by_vector], k=rrf_k)
    return [name for name, _ in fused[:k]]
