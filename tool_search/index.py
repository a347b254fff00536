"""Ranking: a field-weighted BM25 (BM25F) over an inverted index, plus name boosts.

Why our own BM25 instead of ``rank_bm25``: ``BM25Okapi.get_scores`` walks
every document for every query term, so a query costs O(terms x tools) in
Python; here each term's per-document contribution is computed once at build
time and a query only touches the postings of its own terms. Field weights
also need per-field length normalization, which ``rank_bm25`` cannot express.
The benchmark (bench/bench_tool_search.py) measures both.

Order of results: tools the query names exactly, then near-miss names
(typos), then BM25 hits; when all three are empty, the closest names (only
for a query with Latin letters or digits: a Chinese question that matched
nothing gets nothing, not the alphabetically first tools).

BM25 hits are re-ranked by name coverage: the share (by IDF) of a tool's own
name words the query contains. "current weather in Boston" then puts
``get_current_weather`` above ``get_weather``, whose description happens to
repeat "weather" more.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import dataclass

from .catalog import Catalog, ToolEntry
from .fields import FIELDS, FieldWeights, field_counts
from .names import NameMatcher
from .query import has_latin, query_weights
from .tokens import name_tokens, tokenize
from .variants import StemVariants

DEFAULT_WEIGHTS = FieldWeights()

MATCH_NAME = "name"
MATCH_FUZZY = "fuzzy_name"
MATCH_TEXT = "text"
MATCH_CLOSEST = "closest_name"

# Score added to a BM25 hit whose name words all occur in the query (scaled by
# the IDF share covered), and how many top BM25 hits are re-ranked by it.
# Chosen on BFCL (bench/bench_tool_search.py): 2 -> 4 -> 8 moved recall@5 by
# under half a point; 4 is in the flat middle.
NAME_COVERAGE_BONUS = 4.0
RERANK_DEPTH = 64
# Added when two adjacent words of the tool's name are adjacent in the query too
# ("current weather" for ``get_current_weather``). Chosen on BFCL: +0.6 point of recall@5.
NAME_PHRASE_BONUS = 2.0


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
        self._name_terms: list[tuple[tuple[str, float], ...]] = []
        self._name_pairs: list[frozenset[tuple[str, str]]] = []
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
        idfs: dict[str, float] = {}
        for term, plist in raw.items():
            df = len(plist)
            idf = idfs[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            self._postings[term] = (
                tuple(d for d, _ in plist),
                tuple(idf * tf * (k1 + 1.0) / (k1 + tf) for _, tf in plist),
            )
        # Name words (digits left out: "Hotels_4_" says nothing of the task) with their IDF.
        self._name_terms = [
            tuple((t, idfs.get(t, 0.0)) for t in sorted(doc["name"][1]) if not t.isdigit()) for doc in docs
        ]
        self.variants = StemVariants(self._postings)
        self._name_pairs = [
            frozenset(zip(toks, toks[1:], strict=False)) for toks in (name_tokens(e.name)[0] for e in self._entries)
        ]

    def __len__(self) -> int:
        return len(self._entries)

    def query_terms(self, query: str) -> list[str]:
        """Distinct normalized query terms; stopwords kept only if nothing else is left."""
        return list(query_weights(query))

    def bm25(self, query: str) -> dict[int, float]:
        """BM25F score per matching document index (only non-zero scores)."""
        return self._bm25(self.variants.expand(query_weights(query)))

    def _bm25(self, weights: dict[str, float]) -> dict[int, float]:
        acc: dict[int, float] = {}
        get = acc.get
        for term, weight in weights.items():
            posting = self._postings.get(term)
            if posting is None:
                continue
            if weight == 1.0:
                for doc_id, s in zip(*posting, strict=False):
                    acc[doc_id] = get(doc_id, 0.0) + s
            else:
                for doc_id, s in zip(*posting, strict=False):
                    acc[doc_id] = get(doc_id, 0.0) + s * weight
        return acc

    def _reranked(
        self, scores: dict[int, float], weights: dict[str, float], depth: int, query: str = ""
    ) -> list[tuple[int, float]]:
        """The top BM25 hits with the name-coverage and name-phrase bonuses added, best first."""
        top = heapq.nlargest(max(depth, RERANK_DEPTH), scores.items(), key=lambda kv: (kv[1], -kv[0]))
        toks = tokenize(query)
        pairs = set(zip(toks, toks[1:], strict=False))
        out = []
        for idx, s in top:
            if pairs and not pairs.isdisjoint(self._name_pairs[idx]):
                s += NAME_PHRASE_BONUS
            name_terms = self._name_terms[idx]
            total = sum(i for _, i in name_terms)
            if total > 0:
                covered = sum(i * weights[t] for t, i in name_terms if t in weights)
                s += NAME_COVERAGE_BONUS * covered / total
            out.append((idx, s))
        out.sort(key=lambda kv: (-kv[1], kv[0]))
        return out

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """Top ``limit`` tools for a query; never empty on a non-empty catalog and query."""
        query = (query or "").strip()
        if limit <= 0 or not query or not self._entries:
            return []
        weights = self.variants.expand(query_weights(query))
        scores = self._bm25(weights)
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
            for idx, s in self._reranked(scores, weights, room + len(seen), query):
                if idx not in seen and len(hits) < limit:
                    hits.append(Hit(self._entries[idx], s, MATCH_TEXT))
                    seen.add(idx)
        if not hits and has_latin(query):
            for idx, _sim in self.names.closest(query, limit):
                hits.append(Hit(self._entries[idx], 0.0, MATCH_CLOSEST))
        return hits[:limit]

    def suggest(self, name: str, limit: int = 5) -> list[str]:
        """Close tool names, for "unknown tool" errors."""
        return self.names.suggest(name, limit)
