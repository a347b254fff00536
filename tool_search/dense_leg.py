"""The semantic leg as the request path uses it: cached vectors, one query call, never a failed turn.

Wraps any ``Embedder`` (the HTTP client or the local model).  Tool vectors
come from the on-disk file first (``vector_file``); only tools whose text
is not there are embedded, in the client's batches, and the file is
rewritten.  A query's vector is kept in memory, so the requests of one user
message (each tool call is another request) make one embedding call in all.

A large catalog is embedded over several messages (``index_budget_s`` per
request, progress saved each time), with BM25 alone until it is done.
When the embedder fails or is slow, :meth:`DenseLeg.rank` answers ``None``
and the caller ranks with BM25 alone; the failure is logged once and shown
in :meth:`status`, and the endpoint is not asked again for
``retry_after_s``, so a dead server costs one timeout, not one per request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Sequence

from .catalog import Catalog
from .embeddings import Embedder, tool_text
from .vector_file import file_for, load, save, text_key

logger = logging.getLogger(__name__)

QUERY_CACHE = 512
RETRY_AFTER_S = 60.0
INDEX_CHUNK = 64  # tools per embedding call while indexing; progress is saved after each request's share
INDEX_BUDGET_S = 8.0  # indexing time one request may spend; a larger catalog is finished on the next messages


class DenseLeg:
    def __init__(
        self,
        embedder: Embedder,
        identity: str,
        *,
        folder: Path | None = None,
        retry_after_s: float = RETRY_AFTER_S,
        index_budget_s: float = INDEX_BUDGET_S,
        clock: Callable[[], float] = time.monotonic,
        label: str = "",
    ) -> None:
        self.embedder = embedder
        self.identity = identity
        self.label = label or identity
        self.path = file_for(folder, identity) if folder is not None else None
        self.retry_after_s = retry_after_s
        self.index_budget_s = index_budget_s
        self.pending = 0  # tools of the current catalog not embedded yet
        self._clock = clock
        self._lock = threading.RLock()
        self._stored: dict[str, list[float]] | None = None  # the file's vectors, read once
        self._matrices: OrderedDict[str, tuple[list[str], Any]] = OrderedDict()  # by catalog checksum
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        self.error: str | None = None
        self._retry_at = 0.0
        self.query_calls = 0
        self.tools_embedded = 0
        self.file_bytes = 0

    # -- ranking ---------------------------------------------------------------------
    def rank(self, catalog: Catalog, query: str, limit: int) -> list[str] | None:
        """Tool names by cosine similarity to ``query``, best first; ``None``: use BM25 alone."""
        if limit <= 0 or not len(catalog) or not query.strip():
            return []
        with self._lock:
            if self.error is not None and self._clock() < self._retry_at:
                return None
            try:
                built = self._matrix(catalog)
                if built is None:
                    return None
                names, matrix = built
                qvec = self._query_vector(query)
            except Exception as exc:  # noqa: BLE001 - any embedder failure means BM25 alone, never a failed turn
                self._failed(exc)
                return None
            if self.error is not None:
                logger.info("stowage: tool search embeddings work again (%s)", self.label)
                self.error = None
        return _top(names, matrix, qvec, limit)

    def _matrix(self, catalog: Catalog) -> tuple[list[str], Any] | None:
        """The catalog's vectors; ``None`` while tools are still being embedded (past this request's budget)."""
        found = self._matrices.get(catalog.checksum)
        if found is not None:
            self._matrices.move_to_end(catalog.checksum)
            return found
        stored = self._load()
        keys = [text_key(tool_text(e)) for e in catalog.entries]
        texts = {text_key(tool_text(e)): tool_text(e) for e in catalog.entries}
        missing = [k for k in texts if k not in stored]
        deadline = self._clock() + self.index_budget_s
        try:
            for start in range(0, len(missing), INDEX_CHUNK):
                if start and self._clock() > deadline:
                    self.pending = len(missing) - start
                    return None  # the rest on the next messages; BM25 alone meanwhile
                chunk = missing[start : start + INDEX_CHUNK]
                vectors = [list(map(float, v)) for v in self.embedder.embed([texts[k] for k in chunk])]
                if len(vectors) != len(chunk):
                    raise ValueError(f"asked for {len(chunk)} vectors, got {len(vectors)}")
                if stored and {len(v) for v in vectors} != {len(next(iter(stored.values())))}:
                    stored.clear()  # the file was made by a model answering another size: start afresh
                    self._matrices.clear()
                    return self._matrix(catalog)
                stored.update(zip(chunk, vectors, strict=True))
                self.tools_embedded += len(chunk)
        finally:
            if missing:
                self._persist(keys)
        self.pending = 0
        names = list(catalog.names)
        built = (names, _as_matrix([stored[k] for k in keys]))
        self._matrices[catalog.checksum] = built
        while len(self._matrices) > 4:
            self._matrices.popitem(last=False)
        return built

    def _query_vector(self, query: str) -> list[float]:
        found = self._queries.get(query)
        if found is not None:
            self._queries.move_to_end(query)
            return found
        self.query_calls += 1
        vector = list(map(float, self.embedder.embed([query])[0]))
        self._queries[query] = vector
        while len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector

    def _load(self) -> dict[str, list[float]]:
        if self._stored is None:
            self._stored = load(self.path, self.identity) if self.path is not None else {}
        return self._stored

    def _persist(self, keep_first: Sequence[str]) -> None:
        if self.path is None or self._stored is None:
            return
        try:
            self.file_bytes = save(self.path, self.identity, self._stored, keep_first)
        except (OSError, ValueError) as exc:  # the vectors still serve from memory
            logger.warning("stowage: cannot write tool vectors to %s: %s", self.path, exc)

    def _failed(self, exc: Exception) -> None:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        if self.error != reason:
            logger.warning(
                "stowage: tool search embeddings failed (%s): %s; BM25 alone for %.0f s",
                self.label,
                reason,
                self.retry_after_s,
            )
        self.error = reason
        self._retry_at = self._clock() + self.retry_after_s

    # -- status ----------------------------------------------------------------------
    def status_line(self) -> str:
        if self.error is not None:
            return f"BM25 alone: embeddings from {self.label} failed ({self.error})"
        if self.pending:
            return f"BM25 alone while embedding the tools with {self.label} ({self.pending} to go)"
        calls, embedded = self.query_calls, self.tools_embedded
        return f"BM25 + embeddings from {self.label} ({calls} query calls, {embedded} tools embedded)"


def _as_matrix(rows: list[list[float]]) -> Any:
    try:
        import numpy as np
    except ImportError:
        return rows
    return np.asarray(rows, dtype="float32")


def _top(names: list[str], matrix: Any, qvec: Sequence[float], limit: int) -> list[str]:
    if isinstance(matrix, list):
        if any(len(row) != len(qvec) for row in matrix):
            return []
        sims = [sum(x * y for x, y in zip(row, qvec, strict=True)) for row in matrix]
    else:
        import numpy as np

        if matrix.shape[1] != len(qvec):
            return []
        sims = (matrix @ np.asarray(qvec, dtype="float32")).tolist()
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))[:limit]
    return [names[i] for i in order]
