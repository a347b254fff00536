"""One session's use of the blob store: spill, archive, read-back tools.

The engine owns one :class:`StoreSession`.  The store itself is opened
lazily, once per folder per process (engines are deep-copied per agent and
share it), and a store that cannot be opened never breaks the session: spill
passes results through, compaction falls back to plain stubs, and the tools
answer with the reason.

A session is recorded in the store at its first activity (a request, a
response, a tool output, a compaction, a fetch), not when the host starts it:
Hermes builds an agent, and so starts a session, for things that never send
anything (its dashboard's embedded chat at every page load), and those must
leave the store, and ``stowage status``, as they were.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

from ...blobstore import BlobStore, StoreError
from ...blobstore.ownership import ForeignFolderError, check, claim
from ..chat.markers import BlobKind
from ..chat.stubs import StubHandle
from ..config.settings import Settings
from ..records.part_status import CapEvictions, SpillRecord, StoreStatus
from ..records.session_files import STORE_COMPANIONS
from .archive import StoreArchive, record_output
from .fetch_tools import FetchLimits, FetchTools
from .pins import spared_refs
from .spill import KEPT, SpillOutcome, SpillPolicy, spill_result
from .store_config import retention_policy, store_root
from .stubs import PreviewStubbed, StubService, digest

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_stores: dict[Path, BlobStore] = {}
_writers: dict[Path, "BackgroundWriter"] = {}
_window_lane: "BackgroundWriter | None" = None
DRAIN_TIMEOUT_S = 10.0
WINDOW_WRITERS = 4  # concurrent compactions in one process stage their windows in parallel
# Previews remembered per session for the stub service (about 100 bytes each;
# stubs name the original a preview stands for); the oldest is forgotten first
# (the store still knows: stubs.recorded_preview_origin).
MAX_SPILL_ORIGINS = 4096
RECENT_SPILLS = 20  # spills listed by status (handles), newest last
SPILL_FAILED_NOTE = (
    "[stowage: this output is over the spill threshold but could not be stored (see `stowage "
    "status`); it is shown in full and cannot be fetched later]"
)


class BackgroundWriter:
    """Threads per store and lane that write off the agent's path.

    One thread per store records tool outputs as they arrive; the window
    lane stores a compaction's window while the summary model works.

    Recording an output as it arrives means compaction usually finds it
    stored already (a read-only lookup) instead of paying a durable write
    (fsync + index commit, ~10 ms) per pruned output.  Losing a queued write
    (the process dies) only means compaction stores that output itself.
    """

    def __init__(self, max_workers: int = 1) -> None:
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="stowage-store")
        self._pending: set[Future] = set()
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        future = self._executor.submit(fn, *args, **kwargs)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "Future[Any]":
        """``fn`` on the writer's thread, for a caller that waits for the result and handles its failure."""
        return self._executor.submit(fn, *args, **kwargs)

    def _done(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)
        if future.exception() is not None:
            logger.warning("stowage: background store write failed: %s", future.exception())

    def drain(self, timeout: float = DRAIN_TIMEOUT_S) -> None:
        with self._lock:
            pending = list(self._pending)
        if pending:
            wait(pending, timeout=timeout)


def writer_for(root: Path) -> BackgroundWriter:
    root = Path(root).expanduser().resolve()
    with _lock:
        if root not in _writers:
            _writers[root] = BackgroundWriter()
        return _writers[root]


def window_lane() -> BackgroundWriter:
    """The process-wide threads that store compaction windows (any store: the put is the store's own)."""
    global _window_lane
    with _lock:
        if _window_lane is None:
            _window_lane = BackgroundWriter(WINDOW_WRITERS)
        return _window_lane


def _forget_writers_after_fork() -> None:
    """A forked child has none of the parent's threads: an inherited pool would never run its work."""
    global _lock, _window_lane
    _lock = threading.Lock()
    _writers.clear()
    _window_lane = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writers_after_fork)


