"""Verified read access to stored blobs, mixed into ``BlobStore``.

Kept apart from the write and index-management side of the store.  A read
touches SQLite only when it loads a sidecar it has not cached (one lookup of
the sidecar's seal, which ties its chunk digests to the content hash) and
when a file is missing (under the write lock, to tell an eviction in progress
from a lost file).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Iterator

from . import reader as _reader
from .errors import CorruptBlobError, EvictedBlobError, StoreError, UnknownHandleError
from .fsutil import ensure_dir, fsync_dir, write_durable
from .handles import MIN_HANDLE_LEN, require_sha
from .index import Index, Tx
from .offsets import Offsets, SidecarError, StreamIndexer
from .reader import BlobReader, BlobStream
from .window import LineWindow, read_window
from .writer import rechunk

log = logging.getLogger(__name__)


class ReadAccess:
    """Sidecar loading (cached, self-healing) and the public read methods."""

    _index: Index
    _cache: OrderedDict[str, tuple[tuple, Offsets]]
    _cache_lock: threading.Lock
    chunk_size: int
    tmp_dir: Path
    trash_dir: Path

    def blob_path(self, sha: str) -> Path:
        raise NotImplementedError

    def sidecar_path(self, sha: str) -> Path:
        raise NotImplementedError

    def forget(self, sha: str) -> None:
        """Drop the cached sidecar of ``sha`` (its file was replaced or removed)."""
        with self._cache_lock:
            self._cache.pop(sha, None)

    def _offsets(self, sha: str) -> Offsets:
        side = self.sidecar_path(sha)
        try:
            st = os.stat(side)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            with self._cache_lock:
                hit = self._cache.get(sha)
                if hit and hit[0] == key:
                    self._cache.move_to_end(sha)
                    return hit[1]
            data = side.read_bytes()
            off = Offsets.from_bytes(data, sha)
            if not self._sealed(sha, data):
                raise SidecarError("sidecar does not match the seal the index keeps for this blob")
        except FileNotFoundError:
            return self._rebuild_sidecar(sha)
        except SidecarError as exc:
            log.warning("rebuilding sidecar of %s: %s", sha[:16], exc)
            return self._rebuild_sidecar(sha)
        with self._cache_lock:
            self._cache[sha] = (key, off)
            while len(self._cache) > 256:
                self._cache.popitem(last=False)
        return off

    def _sealed(self, sha: str, data: bytes) -> bool:
        """The sidecar is the one written from the verified bytes (its chunk digests can be trusted).

        The index keeps each sidecar's seal; a sidecar that does not match it
        (forged, or from before seals) is rebuilt from the blob, whose whole
        hash is checked against its name, and the seal is updated.
        """
        try:
            with self._index.read() as tx:
                seal = tx.sidecar_seal(sha)
        except StoreError:
            return False
        return seal is not None and bytes.fromhex(seal) == data[-32:]

    def index_file(self, path: Path) -> Offsets:
        """Hash and index an existing file (used to rebuild sidecars and by the doctor)."""
        indexer = StreamIndexer(self.chunk_size)
        with open(path, "rb") as fh:
            for chunk in rechunk(fh, self.chunk_size):
                indexer.feed(chunk)
        return indexer.finish()

    def _rebuild_sidecar(self, sha: str) -> Offsets:
        off = self.index_file(self.blob_path(sha))  # FileNotFoundError: caller maps it
        if off.sha256 != sha:
            raise CorruptBlobError(sha, f"content hashes to {off.sha256[:16]}")
        try:
            with self._index.write() as tx:
                if self.blob_path(sha).exists():
                    write_durable(self.sidecar_path(sha), off.to_bytes(), self.tmp_dir)
                    tx.set_sidecar_seal(off)
        except (OSError, StoreError) as exc:
            log.warning("could not rewrite sidecar of %s: %s", sha[:16], exc)
        return off

    def restore_from_trash(self, tx: Tx, sha: str) -> bool:
        """Undo an eviction whose process died before committing (row kept, file in trash/)."""
        blob = self.blob_path(sha)
        if tx.get_blob(sha) is None or blob.exists():
            return False
        for trash in sorted(self.trash_dir.glob(f"{sha}-*")):
            if ensure_dir(blob.parent):
                fsync_dir(blob.parent.parent)
            os.replace(trash, blob)
            fsync_dir(blob.parent)
            return True
        return False

    def _gone(self, sha: str) -> Exception | None:
        """The right error for a sha whose file is not there (None: restored, retry)."""
        try:  # queue behind a pass that may be evicting it right now
            with self._index.write() as tx:
                if self.restore_from_trash(tx, sha):
                    return None
                tomb, row = tx.tombstone(sha), tx.get_blob(sha)
        except (StoreError, OSError):
            with self._index.read() as tx:
                tomb, row = tx.tombstone(sha), tx.get_blob(sha)
        if tomb is not None:
            return EvictedBlobError(sha[:MIN_HANDLE_LEN], tomb)
        if row is not None:
            return CorruptBlobError(sha, "its file is missing from the store")
        return UnknownHandleError(sha)

    def open_reader(self, sha: str) -> BlobReader:
        """A verified random-access reader (caller closes it)."""
        sha = require_sha(sha)
        for _ in range(2):
            try:
                return BlobReader(self.blob_path(sha), self._offsets(sha))
            except FileNotFoundError:
                error = self._gone(sha)
                if error is not None:
                    raise error from None
        raise CorruptBlobError(sha, "its file keeps disappearing from the store")

    # -- reads -----------------------------------------------------------------
    def read_bytes(self, sha: str, start: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[start, start+length)`` (0-based, clipped at the end of the blob)."""
        if start < 0 or (length is not None and length < 0):
            raise ValueError("start and length must be >= 0")
        with self.open_reader(sha) as rd:
            end = rd.off.size if length is None else start + length
            if start == 0 and end >= rd.off.size:
                return b"".join(chunk for _, chunk in rd.iter_chunks(0))
            return rd.read_range(start, end)

    def read_lines(self, sha: str, first_line: int = 1, count: int = 100) -> list[str]:
        """Up to ``count`` lines from **1-based** ``first_line``, without terminators.

        Lines split on ``\\n`` (a ``\\r`` before it is dropped) and decode as
        UTF-8 with ``errors="replace"``.
        """
        with self.open_reader(sha) as rd:
            return _reader.read_lines(rd, first_line, count)

    def read_window(
        self, sha: str, start: int = 1, count: int = 100, *, offset: int = 0, max_bytes: int = 64 * 1024
    ) -> LineWindow:
        """Up to ``count`` lines from 1-based ``start`` (character ``offset`` in it), at most ``max_bytes`` of text.

        A viewer's read: a one-line 8 MB blob comes back cut, with where to continue.
        """
        with self.open_reader(sha) as rd:
            return read_window(rd, start, offset, count, max_bytes)

    def read_chars(self, sha: str, start: int = 0, count: int = 4096) -> str:
        """``count`` characters from **0-based** character ``start``.

        Exact for UTF-8 blobs; for non-UTF-8 blobs one byte counts as one
        character and undecodable bytes read as U+FFFD.
        """
        with self.open_reader(sha) as rd:
            return _reader.read_chars(rd, start, count)

    def iter_numbered_lines(
        self, sha: str, start_line: int = 1, *, max_line_bytes: int | None = None
    ) -> Iterator[tuple[int, str]]:
        """``(line_number, text)`` pairs to the end (see ``reader.iter_numbered_lines``)."""
        rd = self.open_reader(sha)

        def generate() -> Iterator[tuple[int, str]]:
            with rd:
                yield from _reader.iter_numbered_lines(rd, start_line, max_line_bytes)

        return generate()

    def iter_lines(self, sha: str, start_line: int = 1) -> Iterator[str]:
        """Lines from 1-based ``start_line``; from line 1 the whole hash is checked at the end."""
        rd = self.open_reader(sha)

        def generate() -> Iterator[str]:
            with rd:
                for _first, texts, _piece in _reader.iter_line_batches(rd, start_line):
                    yield from texts

        return generate()

    def iter_line_batches(
        self, sha: str, start_line: int = 1, *, max_line_bytes: int | None = None
    ) -> Iterator[tuple[int, list[str], bool]]:
        """Fastest full scan: ``(first_line_number, texts, is_piece)`` per decoded chunk.

        Non-piece batches hold consecutive whole lines numbered from
        ``first_line_number``; with ``max_line_bytes`` an over-long line also
        arrives as ``is_piece`` batches of one fragment each, before its last
        fragment (which is the first text of a normal batch).
        """
        rd = self.open_reader(sha)

        def generate() -> Iterator[tuple[int, list[str], bool]]:
            with rd:
                yield from _reader.iter_line_batches(rd, start_line, max_line_bytes)

        return generate()

    def open_stream(self, sha: str) -> BlobStream:
        """A verified binary stream over the whole blob (use as a context manager)."""
        return BlobStream(self.open_reader(sha))
