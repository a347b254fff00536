"""The semantic leg as the request path uses it: the endpoint is asked in the background, never on the request.

Wraps any ``Embedder`` (the HTTP client or the local model).  One worker
thread per leg makes every embedding call, with the leg's lock released:
the catalog's tool vectors (read from the on-disk file first, see
``vector_file``; only tools whose text is not there are embedded, in small
batches, progress saved as it goes, so a restart resumes where it stopped)
and each user message's query vector (queries go before indexing batches).

A request (:meth:`DenseLeg.rank`) only waits, on a condition that releases
the lock, for at most ``wait_s`` (one deadline of the client) for the
vectors it needs, then ranks with what is ready; ``None`` means BM25 alone.
So a catalog being indexed, a slow, dripping or dead endpoint costs a
request at most one deadline and never blocks another session.

A failure is logged once and shown in :meth:`status_line`, and the endpoint
is not asked again for ``retry_after_s``.  An answer of another size than
the stored vectors (the model behind the name changed) drops the stored
vectors and re-indexes; status says so until it is done.
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
INDEX_BATCH = 16  # tools per embedding call while indexing: small enough for one deadline on a CPU endpoint
DEFAULT_WAIT_S = 3.0  # how long a request waits for vectors being made (the client's deadline)
PERSIST_EVERY_S = 2.0  # progress is written at most this often while indexing (and when done)


class DenseLeg:
    def __init__(
        self,
        embedder: Embedder,
        identity: str,
        *,
        folder: Path | None = None,
        retry_after_s: float = RETRY_AFTER_S,
        wait_s: float = DEFAULT_WAIT_S,
        batch: int = INDEX_BATCH,
        clock: Callable[[], float] = time.monotonic,
        label: str = "",
    ) -> None:
        self.embedder = embedder
        self.identity = identity
        self.label = label or identity
        self.path = file_for(folder, identity) if folder is not None else None
        self.retry_after_s = retry_after_s
        self.wait_s = wait_s
        self.batch = max(1, batch)
        self.pending = 0  # tools of the newest catalog not embedded yet
        self._clock = clock
        self._cond = threading.Condition(threading.RLock())
        self._stored: dict[str, list[float]] | None = None  # the file's vectors, read once
        self._matrices: OrderedDict[str, tuple[list[str], Any]] = OrderedDict()  # by catalog checksum
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        self._asked: list[str] = []  # queries waiting for the worker, oldest first
        self._want: tuple[str, dict[str, str]] | None = None  # (checksum, missing text key -> text) to index
        self._worker: threading.Thread | None = None
        self._texts: tuple[str, list[str], dict[str, str]] | None = None
        self._persisted_at = 0.0
        self.error: str | None = None
        self._retry_at = 0.0
        self.reindexed: str = ""  # why the stored vectors were dropped (a dimension change), for status
        self.fallback: str = ""  # why the newest rank was BM25 alone while the endpoint is fine (empty: it was not)
        self.query_calls = 0
        self.tools_embedded = 0
        self.file_bytes = 0

    # -- the request path ---------------------------------------------------------------
    def rank(self, catalog: Catalog, query: str, limit: int, wait_s: float | None = None) -> list[str] | None:
        """Tool names by cosine similarity to ``query``, best first; ``None``: use BM25 alone.

        Waits at most ``wait_s`` (default: the leg's) for the worker, with the lock released.
        """
        if limit <= 0 or not len(catalog) or not query.strip():
            return []
        deadline = time.monotonic() + (self.wait_s if wait_s is None else wait_s)
        with self._cond:
            # a catalog already being indexed is not waited for again: only its first request may wait
            # (a small catalog is done within the deadline), the next ones rank with BM25 alone meanwhile
            indexing = self._want is not None and self._want[0] == catalog.checksum
            while True:
                if self._resting():
                    return None
                built = self._ready(catalog)
                qvec = self._query_vector(query) if built is not None else None
                if built is not None and qvec is not None:
                    break
                left = deadline - time.monotonic()
                if left <= 0 or (built is None and indexing):
                    self.fallback = (
                        f"the tools are still being embedded ({self.pending} to go)"
                        if built is None
                        else "the message's vector was not ready within the deadline"
                    )
                    return None
                self._cond.wait(left)
            names, matrix = built
            if _width(matrix) != len(qvec):  # the endpoint answers another size than the stored vectors
                self._dimension_changed(len(qvec), _width(matrix))
                return None
            self.fallback = ""
        return _top(names, matrix, qvec, limit)

    def _resting(self) -> bool:
        return self.error is not None and self._clock() < self._retry_at

    def _ready(self, catalog: Catalog) -> tuple[list[str], Any] | None:
        """The catalog's matrix when every tool has its vector; else ask the worker to index it (lock held)."""
        found = self._matrices.get(catalog.checksum)
        if found is not None:
            self._matrices.move_to_end(catalog.checksum)
            return found
        stored = self._load()
        keys, texts = self._texts_of(catalog)
        missing = {k: t for k, t in texts.items() if k not in stored}
        if missing:
            self._want = (catalog.checksum, missing)
            self.pending = len(missing)
            self._start_worker()
            return None
        self.pending = 0
        rows = [stored[k] for k in keys]
        if len({len(r) for r in rows}) > 1:  # mixed sizes: a change caught mid-indexing; start afresh
            self._dimension_changed(len(rows[-1]), len(rows[0]))
            return None
        built = (list(catalog.names), _as_matrix(rows))
        self._matrices[catalog.checksum] = built
        while len(self._matrices) > 4:
            self._matrices.popitem(last=False)
        return built

    def _texts_of(self, catalog: Catalog) -> tuple[list[str], dict[str, str]]:
        """Each tool's text key in catalog order, and key -> text (kept for the newest catalog: a waiting request
        re-reads it)."""
        if self._texts is None or self._texts[0] != catalog.checksum:
            texts = [tool_text(e) for e in catalog.entries]
            keys = [text_key(t) for t in texts]
            self._texts = (catalog.checksum, keys, dict(zip(keys, texts, strict=True)))
        return self._texts[1], self._texts[2]

    def _query_vector(self, query: str) -> list[float] | None:
        found = self._queries.get(query)
        if found is not None:
            self._queries.move_to_end(query)
            return found
        if query not in self._asked:
            self._asked.append(query)
            self._start_worker()
        return None

    def _dimension_changed(self, new: int, old: int) -> None:
        self.reindexed = f"the endpoint now answers {new} dimensions, the stored vectors have {old}"
        self.fallback = f"re-embedding the tools ({self.reindexed})"
        logger.warning("stowage: tool search embeddings: %s; re-embedding the tools (%s)", self.reindexed, self.label)
        self._load().clear()
        self._matrices.clear()
        self._queries = OrderedDict((q, v) for q, v in self._queries.items() if len(v) == new)
        if self._texts is not None:  # re-index the newest catalog at once, in the background
            self._want = (self._texts[0], dict(self._texts[2]))
            self.pending = len(self._texts[2])
            self._start_worker()

    # -- the worker ---------------------------------------------------------------------
    def _start_worker(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        self._worker = threading.Thread(target=self._work, name="stowage-tool-embeddings", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next_job()
                if job is None:
                    self._worker = None
                    self._cond.notify_all()
                    return
            kind, keys, texts = job
            try:
                vectors = [list(map(float, v)) for v in self.embedder.embed(texts)]
                if len(vectors) != len(texts):
                    raise ValueError(f"asked for {len(texts)} vectors, got {len(vectors)}")
            except Exception as exc:  # noqa: BLE001 - any embedder failure means BM25 alone, never a failed turn
                with self._cond:
                    self._failed(exc)
                    self._asked.clear()
                    self._persist()
                    self._worker = None
                    self._cond.notify_all()
                return
            with self._cond:
                self._took(kind, keys, vectors)
                self._cond.notify_all()

    def _next_job(self) -> tuple[str, list[str], list[str]] | None:
        if self._resting():
            self._asked.clear()
            return None
        if self._asked:
            query = self._asked[0]
            return "query", [query], [query]
        if self._want is not None:
            _, missing = self._want
            stored = self._load()
            for key in [k for k in missing if k in stored]:
                del missing[key]
            if missing:
                keys = list(missing)[: self.batch]
                return "index", keys, [missing[k] for k in keys]
            self._want = None
            self.pending = 0
            self._persist()
        return None

    def _took(self, kind: str, keys: list[str], vectors: list[list[float]]) -> None:
        if self.error is not None:
            logger.info("stowage: tool search embeddings work again (%s)", self.label)
            self.error = None
        stored = self._load()
        width = len(next(iter(stored.values()))) if stored else None
        if width is not None and vectors and len(vectors[0]) != width:
            self._dimension_changed(len(vectors[0]), width)
        if kind == "query":
            self.query_calls += 1
            self._asked.remove(keys[0])
            self._queries[keys[0]] = vectors[0]
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
            return
        stored.update(zip(keys, vectors, strict=True))
        self.tools_embedded += len(keys)
        if self._want is not None:
            missing = self._want[1]
            for key in keys:
                missing.pop(key, None)
            self.pending = len(missing)
        if self.pending == 0 or self._clock() - self._persisted_at >= PERSIST_EVERY_S:
            self._persist()

    def _load(self) -> dict[str, list[float]]:
        if self._stored is None:
            self._stored = load(self.path, self.identity) if self.path is not None else {}
        return self._stored

    def _persist(self, keep_first: Sequence[str] = ()) -> None:
        if self.path is None or self._stored is None:
            return
        self._persisted_at = self._clock()
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

    def idle(self, timeout_s: float = 10.0) -> bool:
        """Wait until the worker has nothing left to do (tests, the bench); True when it is idle."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._worker is not None and self._worker.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- status ----------------------------------------------------------------------
    def status_line(self) -> str:
        """How the newest ranking was made; never "BM25 + embeddings" while it fell back."""
        with self._cond:
            if self.error is not None:
                return f"BM25 alone: embeddings from {self.label} failed ({self.error})"
            if self.pending:
                why = f"; {self.reindexed}" if self.reindexed else ""
                return f"BM25 alone while embedding the tools with {self.label} ({self.pending} to go{why})"
            if self.fallback:
                return f"BM25 alone for the newest message: {self.fallback} ({self.label})"
            calls, embedded = self.query_calls, self.tools_embedded
            again = f"; re-embedded: {self.reindexed}" if self.reindexed else ""
            return f"BM25 + embeddings from {self.label} ({calls} query calls, {embedded} tools embedded{again})"


def _as_matrix(rows: list[list[float]]) -> Any:
    try:
        import numpy as np
    except ImportError:
        return rows
    return np.asarray(rows, dtype="float32")


def _width(matrix: Any) -> int:
    if isinstance(matrix, list):
        return len(matrix[0]) if matrix else 0
    return int(matrix.shape[1]) if len(matrix.shape) == 2 else 0


def _top(names: list[str], matrix: Any, qvec: Sequence[float], limit: int) -> list[str]:
    if isinstance(matrix, list):
        sims = [sum(x * y for x, y in zip(row, qvec, strict=True)) for row in matrix]
    else:
        import numpy as np

        sims = (matrix @ np.asarray(qvec, dtype="float32")).tolist()
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))[:limit]
    return [names[i] for i in order]
