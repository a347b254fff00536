"""Index cache keyed by catalog checksum.

Hosts rebuild their tool list on every request; the catalog of deferred
tools almost never changes between turns. Keying the built index by the
catalog's content checksum means a search costs a dictionary lookup plus the
query, and any schema change (new MCP server, edited description) yields a
new checksum and therefore a fresh index: no stale-catalog dropouts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .catalog import Catalog
from .fields import FieldWeights
from .index import DEFAULT_WEIGHTS, ToolIndex


class IndexCache:
    """Small thread-safe LRU of built indexes; ``builds`` counts real builds."""

    def __init__(self, maxsize: int = 8) -> None:
        self.maxsize = max(1, maxsize)
        self.builds = 0
        self.hits = 0
        self._items: OrderedDict[tuple[str, FieldWeights], ToolIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, catalog: Catalog, weights: FieldWeights = DEFAULT_WEIGHTS) -> ToolIndex:
        key = (catalog.checksum, weights)
        with self._lock:
            index = self._items.get(key)
            if index is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return index
        # Build outside the lock: a concurrent duplicate build is cheaper than
        # serializing every session behind one slow build.
        index = ToolIndex(catalog, weights)
        with self._lock:
            self.builds += 1
            self._items[key] = index
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return index

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


# Process-wide default, shared by every session of one host process.
default_cache = IndexCache()


def get_index(catalog: Catalog, weights: FieldWeights = DEFAULT_WEIGHTS) -> ToolIndex:
    """The cached index for ``catalog`` from the process-wide cache."""
    return default_cache.get(catalog, weights)
