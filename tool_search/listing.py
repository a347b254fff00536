"""The deferred-tool listing embedded in ``stowage_tool_search``'s description.

With the names in front of it, the model can describe or call a deferred tool
directly and skip the search round trip. The listing is grouped by toolset and
kept within a token budget by degrading, as a whole, through three levels:

1. ``name: first sentence of its description`` per tool,
2. names only, comma-separated per toolset,
3. per-toolset counts ("12 tools, names not listed"),

and, if even the counts do not fit, as many toolsets as fit plus how many are
left out. The text depends only on the catalog (sorted by name) and the
budget, so it is byte-identical on every request of a session: it sits in the
cached prompt prefix and changes only when the deferred tools change.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Callable

from .catalog import Catalog

LEVEL_SENTENCES, LEVEL_NAMES, LEVEL_COUNTS, LEVEL_PARTIAL = "sentences", "names", "counts", "partial"
FIRST_SENTENCE_CHARS = 120
HEADER = (
    "Deferred tools (describe or call a listed name directly, without searching first; search for anything not listed):"
)

_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s|\n")
_WS_RE = re.compile(r"\s+")

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """Four characters a token: the fallback when no tokenizer is given."""
    return (len(text) + 3) // 4


PIECE_CHARS = 1000


def count_in_pieces(count_tokens: TokenCounter, text: str) -> int:
    """Tokens of ``text`` counted in pieces of at most ``PIECE_CHARS``, cut before whitespace.

    A host's counter may estimate long texts from a sample (Stowage's does, above 1 KB); the listing must
    stay within its budget exactly, and is counted once per catalog, so it is counted piece by piece.
    """
    total, start, n = 0, 0, len(text)
    while start < n:
        end = min(n, start + PIECE_CHARS)
        if end < n:
            cut = max(text.rfind(" ", start + 1, end), text.rfind("\n", start + 1, end))
            if cut > start:
                end = cut
        total += count_tokens(text[start:end])
        start = end
    return total


def listing_budget(max_tokens: int, window_pct: float, context_length: int) -> int:
    """The smaller of the configured maximum and the window share; 0 means no listing."""
    if max_tokens <= 0 or window_pct <= 0:
        return 0
    if context_length > 0:
        return max(0, min(max_tokens, int(context_length * window_pct / 100)))
    return max_tokens


def first_sentence(text: str, limit: int = FIRST_SENTENCE_CHARS) -> str:
    """The description's first sentence, on one line, cut at a word boundary."""
    flat = _SENTENCE_END_RE.split((text or "").strip(), maxsplit=1)[0]
    flat = _WS_RE.sub(" ", flat).strip()
    if len(flat) > limit:
        flat = flat[:limit].rsplit(" ", 1)[0] + "…"
    return flat


def _groups(catalog: Catalog) -> list[tuple[str, list]]:
    groups: dict[str, list] = {}
    for entry in catalog.entries:
        groups.setdefault(entry.toolset or entry.source, []).append(entry)
    return sorted(groups.items())


def render(catalog: Catalog, level: str) -> str:
    """The listing at one level (no budget applied)."""
    lines = [HEADER]
    for toolset, entries in _groups(catalog):
        if level == LEVEL_SENTENCES:
            lines.append(f"[{toolset}]")
            for e in entries:
                sentence = first_sentence(e.description)
                lines.append(f"- {e.name}: {sentence}" if sentence else f"- {e.name}")
        elif level == LEVEL_NAMES:
            lines.append(f"[{toolset}] " + ", ".join(e.name for e in entries))
        else:
            lines.append(f"[{toolset}] {len(entries)} tools, names not listed")
    return "\n".join(lines)


def build_listing(catalog: Catalog, budget: int, count_tokens: TokenCounter = approx_tokens) -> tuple[str, str]:
    """(listing text, level used) within ``budget`` tokens; ("", "") when nothing fits."""
    if budget <= 0 or not len(catalog):
        return "", ""
    raw_count = count_tokens
    count_tokens = lambda text: count_in_pieces(raw_count, text)  # noqa: E731
    for level in (LEVEL_SENTENCES, LEVEL_NAMES, LEVEL_COUNTS):
        text = render(catalog, level)
        if count_tokens(text) <= budget:
            return text, level
    lines = [HEADER]
    groups = _groups(catalog)
    for i, (toolset, entries) in enumerate(groups):
        line = f"[{toolset}] {len(entries)} tools, names not listed"
        rest = f"... and {len(groups) - i} more toolsets: search to find their tools"
        if count_tokens("\n".join(lines + [line, rest])) > budget:
            lines.append(rest)
            break
        lines.append(line)
    text = "\n".join(lines)
    if count_tokens(text) > budget:
        return "", ""
    return text, LEVEL_PARTIAL


class ListingCache:
    """Listings by (catalog checksum, budget, counter): rendered once per catalog, not per request."""

    def __init__(self, maxsize: int = 16) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[tuple[str, int, str], tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, catalog: Catalog, budget: int, count_tokens: TokenCounter = approx_tokens) -> tuple[str, str]:
        key = (catalog.checksum, budget, getattr(count_tokens, "__qualname__", type(count_tokens).__name__))
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build_listing(catalog, budget, count_tokens)
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return value


default_listing_cache = ListingCache()


def session_listing(
    catalog: Catalog | None, settings: object, context_length: int, count_tokens: TokenCounter = approx_tokens
) -> tuple[str, str]:
    """The listing for a session's catalog under its ``tool_search`` settings (cached)."""
    if catalog is None:
        return "", ""
    budget = listing_budget(
        int(getattr(settings, "listing_max_tokens", 4000)),
        float(getattr(settings, "listing_window_pct", 5)),
        context_length,
    )
    return default_listing_cache.get(catalog, budget, count_tokens)
