"""``BlobStore``: the public face of the content-addressed store.

Layout under ``root`` (folders 0700, files 0600)::

    index.sqlite3           metadata, provenance, grants, sessions, tombstones (WAL)
    blobs/ab/<sha256>       blob bytes, named by their SHA-256
    blobs/ab/<sha256>.off   sidecar: chunk digests, line and character checkpoints
    blobs/ab/<sha256>.prov  provenance records (JSON lines), so a lost index can be rebuilt
    grants.jsonl            session grants, for the same reason
    tmp/                    in-flight writes (locked while their writer lives)
    trash/                  evicted blobs between their eviction and its commit
    quarantine/             corrupt blobs moved aside by ``doctor(repair=True)``

A blob becomes resolvable only when its bytes and sidecar are durably in
place and its index row is committed, all under the index write lock, so a
crash at any point leaves at worst an unindexed file for the doctor.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable

from .doctor import DoctorReport, run_doctor
from .errors import (
    AmbiguousHandleError,
    EvictedBlobError,
    ForeignHandleError,
    StoreError,
    StoreIndexError,
    StoreWriteError,
    UnknownHandleError,
)
from .fsutil import FILE_MODE, ensure_dir, fsync_dir, remove_quietly, write_durable
from .handles import MIN_HANDLE_LEN, common_prefix_len, normalize_handle, require_sha
from .index import Index, Tx
from .offsets import CHUNK_SIZE, Offsets
from .rebuild import IndexRebuild
from .records import BlobInfo, CatalogEntry, GcReport, PurgeReport, PutResult, Tombstone
from .retention import REASON_CAP, REASON_MANUAL, RetentionPolicy, apply, evict, human_bytes, plan
from .writer import PutData, stage

log = logging.getLogger(__name__)
CAP_LOG_INTERVAL_S = 60.0

_ERRNO_TEXT = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the filesystem is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


def _restore(kwargs: dict) -> "BlobStore":
    return BlobStore(**kwargs)


_LIVE_STORES: "weakref.WeakSet[BlobStore]" = weakref.WeakSet()


def _reset_after_fork() -> None:
    """A lock held by another thread at fork time would deadlock the child forever."""
    for store in list(_LIVE_STORES):
        store._cache_lock = threading.Lock()
        store._cache.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


class BlobStore(IndexRebuild):
    """Content-addressed, multi-process blob store with scoped handles and retention.

    ``session_id=None`` on scoped calls means operator access (the CLI).  The
    ``clock`` is injectable so retention can be tested without sleeping.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        policy: RetentionPolicy | None = None,
        *,
        cross_session_reads: bool = False,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = 30.0,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self.root = Path(root).absolute()
        self.policy = policy or RetentionPolicy()
        self.cross_session_reads = cross_session_reads
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.chunk_size = chunk_size
        self.blobs_dir = self.root / "blobs"
        self.tmp_dir = self.root / "tmp"
        self.quarantine_dir = self.root / "quarantine"
        self.trash_dir = self.root / "trash"
        self.index_path = self.root / "index.sqlite3"
        self.grants_log = self.root / "grants.jsonl"
        try:
            for folder in (self.root, self.blobs_dir, self.tmp_dir, self.trash_dir, self.quarantine_dir):
                ensure_dir(folder)
            if not self.index_path.exists():
                os.close(os.open(self.index_path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
                os.chmod(self.index_path, FILE_MODE)
        except OSError as exc:
            raise StoreWriteError(self._write_message(exc)) from exc
        self._index = Index(self.index_path, busy_timeout)
        self._cache: OrderedDict[str, tuple[tuple, Offsets]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._cap_pending = [0, 0, 0]  # blobs, bytes, live blobs tombstoned by the cap since the last warning
        self._cap_logged_at = -CAP_LOG_INTERVAL_S
        _LIVE_STORES.add(self)

    # -- copying: engines are deep-copied by the host; share, never clone connections
    def __deepcopy__(self, memo: dict) -> "BlobStore":
        return self

    def __copy__(self) -> "BlobStore":
        return self

    def __reduce__(self):
        return _restore, (
            {
                "root": str(self.root),
                "policy": self.policy,
                "cross_session_reads": self.cross_session_reads,
                "clock": self.clock,
                "busy_timeout": self.busy_timeout,
                "chunk_size": self.chunk_size,
            },
        )

    def __repr__(self) -> str:
        return f"BlobStore({str(self.root)!r})"

    # -- paths -----------------------------------------------------------------
    def blob_path(self, sha: str) -> Path:
        return self.blobs_dir / sha[:2] / sha

    def sidecar_path(self, sha: str) -> Path:
        return self.blobs_dir / sha[:2] / (sha + ".off")

    def record_path(self, sha: str) -> Path:
        return self.blobs_dir / sha[:2] / (sha + ".prov")

    @property
    def index(self) -> Index:
        return self._index

    def close(self) -> None:
        """Close the calling thread's index connection (others close when their thread ends)."""
        self._index.close()

    # -- writing ---------------------------------------------------------------
    def _write_message(self, exc: BaseException) -> str:
        if isinstance(exc, StoreIndexError):
            exc = exc.cause
        if isinstance(exc, OSError) and exc.errno in _ERRNO_TEXT:
            why = _ERRNO_TEXT[exc.errno]
        else:
            why = str(exc) or type(exc).__name__
        return (
            f"could not write to the blob store at {self.root}: {why}. Nothing was "
            "stored; keep the output inline instead"
        )

    def put(
        self,
        data: PutData,
        *,
        session_id: str | None = None,
        tool_name: str = "",
        tool_args: str = "",
        kind: str = "blob",
        content_type: str = "text",
        pin: bool = False,
        source: str | None = None,
    ) -> PutResult:
        """Store ``data`` (bytes, str, binary file or iterable of bytes) and return its handle.

        ``kind`` is the caller's label for why the bytes were stored (Stowage
        passes its own: spill, pruned, window ...); the
        store only records it in the provenance and counts it in ``stats``.

        Same bytes are stored once; a repeated put only adds provenance.  Its
        copy is read back and hashed: an intact one is left alone (indexed,
        so already durable: no fsync), a corrupted one is atomically replaced.
        Retention runs afterwards and never evicts the blob just written.
        ``pin`` keeps it for ``session_id``'s next request as well (a spilled
        output's preview points to it), until that request's pins replace it.
        ``source``: the sha-256 of the blob these bytes stand for (a spill preview's original), kept in the
        provenance and the blob's records (:meth:`source_handle` reads it back).
        """
        if source is not None:
            source = require_sha(source)
        try:
            staged = stage(self.tmp_dir, data, self.chunk_size, sync=False)
        except OSError as exc:
            raise StoreWriteError(self._write_message(exc)) from exc
        off = staged.offsets
        sha = off.sha256
        blob, side = self.blob_path(sha), self.sidecar_path(sha)
        try:
            intact = _intact_copy(blob, off)  # outside the lock; confirmed by inode under it
            if intact is None:
                staged.sync()
            now = self.clock()
            with self._index.write() as tx:
                row = tx.get_blob(sha)
                if ensure_dir(blob.parent):  # a new shard: its entry in blobs/ must outlive a crash too
                    fsync_dir(self.blobs_dir)
                had_blob, had_side = blob.exists(), side.exists()
                if not had_side or row is None:  # self-checking and rebuildable: no own fsync
                    write_durable(side, off.to_bytes(), self.tmp_dir, sync=False)
                if not had_blob:
                    tx.on_rollback(
                        lambda: (remove_quietly(blob), remove_quietly(side), remove_quietly(self.record_path(sha)))
                    )
                replace = row is None or intact is None or _inode(blob) != intact
                if replace:  # (a copy read intact may have been evicted or replaced meanwhile)
                    staged.sync()
                    os.replace(staged.path, blob)
                    fsync_dir(blob.parent)
                if row is None:
                    tx.insert_blob(off, content_type, now)
                    tx.delete_tombstone(sha)
                else:
                    tx.touch_blob(sha, now)
                    if not had_side:
                        tx.set_sidecar_seal(off)
                tx.add_provenance(sha, session_id, tool_name, tool_args, kind, now, source)
                record = {
                    "session_id": session_id,
                    "tool_name": tool_name,
                    "tool_args": tool_args,
                    "kind": kind,
                    "content_type": content_type,
                    "at": now,
                }
                self._append_record(self.record_path(sha), record if source is None else {**record, "source": source})
                if session_id is not None:
                    tx.touch_session(session_id, now, None)
                    if pin:
                        tx.add_pin(session_id, sha)
                handle = self._short_handle(tx, sha)
        except BaseException as exc:
            staged.discard()
            if isinstance(exc, (OSError, sqlite3.Error, StoreIndexError)):
                raise StoreWriteError(self._write_message(exc)) from exc
            raise
        if replace:
            staged.release()
        else:
            staged.discard()  # the stored copy stays; ours was never renamed
        self.forget(sha)
        evicted = self._enforce(exclude=(sha,))
        return PutResult(
            sha,
            handle,
            off.size,
            off.line_count,
            off.char_count if off.is_utf8 else None,
            off.is_utf8,
            row["content_type"] if row is not None else content_type,
            row is not None,
            evicted,
        )

    def _enforce(self, exclude: tuple[str, ...]) -> tuple[str, ...]:
        """Retention after a write; failures are logged, never raised into ``put``."""
        try:
            now = self.clock()
            with self._index.read() as tx:
                report = plan(tx, self.policy, now, exclude)
            if not report.evicted and not report.tombstones_expired:
                return ()
            with self._index.write() as tx:
                report = apply(tx, plan(tx, self.policy, now, exclude), self.policy, self.remove_files)
            self._log_cap(report)
            return tuple(e.sha256 for e in report.evicted)
        except (OSError, StoreError) as exc:
            log.warning("blob store retention pass failed: %s", exc)
            return ()

    def _log_cap(self, report: GcReport) -> None:
        """Say what the size cap took from live sessions (their agents will meet tombstones); once a minute."""
        if not report.evicted_live:
            return
        pending = self._cap_pending
        pending[0] += sum(1 for e in report.evicted if e.reason == REASON_CAP)
        pending[1] += sum(e.size for e in report.evicted if e.reason == REASON_CAP)
        pending[2] += report.evicted_live
        if time.monotonic() - self._cap_logged_at < CAP_LOG_INTERVAL_S:
            return
        log.warning(
            "blob store size cap: tombstoned %d blob(s) (%s), %d of them held by live sessions but not "
            "in their current requests; %s over the cap remain",
            pending[0],
            human_bytes(pending[1]),
            pending[2],
            human_bytes(report.over_cap_bytes),
        )
        self._cap_pending, self._cap_logged_at = [0, 0, 0], time.monotonic()

    def remove_files(self, tx: Tx, sha: str) -> None:
        """Inside a write transaction: move the blob to trash/, unlink it after commit."""
        blob = self.blob_path(sha)
        trash = self.trash_dir / f"{sha}-{os.getpid()}-{secrets.token_hex(4)}"
        remove_quietly(self.sidecar_path(sha))  # rebuilt on demand if the eviction rolls back
        tx.after_commit(lambda: remove_quietly(self.record_path(sha)))
        self.forget(sha)
        try:
            os.replace(blob, trash)
        except FileNotFoundError:
            return
        tx.on_rollback(lambda: os.replace(trash, blob))
        tx.after_commit(lambda: remove_quietly(trash))

    # -- handles and scoping ---------------------------------------------------
    def resolve(self, handle: object, session_id: str | None = None) -> str:
        """Full sha for ``handle`` (16..64 hex; anything else, e.g. a model's raw argument, raises
        ``MalformedHandleError``); scoped to ``session_id`` unless None."""
        prefix = normalize_handle(handle)
        scoped = session_id is not None and not self.cross_session_reads
        with self._index.read() as tx:
            # Scoped, another session's blobs and tombstones do not exist: not even an
            # ambiguity may tell a session that someone else stored matching content.
            matches = tx.prefix_matches("blobs", prefix, 10)
            foreign = False
            if scoped:
                readable = [m for m in matches if tx.can_read(m, session_id)]  # type: ignore[arg-type]
                foreign, matches = len(readable) < len(matches), readable
            if len(matches) > 1:
                raise AmbiguousHandleError(prefix, len(matches))
            if matches:
                return matches[0]
            all_tombs = [t for t in map(tx.tombstone, tx.prefix_matches("tombstones", prefix, 10)) if t is not None]
            tombs = [t for t in all_tombs if not scoped or session_id in t.sessions]
            foreign = foreign or len(tombs) < len(all_tombs)
            if len(tombs) > 1:
                raise AmbiguousHandleError(prefix, len(tombs))
            if not tombs:
                if foreign:
                    raise ForeignHandleError(prefix, session_id)  # type: ignore[arg-type]
                raise UnknownHandleError(prefix)
            tomb = tombs[0]
        if scoped:
            tomb = tomb.seen_by(session_id)  # type: ignore[arg-type]
        raise EvictedBlobError(prefix, tomb)

    @staticmethod
    def _short_handle(tx: Tx, sha: str) -> str:
        longest = max((common_prefix_len(sha, other) for other in tx.neighbours(sha) if other != sha), default=0)
        return sha[: max(MIN_HANDLE_LEN, longest + 1)]

    def source_handle(self, sha: str) -> str | None:
        """The handle of the blob ``sha`` stands for, as a put recorded it (``source``); None when no put did."""
        sha = require_sha(sha)
        with self._index.read() as tx:
            source = tx.source_of(sha)
            return self._short_handle(tx, source) if source is not None else None

    def short_handle(self, sha: str) -> str:
        """Shortest prefix (>= 16 hex) that no other stored blob or tombstone shares."""
        sha = require_sha(sha)
        with self._index.read() as tx:
            return self._short_handle(tx, sha)

    def grant(self, handle: str, session_id: str) -> str:
        """Let ``session_id`` read a blob it did not produce; returns the full sha."""
        sha = self.resolve(handle)
        with self._index.write() as tx:
            tx.grant(sha, session_id, self.clock())
            self._append_record(self.grants_log, {"sha": sha, "target": session_id, "at": self.clock()})
        return sha

    def grant_session(self, source_session: str, target_session: str) -> int:
        """Grant ``target_session`` every blob ``source_session`` can read (session rotation)."""
        with self._index.write() as tx:
            self._append_record(
                self.grants_log, {"source": source_session, "target": target_session, "at": self.clock()}
            )
            return tx.grant_session(source_session, target_session, self.clock())

    def mark_session_live(self, session_id: str) -> None:
        """Flag a session live (its blobs are spared by retention) and refresh last-seen."""
        with self._index.write() as tx:
            tx.touch_session(session_id, self.clock(), True)

    def mark_session_ended(self, session_id: str) -> None:
        with self._index.write() as tx:
            tx.touch_session(session_id, self.clock(), False)
            tx.clear_pins(session_id)

    def pin_request(self, session_id: str, refs: Iterable[str]) -> int:
        """Replace what ``session_id``'s current request shows or points to; returns how many are stored.

        ``refs`` are full shas or handles (16..64 hex; an ambiguous or unknown
        one pins nothing).  The size cap spares the pins of live sessions and
        nothing else of theirs once sparing them all would leave it exceeded;
        blobs this call stops sparing are held to the cap now, not at the next write.
        """
        wanted = {str(ref).lower() for ref in refs}
        with self._index.write(durable=False) as tx:  # advisory: a crash losing it costs nothing
            shas: set[str] = set()
            for ref in wanted:
                matches = [ref] if len(ref) == 64 else tx.prefix_matches("blobs", ref, 2)
                if len(matches) == 1:
                    shas.add(matches[0])
            released = bool(set(tx.pins_of(session_id)) - shas)
            tx.set_pins(session_id, sorted(shas))
            tx.touch_session(session_id, self.clock(), None)
            pinned = len(tx.pins_of(session_id))
        if released and self.policy.max_total_bytes:
            self._enforce(exclude=())
        return pinned

    def tombstoned_for(self, session_id: str, reason: str = REASON_CAP) -> tuple[int, int]:
        """``(blobs, bytes)`` ``session_id`` could read that were evicted for ``reason`` (default: the cap)."""
        with self._index.read() as tx:
            return tx.tombstoned_for(session_id, reason)

    def record_fetch(self, sha: str) -> bool:
        """Count a fetch and bump last-access (LRU and the fetch grace window use it)."""
        sha = require_sha(sha)
        with self._index.write() as tx:
            return tx.record_fetch(sha, self.clock())

    # -- metadata ----------------------------------------------------------------
    def _info(self, tx: Tx, row: sqlite3.Row, provenance: bool = True) -> BlobInfo:
        sha = row["sha"]
        return BlobInfo(
            sha256=sha,
            handle=self._short_handle(tx, sha),
            size=row["size"],
            line_count=row["line_count"],
            char_count=row["char_count"] if row["is_utf8"] else None,
            is_utf8=bool(row["is_utf8"]),
            content_type=row["content_type"],
            created_at=row["created_at"],
            last_access=row["last_access"],
            last_fetch=row["last_fetch"],
            fetch_count=row["fetch_count"],
            provenance=tuple(tx.provenance(sha)) if provenance else (),
        )

    def stat(self, sha: str) -> BlobInfo:
        """Metadata and provenance of one blob (no scoping: resolve first)."""
        sha = require_sha(sha)
        with self._index.read() as tx:
            row = tx.get_blob(sha)
            if row is not None:
                return self._info(tx, row)
        raise self._gone(sha) or UnknownHandleError(sha)

    def list_blobs(
        self, session_id: str | None = None, limit: int = 100, kind: str | None = None, content_type: str | None = None
    ) -> list[BlobInfo]:
        """Most recently used first; ``session_id`` limits to blobs that session can read."""
        with self._index.read() as tx:
            rows = tx.list_blobs(session_id, kind, content_type, limit)
            return [self._info(tx, row) for row in rows]

    def catalog(self, session_id: str) -> list[CatalogEntry]:
        """Every blob ``session_id`` can read, newest first: what a scan over a whole session walks."""
        with self._index.read() as tx:
            rows = tx.session_catalog(session_id)
        return [
            CatalogEntry(
                row["sha"],
                row["created_at"],
                row["size"],
                bool(row["is_utf8"]),
                row["content_type"],
                row["kind"] or "",
                row["tool_name"] or "",
            )
            for row in rows
        ]

    def tombstone(self, sha: str) -> Tombstone | None:
        with self._index.read() as tx:
            return tx.tombstone(require_sha(sha))

    def stats(self) -> dict:
        with self._index.read() as tx:
            out = tx.stats()
        out["root"] = str(self.root)
        out["policy"] = asdict(self.policy)
        return out

    # -- retention and maintenance -----------------------------------------------
    def gc(self, dry_run: bool = False) -> GcReport:
        """Apply the retention policy now (or, with ``dry_run``, report what it would do)."""
        now = self.clock()
        if dry_run:
            with self._index.read() as tx:
                return plan(tx, self.policy, now)
        with self._index.write() as tx:
            return apply(tx, plan(tx, self.policy, now), self.policy, self.remove_files)

    def evict(self, handle: str, reason: str = REASON_MANUAL, detail: str = "") -> Tombstone:
        """Operator removal of one blob, leaving a tombstone like retention does."""
        sha = self.resolve(handle)
        with self._index.write() as tx:
            return evict(tx, sha, reason, detail, self.clock(), self.remove_files)

    def purge_session(self, session_id: str, detail: str) -> PurgeReport:
        """Remove what ``session_id`` holds, never another session's bytes.

        Content is stored once however many sessions put it: a blob that
        another session also produced or was granted stays (only this
        session's provenance, grants and pins go); the others are evicted
        with ``detail``, leaving tombstones.  One transaction: all or nothing.
        """
        with self._index.write() as tx:
            now = self.clock()
            evicted: list[Tombstone] = []
            kept: list[str] = []
            for sha in sorted(tx.held_by(session_id)):
                if any(reader != session_id for reader in tx.readers(sha)):
                    tx.drop_claims(sha, session_id)
                    self._drop_records(tx, sha, session_id)
                    self._append_record(self.grants_log, {"revoke": session_id, "sha": sha, "at": now})
                    kept.append(sha)
                else:
                    evicted.append(evict(tx, sha, REASON_MANUAL, detail, now, self.remove_files))
            tx.clear_pins(session_id)
        return PurgeReport(tuple(evicted), tuple(kept))

    def _drop_records(self, tx: Tx, sha: str, session_id: str) -> None:
        """Rewrite a blob's provenance records without ``session_id`` (a rebuilt index must not restore it)."""
        path = self.record_path(sha)
        records = [r for r in self._read_records(path) if r.get("session_id") != session_id]
        data = b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in records)
        try:
            write_durable(path, data, self.tmp_dir)
        except OSError as exc:
            log.warning("could not rewrite the provenance records of %s: %s", sha[:16], exc)

    def evict_many(self, shas: list[str], reason: str = REASON_MANUAL, detail: str = "") -> list[Tombstone]:
        """Operator removal of several blobs in one transaction: all of them, or (on an error) none."""
        with self._index.write() as tx:
            now = self.clock()
            return [
                evict(tx, require_sha(sha), reason, detail, now, self.remove_files)
                for sha in dict.fromkeys(shas)
                if tx.get_blob(require_sha(sha)) is not None
            ]

    def evict_in(self, tx: Tx, sha: str, reason: str, detail: str) -> Tombstone:
        """Inside the caller's write transaction: replace a blob by its tombstone (the doctor's repairs)."""
        return evict(tx, sha, reason, detail, self.clock(), self.remove_files)

    def doctor(
        self,
        repair: bool = False,
        *,
        verify: bool = True,
        temp_grace_seconds: float = 5.0,
        progress: Callable[[int, int, int], None] | None = None,
    ) -> DoctorReport:
        """Check (and with ``repair`` fix) blobs, sidecars, temp files and the index.

        ``verify`` rehashes every blob; temp files younger than
        ``temp_grace_seconds`` are assumed to belong to a write in progress.
        """
        return run_doctor(self, repair=repair, verify=verify, temp_grace_seconds=temp_grace_seconds, progress=progress)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _intact_copy(path: Path, off: Offsets) -> int | None:
    """The inode of ``path`` if it holds exactly the bytes ``off`` describes, else None.

    Reading and hashing a stored copy costs far less than the two fsyncs of
    replacing it (a copy that is indexed was made durable when it was put).
    """
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size != off.size or hashlib.file_digest(fh, "sha256").hexdigest() != off.sha256:
                return None
            return st.st_ino
    except OSError:
        return None
