"""Name matching: exact (separator/case/prefix-insensitive) and fuzzy (trigram).

BM25 ranks by shared words, so it can rank a tool that the user named
exactly below a chattier neighbour (openai/codex #21503), and returns
nothing for a misspelt name. This matcher answers "which tool did the query
name?" independently of BM25, and gives the closest names when nothing else
matches, so a search never comes back empty.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from typing import Sequence

from .tokens import name_key, split_tool_name, trigrams

# Words that look like identifiers: contain a separator, a digit or an inner capital.
_IDENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/\-]*[A-Za-z0-9]")
_IDENT_HINT_RE = re.compile(r"[_.:/\-0-9]|[a-z][A-Z]")

FUZZY_MIN_RATIO = 0.8
FUZZY_MAX_QUERY_WORDS = 5
FUZZY_MAX_QUERY_CHARS = 80
SUGGEST_MIN_SIMILARITY = 0.4


class NameMatcher:
    """Lookup tables over the catalog's names, built once per catalog."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = list(names)
        self._keys: list[str] = []
        self._by_key: dict[str, list[int]] = defaultdict(list)
        self._grams: dict[str, list[int]] = defaultdict(list)
        self._gram_count: list[int] = []
        for idx, name in enumerate(self._names):
            server, tool = split_tool_name(name)
            full = name_key(name)
            self._keys.append(full)
            variants = {full, name_key(tool)}
            if server:
                variants.add(name_key(server + tool))
            for key in variants:
                if key:
                    self._by_key[key].append(idx)
            grams = trigrams(full)
            self._gram_count.append(len(grams))
            for g in grams:
                self._grams[g].append(idx)

    def exact(self, query: str) -> list[int]:
        """Indices of tools the query names exactly (modulo case, separators, MCP prefix).

        Either the whole query is a name ("Create Issue", "github.create_issue")
        or one identifier-looking word of it is ("run mcp__x__foo_bar now").
        """
        found: list[int] = list(self._by_key.get(name_key(query), ()))
        for word in _IDENT_RE.findall(query):
            if _IDENT_HINT_RE.search(word):
                for idx in self._by_key.get(name_key(word), ()):
                    if idx not in found:
                        found.append(idx)
        return found

    def fuzzy(self, query: str, min_ratio: float = FUZZY_MIN_RATIO) -> list[tuple[int, float]]:
        """Tools whose name is a near-miss of a short query (typos, dropped letters).

        Long prose queries are skipped: they are not names, and comparing them
        character-wise only adds noise and latency.
        """
        if len(query) > FUZZY_MAX_QUERY_CHARS or len(query.split()) > FUZZY_MAX_QUERY_WORDS:
            return []
        candidates: dict[int, float] = {}
        probes = {name_key(query)}
        probes.update(name_key(w) for w in _IDENT_RE.findall(query) if _IDENT_HINT_RE.search(w))
        for probe in probes:
            if len(probe) < 4:
                continue
            for idx, _ in self._trigram_candidates(probe, limit=20):
                ratio = self._best_ratio(probe, idx, min_ratio)
                if ratio >= min_ratio and ratio > candidates.get(idx, 0.0):
                    candidates[idx] = ratio
        return sorted(candidates.items(), key=lambda kv: (-kv[1], kv[0]))

    def closest(self, query: str, limit: int) -> list[tuple[int, float]]:
        """Best name matches for any query, for when nothing else matched.

        Scores by the share of the query's trigrams found in a name, so a
        fragment ("githb") still finds the long name that contains it; falls
        back to difflib similarity when no trigram is shared at all.
        """
        probe = name_key(query)
        if not probe or not self._names:
            return []
        ranked = self._trigram_candidates(probe, limit=limit)
        if ranked:
            return ranked
        scored = [(idx, difflib.SequenceMatcher(None, probe, key).ratio()) for idx, key in enumerate(self._keys)]
        scored.sort(key=lambda kv: (-kv[1], kv[0]))
        return scored[:limit]

    def suggest(self, name: str, limit: int = 5) -> list[str]:
        """Close names for an error message ("did you mean ...")."""
        exact = self.exact(name)
        picks = [self._names[i] for i in exact]
        near = self.fuzzy(name, min_ratio=0.6) + [
            (i, sim) for i, sim in self.closest(name, limit) if sim >= SUGGEST_MIN_SIMILARITY
        ]
        for idx, _ in near:
            if self._names[idx] not in picks:
                picks.append(self._names[idx])
        return picks[:limit]

    def _trigram_candidates(self, probe: str, limit: int) -> list[tuple[int, float]]:
        grams = trigrams(probe)
        shared: dict[int, int] = defaultdict(int)
        for g in grams:
            for idx in self._grams.get(g, ()):
                shared[idx] += 1
        if not shared:
            return []
        n = len(grams)
        scored = []
        for idx, s in shared.items():
            containment = s / n
            dice = 2 * s / (n + self._gram_count[idx])
            scored.append((idx, 0.7 * containment + 0.3 * dice))
        scored.sort(key=lambda kv: (-kv[1], kv[0]))
        return scored[:limit]

    def _best_ratio(self, probe: str, idx: int, min_ratio: float) -> float:
        server, tool = split_tool_name(self._names[idx])
        best = 0.0
        for key in {self._keys[idx], name_key(tool)}:
            sm = difflib.SequenceMatcher(None, probe, key)
            if sm.real_quick_ratio() >= min_ratio and sm.quick_ratio() >= min_ratio:
                best = max(best, sm.ratio())
        return best
