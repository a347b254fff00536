"""Word variants the stemmer leaves apart: "multiplication"/"multiply", "discovered"/"discoverer".

Snowball cuts most inflections to one stem, but derived forms often keep
different stems ("multipl" and "multipli", "discov" and "discover"). Where
one stem of the catalog's vocabulary is a prefix of a query term's stem (or
the other way round), the tool text probably says the same word in another
form. Such variants join the query at a fraction of the term's weight, so an
exact form still ranks first and a chance prefix ("list" in "listen") costs
little.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

# Stems shorter than this are never expanded: "add", "get", "set" would pull half the catalog.
MIN_STEM = 4
# Weight of a variant relative to the query term it stands for. Chosen on the bench's tuning half
# (split A, bench/bench_tool_search.py): 0.2 / 0.3 / 0.4 gave +0.5 / +0.6 / +0.5 points of recall@5 there
# and +0.4 / +0.4 / +0.0 on the held-out half.
VARIANT_WEIGHT = 0.3


class StemVariants:
    """Vocabulary stems bucketed by their first ``MIN_STEM`` letters, built once per index."""

    def __init__(self, vocabulary: Iterable[str]) -> None:
        buckets: dict[str, list[str]] = defaultdict(list)
        for stem in vocabulary:
            if len(stem) >= MIN_STEM and stem.isalpha():
                buckets[stem[:MIN_STEM]].append(stem)
        self._buckets = {k: tuple(sorted(v)) for k, v in buckets.items()}

    def of(self, stem: str) -> tuple[str, ...]:
        """Vocabulary stems that extend ``stem`` or that it extends (itself excluded)."""
        if len(stem) < MIN_STEM or not stem.isalpha():
            return ()
        return tuple(
            v
            for v in self._buckets.get(stem[:MIN_STEM], ())
            if v != stem and (v.startswith(stem) or stem.startswith(v))
        )

    def expand(self, weights: dict[str, float]) -> dict[str, float]:
        """``weights`` plus each term's variants at ``VARIANT_WEIGHT`` of its weight (a term's own weight wins)."""
        out = dict(weights)
        for term, weight in weights.items():
            for variant in self.of(term):
                if variant not in weights:
                    out[variant] = max(out.get(variant, 0.0), weight * VARIANT_WEIGHT)
        return out
