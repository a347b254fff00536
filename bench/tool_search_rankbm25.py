"""The same tokens ranked by ``rank_bm25.BM25Okapi``, to decide our own index vs the library.

Field weights are approximated the only way ``rank_bm25`` allows: by
repeating a field's tokens (name x3, description and parameter names x1,
parameter help text x1). No name boosts, so it is compared with Stowage's
BM25F-only ranking as well as with the full search.
"""

from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from stowage.tool_search.catalog import Catalog
from stowage.tool_search.fields import entry_fields
from stowage.tool_search.tokens import tokenize

REPEAT = {"name": 3, "server": 1, "description": 1, "param_names": 1, "param_text": 1}


class RankBM25Index:
    def __init__(self, catalog: Catalog) -> None:
        self.names = catalog.names
        corpus = []
        for entry in catalog.entries:
            fields = entry_fields(entry)
            doc: list[str] = []
            for f, times in REPEAT.items():
                doc.extend(fields[f] * times)
            corpus.append(doc or ["_"])
        self._bm25 = BM25Okapi(corpus, k1=1.2, b=0.75)

    def search(self, query: str, limit: int) -> list[str]:
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [self.names[i] for i in top if scores[i] > 0]
