"""Pick the few deferred tools worth keeping directly visible this turn.

Search costs the model a round-trip; when the user's message plainly calls
for a tool, showing that tool's real schema saves it. Preselection ranks the
deferrable tools against the latest user message with BM25, optionally fused
with an embedding ranking (RRF), and returns the top K names. Tools with no
evidence at all are never padded in: fewer, relevant tools beat K random ones.
"""

from __future__ import annotations

from .cache import IndexCache, default_cache
from .catalog import Catalog
from .embeddings import Embedder, EmbeddingIndexCache, default_embedding_cache
from .fusion import RRF_K, reciprocal_rank_fusion
from .index import MATCH_CLOSEST

DEFAULT_K = 8
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
) -> list[str]:
    """Top ``k`` tool names for ``user_message``, best first.

    With an ``embedder`` (see ``embeddings.load_default_embedder``) the BM25
    and embedding rankings are fused by reciprocal rank fusion; without one,
    BM25 alone decides.
    """
    message = (user_message or "").strip()
    if k <= 0 or not message or not len(catalog):
        return []
    lexical = bm25_ranking(catalog, message, max(k, FUSION_DEPTH), cache)
    if embedder is None:
        return lexical[:k]
    dense_cache = embedding_cache if embedding_cache is not None else default_embedding_cache
    dense_index = dense_cache.get(catalog, embedder)
    dense = [name for name, _ in dense_index.rank(message, max(k, FUSION_DEPTH))]
    fused = reciprocal_rank_fusion([lexical, dense], k=rrf_k)
    return [name for name, _ in fused[:k]]