def open_store(root: Path, settings: Settings) -> BlobStore:
    """The process-wide store for ``root`` (opened on first use)."""
    root = Path(root).expanduser().resolve()
    with _lock:
        store = _stores.get(root)
        if store is None:
            claim(root, STORE_COMPANIONS)  # ForeignFolderError: the folder holds the user's own files
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
        self._spilled: dict[str, str] = {}  # sha-256 of a preview -> handle of the original output
        self._spilled_tokens: dict[str, int] = {}  # sha-256 of a preview -> tokens of the original output
        self._stubbed: dict[str, str] = {}  # handle of an original a view stub names -> sha-256 of its preview
        self.archive_failures = 0
        self.last_store_error: str | None = None
        self.tool_calls = 0
        self.recent_spills: list[SpillRecord] = []  # newest last, bounded: what status shows
        self._pinned: tuple[str | None, frozenset[str]] = (None, frozenset())  # (session, refs) last pinned
        self._request_refs: frozenset[str] = frozenset()  # what the session's last request showed or pointed to
        self._batches = ToolBatches()  # what the session stored in its current and previous tool batch
        self.active = False  # the session did something: the store records it, its figures are worth writing
        self._grant_from: str | None = None  # the conversation this session continues (granted at activation)

    def relocated(self) -> "StoreSession":
        """A new session's store session for another agent: the same store, none of this session's figures."""
        other = StoreSession(self.settings, store=self._store)
        other.root, other.error = self.root, self.error
        return other

    def attach(self, hermes_home: Path | str) -> None:
        """Use the store under ``hermes_home`` (or ``store.path``)."""
        if self._store is None:
            self.root = store_root(self.settings, Path(hermes_home))
            if self.root.exists() and not self.root.is_dir():
                self.error = f"stowage.store.path {str(self.root)!r} is a file, not a folder; nothing is stored"
                logger.warning("stowage: %s", self.error)
                return
            try:
                check(self.root.resolve(), STORE_COMPANIONS)
            except StoreError as exc:  # a folder of the user's own files: refused before anything is written
                self.error, self.root = str(exc), None
                logger.warning("stowage: %s", self.error)

    @property
    def store(self) -> BlobStore | None:
        if self._store is None and self.root is not None and self.error is None:
            try:
                self._store = open_store(self.root, self.settings)
            except ForeignFolderError as exc:  # nothing of this session is written there, status files included
                self.error, self.root = str(exc), None
                logger.warning("stowage: %s", self.error)
            except (StoreError, OSError) as exc:
                self.error = f"cannot open the Stowage store at {self.root}: {exc}"
                logger.warning("stowage: %s", self.error)
        return self._store

    # -- sessions ---------------------------------------------------------------
    def start(self, session_id: str, *, old_session_id: str | None = None, boundary_reason: str | None = None) -> None:
        """The host started ``session_id``: nothing is written until it does something (:meth:`activate`).

        A new id after our own compaction continues an active conversation:
        it is recorded now, with the blobs of the one it continues.
        """
        previous, self.session_id = self.session_id, session_id
        if previous != session_id:
            self._request_refs, self._batches = frozenset(), ToolBatches()
            self.active, self._grant_from = False, None
            source = old_session_id or previous
            if boundary_reason == "compression" and source and source != session_id:
                self._grant_from = source  # the conversation continues under a new id
                self.activate()
            else:  # another conversation (/new, /resume): its figures are its own
                self.spills = self.spill_failures = self.archive_failures = self.tool_calls = 0
                self.last_store_error, self.recent_spills = None, []

    def activate(self) -> None:
        """The session's first activity: flag it live in the store (its blobs are spared by retention)."""
        if self.active or self.session_id is None:
            return
        self.active = True
        store = self.store
        if store is None:
            return
        try:
            store.mark_session_live(self.session_id)
            if self._grant_from is not None:
                store.grant_session(self._grant_from, self.session_id)
        except (StoreError, OSError) as exc:
            logger.warning("stowage: store session bookkeeping failed: %s", exc)

    def end(self, session_id: str) -> None:
        """The session ended: flagged ended in the store, if it was ever recorded there."""
        if self._store is not None and self.active:
            try:
                self._store.mark_session_ended(session_id)
            except (StoreError, OSError) as exc:
                logger.warning("stowage: store session bookkeeping failed: %s", exc)

    # -- what the engine uses -----------------------------------------------------
    def archive(self) -> StoreArchive | None:
        self.activate()  # a compaction
        store = self.store
        if store is None:
            return None
        writer_for(store.root).drain()  # outputs recorded at tool time are then found, not rewritten
        return StoreArchive(
            store, lambda: self.session_id, self.spill_origin, on_failure=self._archive_failed, submit=window_lane().run
        )

    def _archive_failed(self, exc: BaseException) -> None:
        self.archive_failures += 1
        self.last_store_error = str(exc)

    def spill(self, tool_name: str, arguments: Any, result: Any, count_tokens: Callable[[str], int]) -> SpillOutcome:
        """The preview for an oversized result; smaller ones are kept and recorded in the background."""
        self.activate()  # a tool output
        store = self.store
        if store is None or not isinstance(result, str):
            return KEPT
        args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
        failed: list[BaseException] = []
        spilled = spill_result(
            store,
            result,
            tool_name=tool_name,
            arguments=args_text,
            session_id=self.session_id,
            policy=self.policy,
            count_tokens=count_tokens,
            on_failure=failed.append,
        )
        if failed:
            self.spill_failures += 1
            self.last_store_error = str(failed[0])
            return SpillOutcome(f"{SPILL_FAILED_NOTE}\n" + result)
        if spilled is None:
            if len(result) >= self.settings.compaction.prune_min_chars:
                self._batches.add(digest(result))
                self._pinned = (None, frozenset())  # the store pins it as it is recorded
                writer_for(store.root).submit(
                    self._record, store, result, tool_name=tool_name, arguments=args_text, session_id=self.session_id
                )
            return KEPT
        self.spills += 1
        self._pinned = (None, frozenset())  # the store pinned the spill for the next request: pin that one
        self._batches.add(*spilled.stored, digest(spilled.message))
        record = SpillRecord(
            handle=spilled.handle, tool=tool_name, tokens=spilled.tokens, chars=len(result), at=time.time()
        )
        self.recent_spills.append(record)
        del self.recent_spills[:-RECENT_SPILLS]
        if len(self._spilled) >= MAX_SPILL_ORIGINS:
            oldest = next(iter(self._spilled))
            del self._spilled[oldest]
            self._spilled_tokens.pop(oldest, None)
        self._spilled[digest(spilled.message)] = spilled.handle
        self._spilled_tokens[digest(spilled.message)] = spilled.tokens
        # The preview stays in the history; recorded as a preview with the output it stands for (the spill's first
        # stored blob), a later process still knows what it stands for.
        writer_for(store.root).submit(
            self._record,
            store,
            spilled.message,
            tool_name=tool_name,
            arguments=args_text,
            session_id=self.session_id,
            kind=BlobKind.PREVIEW,
            source=spilled.stored[0] if spilled.stored else None,
        )
        return SpillOutcome(spilled.message, record)

    def spilled_tokens(self, preview: str) -> int | None:
        """Tokens of the original output a preview this session wrote stands for (the lean view's "saved")."""
        return self._spilled_tokens.get(digest(preview))

    def spill_origin(self, content: str) -> str | None:
        """The handle of the original output ``content`` (a preview this session wrote) stands for."""
        return self._spilled.get(digest(content))

    @staticmethod
    def _record(store: BlobStore, text: str, **kwargs: Any) -> None:
        """Background: store an output as it arrives (compaction and the view then find it stored)."""
        record_output(store, text, pin=True, **kwargs)  # the next request shows it verbatim

    def stubs(self, on_preview_stubbed: PreviewStubbed | None = None) -> StubService | None:
        """The stub service for this session (None: no store), shared by compaction's archive and the lean view."""
        store = self.store
        if store is None:
            return None
        return StubService(store, lambda: self.session_id, self.spill_origin, on_preview_stubbed)

    def _view_stubbed(self, original: str, preview_sha: str) -> None:
        """A view stub named ``original`` for a preview: the cap spares the preview instead (``pins.spared_refs``)."""
        if original not in self._stubbed and len(self._stubbed) >= MAX_SPILL_ORIGINS:
            del self._stubbed[next(iter(self._stubbed))]
        self._stubbed[original] = preview_sha

    def handle_for(self, text: str, *, kind: BlobKind, tool_name: str, arguments: str) -> StubHandle | None:
        """The handle of the original bytes ``text`` stands for, storing ``text`` now if need be.

        Used by the lean view before it replaces an output with a stub: a stub
        must never point to nothing, and it names the original (the spilled
        output, for a spill preview: one fetch reads it; when the size cap
        evicted it, the preview's own bytes, and ``original_evicted`` says so).
        Looked up even when recorded earlier: the size cap may have evicted it
        since (one index read per stub; the view memoizes its stubs).  Raises
        StoreError/OSError when the store cannot write (the caller keeps the
        text verbatim).
        """
        self.activate()  # it stores for this session
        stubs = self.stubs(on_preview_stubbed=self._view_stubbed)
        if stubs is None:
            return None
        return stubs.stub_handle(text, kind=kind, tool_name=tool_name, arguments=arguments)

    def pin_request(self, messages: list[Any]) -> frozenset[str]:
        """Tell the store what this request shows or points to: the size cap spares only that of a live session.

        An original only a view stub names is not spared: its preview is
        (``pins.spared_refs``).  Returns the handles of such originals the
        store no longer holds, so the view renders their stubs again (naming
        the preview).  Written only when it changed; a failure is logged and
        costs nothing but protection.
        """
        self.activate()  # a request
        self._request_refs, demoted = spared_refs(messages, self._stubbed)
        self._write_pins(self._request_refs)
        stubs = self.stubs()
        if stubs is None or not demoted:
            return frozenset()
        return frozenset(h for h in demoted if not stubs.readable(h))

    def response_received(self) -> None:
        """A model response arrived (the host's ``update_from_response``): a new tool batch begins.

        What the session stored two batches ago stops being spared by the
        size cap unless the last request shows or points to it.  Hosts
        without a request hook (before 0.17) never call :meth:`pin_request`
        between compactions; this keeps their pins, and so the store's
        overshoot over its cap, to the last request's and the two newest
        batches' blobs (``docs/store.md``).
        """
        self.activate()  # a response
        self._batches.next()
        self._write_pins(self._request_refs | self._batches.spared)

    def _write_pins(self, refs: frozenset[str]) -> None:
        """Replace what the store spares for this session (only when it changed; a failure costs protection only)."""
        store, session_id = self.store, self.session_id
        if store is None or session_id is None:
            return
        if self._pinned == (session_id, refs):
            return
        try:
            store.pin_request(session_id, refs)
            self._pinned = (session_id, refs)
        except (StoreError, OSError) as exc:
            logger.warning("stowage: could not record what the request points to: %s", exc)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return FetchTools.schemas()

    def handle_tool(self, name: str, args: Any) -> str:
        self.tool_calls += 1
        self.activate()  # a fetch
        store = self.store
        if store is None:
            return json.dumps({"error": self.error or "the Stowage store is not available in this session"})
        return FetchTools(store, lambda: self.session_id, self.limits, self._stubbed_preview).handle(name, args)

    def _stubbed_preview(self, original: str) -> str | None:
        """The readable preview's handle of ``original``, a spilled output a view stub named (None: not one)."""
        sha = self._stubbed.get(original)
        store = self._store
        if sha is None or store is None:
            return None
        try:
            return store.stat(store.resolve(sha, self.session_id)).handle
        except (StoreError, OSError):
            return None

    def status(self) -> StoreStatus:
        return StoreStatus(
            root=str(self.root) if self.root else None,
            error=self.error,
            spills=self.spills,
            spill_failures=self.spill_failures,
            archive_failures=self.archive_failures,
            last_store_error=self.last_store_error,
            tool_calls=self.tool_calls,
            recent_spills=list(self.recent_spills),
            cap_evicted=self._cap_evicted(),
        )

    def _cap_evicted(self) -> CapEvictions:
        """This session's blobs the size cap tombstoned (their handles now answer with tombstones)."""
        if self._store is None or self.session_id is None:
            return CapEvictions()
        try:
            blobs, size = self._store.tombstoned_for(self.session_id)
        except (StoreError, OSError):
            return CapEvictions()
        return CapEvictions(blobs=blobs, bytes=size)


class ToolBatches:
    """SHA-256 of what a session stored in its current tool batch and in the one before.

    A batch is what arrives between two model responses.  The previous one's
    outputs are in the request the model is now answering (it may fetch them
    in this batch), the current one's in the next request.
    """

    def __init__(self) -> None:
        self._previous: frozenset[str] = frozenset()
        self._current: set[str] = set()

    def add(self, *shas: str) -> None:
        self._current.update(shas)

    def next(self) -> None:
        self._previous, self._current = frozenset(self._current), set()

    @property
    def spared(self) -> frozenset[str]:
        return self._previous | self._current
