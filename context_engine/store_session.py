"""One session's use of the blob store: spill, archive, read-back tools.

The engine owns one :class:`StoreSession`.  The store itself is opened
lazily, once per folder per process (engines are deep-copied per agent and
share it), and a store that cannot be opened never breaks the session: spill
passes results through, compaction falls back to plain stubs, and the tools
answer with the reason.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, Callable

from ..blobstore import BlobStore, StoreError
from .config import Settings
from .fetch_tools import FetchLimits, FetchTools
from .lossless import StoreArchive
from .spill import SpillPolicy, spill_result
from .store_settings import retention_policy, store_root

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_stores: dict[Path, BlobStore] = {}


def open_store(root: Path, settings: Settings) -> BlobStore:
    """The process-wide store for ``root`` (opened on first use)."""
    root = Path(root).expanduser().resolve()
    with _lock:
        store = _stores.get(root)
        if store is None:
            store = BlobStore(root, retention_policy(settings), cross_session_reads=settings.store.cross_session_reads)
            _stores[root] = store
        return store


class StoreSession:
    def __init__(self, settings: Settings, *, store: BlobStore | None = None) -> None:
        self.settings = settings
        self.root: Path | None = None
        self._store = store
        self.session_id: str | None = None
        self.error: str | None = None
        self.policy = SpillPolicy.from_settings(settings.spill)
        self.limits = FetchLimits(settings.spill.fetch_max_chars, settings.spill.full_fetch_max_chars)
        self.spills = 0
        self.spill_failures = 0
        self.tool_calls = 0

    def attach(self, hermes_home: Path | str) -> None:
        """Use the store under ``hermes_home`` (or ``store.path``)."""
        if self._store is None:
            self.root = store_root(self.settings, Path(hermes_home))

    @property
    def store(self) -> BlobStore | None:
        if self._store is None and self.root is not None and self.error is None:
            try:
                self._store = open_store(self.root, self.settings)
            except (StoreError, OSError) as exc:
                self.error = f"cannot open the Stowage store at {self.root}: {exc}"
                logger.warning("stowage: %s", self.error)
        return self._store

    # -- sessions ---------------------------------------------------------------
    def start(self, session_id: str, *, old_session_id: str | None = None, boundary_reason: str | None = None) -> None:
        previous, self.session_id = self.session_id, session_id
        store = self.store
        if store is None:
            return
        try:
            store.mark_session_live(session_id)
            source = old_session_id or previous
            if boundary_reason == "compression" and source and source != session_id:
                store.grant_session(source, session_id)  # the conversation continues under a new id
        except (StoreError, OSError) as exc:
            logger.warning("stowage: store session bookkeeping failed: %s", exc)

    def end(self, session_id: str) -> None:
        if self._store is not None:
            try:
                self._store.mark_session_ended(session_id)
            except (StoreError, OSError) as exc:
                logger.warning("stowage: store session bookkeeping failed: %s", exc)

    # -- what the engine uses -----------------------------------------------------
    def archive(self) -> StoreArchive | None:
        store = self.store
        return StoreArchive(store, lambda: self.session_id) if store is not None else None

    def spill(self, tool_name: str, arguments: Any, result: Any, count_tokens: Callable[[str], int]) -> str | None:
        store = self.store
        if store is None or not isinstance(result, str):
            return None
        args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
        spilled = spill_result(store, result, tool_name=tool_name, arguments=args_text, session_id=self.session_id,
                               policy=self.policy, count_tokens=count_tokens)
        if spilled is None:
            return None
        self.spills += 1
        return spilled.message

    def tool_schemas(self) -> list[dict[str, Any]]:
        return FetchTools.schemas()

    def handle_tool(self, name: str, args: Any) -> str:
        self.tool_calls += 1
        store = self.store
        if store is None:
            return json.dumps({"error": self.error or "the Stowage store is not available in this session"})
        return FetchTools(store, lambda: self.session_id, self.limits).handle(name, args)

    def status(self) -> dict[str, Any]:
        return {"root": str(self.root) if self.root else None, "error": self.error, "spills": self.spills,
                "tool_calls": self.tool_calls}

