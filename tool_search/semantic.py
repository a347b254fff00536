"""The optional semantic leg of ``stowage_tool_search``: BM25 fused with embeddings.

Off by default (``tool_search.semantic``); it needs the ``embeddings`` extra
(an offline MiniLM, see ``embeddings.py``). The two rankings are merged by
reciprocal rank fusion, so no score calibration is needed. What BM25 alone
does well stays as it is:

* tools the query names (exactly or nearly) stay first, ahead of the fusion;
* a question in another script that BM25 cannot match still gets nothing
  (the English model's nearest vectors for it are noise);
* the closest-spelt names BM25 falls back on are not fused: the dense
  ranking is the better guess when no word matched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Union

from .embeddings import Embedder, EmbeddingIndexCache, default_embedding_cache
from .fusion import RRF_K, reciprocal_rank_fusion
from .index import MATCH_FUZZY, MATCH_NAME, MATCH_TEXT, Hit, ToolIndex
from .query import has_latin

if TYPE_CHECKING:
    from .dense_leg import DenseLeg

MATCH_SEMANTIC = "semantic"
# How deep each ranking goes into the fusion.
FUSION_DEPTH = 50

EmbedderSource = Union[Embedder, Callable[[], Union[Embedder, None]]]


class SemanticSearch:
    """Fused search over one index; the embedder may be given as a loader, called on first use."""

    def __init__(
        self, embedder: EmbedderSource, *, cache: EmbeddingIndexCache | None = None, rrf_k: int = RRF_K
    ) -> None:
        self._source = embedder
        self._embedder: Embedder | None = embedder if hasattr(embedder, "embed") else None
        self._loaded = self._embedder is not None
        self._cache = cache if cache is not None else default_embedding_cache
        self.rrf_k = rrf_k

    @property
    def embedder(self) -> Embedder | None:
        if not self._loaded:
            self._loaded = True
            self._embedder = self._source()  # type: ignore[operator]
        return self._embedder

    def dense_ranking(self, index: ToolIndex, query: str) -> list[str] | None:
        """Names by embedding similarity, best first; ``None``: no dense ranking (BM25 alone)."""
        embedder = self.embedder
        if embedder is None:
            return None
        return [name for name, _ in self._cache.get(index.catalog, embedder).rank(query, FUSION_DEPTH)]

    def search(self, index: ToolIndex, query: str, limit: int) -> list[Hit]:
        lexical_hits = index.search(query, max(limit, FUSION_DEPTH))
        if limit <= 0 or not query.strip() or not len(index) or not self.available():
            return lexical_hits[:limit]
        pinned = [h for h in lexical_hits if h.match in (MATCH_NAME, MATCH_FUZZY)]
        lexical = [h for h in lexical_hits if h.match == MATCH_TEXT]
        if not lexical and not has_latin(query):
            return pinned[:limit]
        dense = self.dense_ranking(index, query)
        if dense is None:
            return lexical_hits[:limit]
        taken = {h.name for h in pinned}
        lexical_names = {h.name for h in lexical}
        hits = list(pinned)
        for name, score in reciprocal_rank_fusion([[h.name for h in lexical], dense], k=self.rrf_k):
            if len(hits) >= limit:
                break
            if name in taken:
                continue
            entry = index.catalog.get(name)
            if entry is not None:
                hits.append(Hit(entry, score, MATCH_TEXT if name in lexical_names else MATCH_SEMANTIC))
        return hits

    def available(self) -> bool:
        return self.embedder is not None


class LegSearch(SemanticSearch):
    """Fused search whose dense ranking comes from a host's ``DenseLeg`` (an endpoint, cached vectors).

    When no leg is configured, or it failed and is resting, the search is BM25 alone.
    """

    def __init__(self, source: Callable[[], "DenseLeg | None"], rrf_k: int = RRF_K) -> None:
        super().__init__(lambda: None, rrf_k=rrf_k)
        self._leg_source = source

    def available(self) -> bool:
        return self._leg_source() is not None

    def dense_ranking(self, index: ToolIndex, query: str) -> list[str] | None:
        leg = self._leg_source()
        return leg.rank(index.catalog, query, FUSION_DEPTH) if leg is not None else None


_shared: list[SemanticSearch] = []


def semantic_leg(
    settings: object, loader: Callable[[], Embedder | None], dense: Callable[[], "DenseLeg | None"] | None = None
) -> SemanticSearch | None:
    """The search bridge's semantic leg when ``settings.semantic`` is on.

    With a host ``dense`` source (the configured endpoint, or the offline
    model behind cached vectors), that; otherwise the process's one offline
    model, loaded once, lazily.
    """
    if not getattr(settings, "semantic", False):
        return None
    if dense is not None:
        return LegSearch(dense)
    if not _shared:
        _shared.append(SemanticSearch(loader))
    return _shared[0]
