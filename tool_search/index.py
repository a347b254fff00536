"""Ranking: a field-weighted BM25 (BM25F) over an inverted index, plus name boosts.

Why our own BM25 instead of ``rank_bm25``: ``BM25Okapi.get_scores`` walks
every document for every query term, so a query costs O(terms x tools) in
Python; here each term's per-document contribution is computed once at build
time and a query only touches the postings of its own terms. Field weights
also need per-field length normalization, which ``rank_bm25`` cannot express.
The benchmark (bench/bench_tool_search.py) measures both.

Order of results: tools the query names exactly, then near-miss names
(typos), then BM25 hits; when all three are empty, the closest names.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import dataclass

from .catalog import Catalog, ToolEntry
from .fields import FIELDS, FieldWeights, field_counts
from .names import NameMatcher
from .tokens import normalize, split_words, tokenize

DEFAULT_WEIGHTS = FieldWeights()

MATCH_NAME = "name"
MATCH_FUZZY = "fuzzy_name"
MATCH_TEXT = "text"
MATCH_CLOSEST = "closest_name"


@dataclass(frozen=True)
class Hit:
    """One ranked tool. ``match`` says why it is here; ``score`` is its BM25 score."""

    entry: ToolEntry
    score: float
    match: str

    @property
    def name(self) -> str:
        return self.entry.name


class ToolIndex:
    """Immutable search index for one catalog; build once, query many times."""

    def __init__(self, catalog: Catalog, weights: FieldWeights = DEFAULT_WEIGHTS) -> None:
        self.catalog = catalog
        self.weights = weights
        self._entries = catalog.entries
        self._postings: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._build()
        self.names = NameMatcher([e.name for e in self._entries])

    def _build(self) -> None:
        docs = [field_counts(e) for e in self._entries]
        n = len(docs)
        w = self.weights
        field_weight = {f: getattr(w, f) for f in FIELDS}
        fields = [f for f in FIELDS if field_weight[f] > 0]
        avg_len = {f: (sum(d[f][0] for d in docs) / n if n else 0.0) for f in fields}
        raw: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for doc_id, doc in enumerate(docs):
            acc: dict[str, float] = {}
            for f in fields:
                length, counts = doc[f]
                if not length:
                    continue
                # BM25F: weight and length-normalize term frequency per field, then saturate once.
                inc = field_weight[f] / ((1.0 - w.b) + w.b * length / (avg_len[f] or 1.0))
                for t, c in counts.items():
                    acc[t] = acc.get(t, 0.0) + c * inc
            for t, tf in acc.items():
                raw[t].append((doc_id, tf))
        k1 = w.k1
        for term, plist in raw.items():
            df = len(plist)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            self._postings[term] = (
                tuple(d for d, _ in plist),
                tuple(idf * tf * (k1 + 1.0) / (k1 + tf) for _, tf in plist),
            )

    def __len__(self) -> int:
        return len(self._entries)

    def query_terms(self, query: str) -> list[str]:
        """Distinct normalized query terms; stopwords kept only if nothing else is left."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            terms = list(dict.fromkeys(normalize(t) for t in split_words(query)))
        return terms

    def bm25(self, query: str) -> dict[int, float]:
        """BM25F score per matching document index (only non-zero scores)."""
        acc: dict[int, float] = {}
        get = acc.get
        for term in self.query_terms(query):
            posting = self._postings.get(term)
            if posting is None:
                continue
            for doc_id, s in zip(*posting, strict=False):
                acc[doc_id] = get(doc_id, 0.0) + s
        return acc

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """Top ``limit`` tools for a query; never empty on a non-empty catalog and query."""
        query = (query or "").strip()
        if limit <= 0 or not query or not self._entries:
            return []
        scores = self.bm25(query)
        hits: list[Hit] = []
        seen: set[int] = set()
        exact = sorted(self.names.exact(query), key=lambda i: (-scores.get(i, 0.0), i))
        for idx in exact:
            hits.append(Hit(self._entries[idx], scores.get(idx, 0.0), MATCH_NAME))
            seen.add(idx)
        if len(hits) < limit:
            for idx, _ratio in self.names.fuzzy(query):
                if idx not in seen:
                    hits.append(Hit(self._entries[idx], scores.get(idx, 0.0), MATCH_FUZZY))
                    seen.add(idx)
        room = limit - len(hits)
        if room > 0 and scores:
            best = heapq.nlargest(room + len(seen), scores.items(), key=lambda kv: (kv[1], -kv[0]))
            for idx, s in best:
                if idx not in seen and len(hits) < limit:
                    hits.append(Hit(self._entries[idx], s, MATCH_TEXT))
                    seen.add(idx)
        if not hits:
            for idx, _sim in self.names.closest(query, limit):
                hits.append(Hit(self._entries[idx], 0.0, MATCH_CLOSEST))
        return hits[:limit]

    def suggest(self, name: str, limit: int = 5) -> list[str]:
        """Close tool names, for "unknown tool" errors."""
        return self.names.suggest(name, limit)
