"""Streaming a put into a private temp file with bounded memory.

Input of any shape (bytes, a binary file, an iterable of byte chunks) is cut
into fixed-size chunks that are hashed, indexed and written one at a time, so
a 1 GB output costs about one chunk of memory.  The temp file is fsync'ed
before anyone renames it into place (``Staged.sync``; a put whose bytes are
already durably stored never does); on any error it is removed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Union

from .fsutil import create_temp, remove_quietly, write_all
from .offsets import CHUNK_SIZE, Offsets, StreamIndexer

PutData = Union[bytes, bytearray, memoryview, str, BinaryIO, Iterable[bytes]]


def _from_buffer(data: bytes | bytearray | memoryview, size: int) -> Iterator[bytes]:
    view = memoryview(data).cast("B")
    for start in range(0, len(view), size):
        yield bytes(view[start : start + size])


def _from_file(stream: BinaryIO, size: int) -> Iterator[bytes]:
    while True:
        parts, got = [], 0
        while got < size:  # pipes and sockets return short reads
            piece = stream.read(size - got)
            if not piece:
                break
            if not isinstance(piece, (bytes, bytearray)):
                raise TypeError("put() needs a binary file object (opened with 'rb')")
            parts.append(piece)
            got += len(piece)
        if got:
            yield parts[0] if len(parts) == 1 else b"".join(parts)
        if got < size:
            return


def _from_iterable(pieces: Iterable[bytes], size: int) -> Iterator[bytes]:
    buf = bytearray()
    for piece in pieces:
        if not isinstance(piece, (bytes, bytearray, memoryview)):
            raise TypeError(f"put() chunks must be bytes, got {type(piece).__name__}")
        view = memoryview(piece).cast("B")
        pos = 0
        if buf:
            pos = min(len(view), size - len(buf))
            buf += view[:pos]
            if len(buf) < size:
                continue
            yield bytes(buf)
            buf.clear()
        while len(view) - pos >= size:
            yield bytes(view[pos : pos + size])
            pos += size
        buf += view[pos:]
    if buf:
        yield bytes(buf)


def rechunk(data: PutData, size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Cut any accepted input into ``size``-byte chunks (the last may be short)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _from_buffer(data, size)
    if hasattr(data, "read"):
        return _from_file(data, size)  # type: ignore[arg-type]
    if isinstance(data, Iterable):
        return _from_iterable(data, size)
    raise TypeError(f"put() accepts bytes, a binary file or an iterable of bytes, not {type(data).__name__}")


@dataclass
class Staged:
    """A fully written temp file and what was learnt while writing it."""

    fd: int
    path: Path
    offsets: Offsets
    synced: bool = False

    def sync(self) -> None:
        """Make the bytes durable: required before the file is renamed into place."""
        if not self.synced:
            os.fsync(self.fd)
            self.synced = True

    def discard(self) -> None:
        self.release()
        remove_quietly(self.path)

    def release(self) -> None:
        """Close the descriptor (dropping the in-use lock)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def stage(tmp_dir: Path, data: PutData, chunk_size: int = CHUNK_SIZE, *, sync: bool = True) -> Staged:
    """Stream ``data`` into a new temp file.  OSError propagates after cleanup.

    ``sync=False`` leaves the fsync to the caller (``Staged.sync``), who may
    find the bytes already stored and never rename the file.
    """
    chunks = rechunk(data, chunk_size)  # TypeError before any file exists
    fd, path = create_temp(tmp_dir, "put")
    try:
        indexer = StreamIndexer(chunk_size)
        for chunk in chunks:
            indexer.feed(chunk)
            write_all(fd, chunk)
        staged = Staged(fd, path, indexer.finish())
        if sync:
            staged.sync()
        return staged
    except BaseException:
        os.close(fd)
        remove_quietly(path)
        raise
