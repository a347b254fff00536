"""Verified reads: byte ranges, lines, characters and streams.

Reads never trust the disk.  Each chunk is checked against the SHA-256 the
sidecar recorded for it before any of its bytes are returned, so a range read
of a 100 MB blob costs one or two chunk hashes, not a full rehash; a read that
covers the whole blob from byte 0 also checks the whole-blob hash at the end.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
from itertools import count as counter
from itertools import islice
from pathlib import Path
from typing import Any, Generator, Iterator

from .errors import CorruptBlobError
from .offsets import Offsets, nth_newline


class BlobReader:
    """An open blob plus its offsets; closes its descriptor on ``close``/``with``."""

    def __init__(self, path: Path, offsets: Offsets) -> None:
        self.off = offsets
        self._fd = -1
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        size = os.fstat(self._fd).st_size
        if size != offsets.size:
            self.close()
            raise CorruptBlobError(offsets.sha256, f"file holds {size} bytes, {offsets.size} were stored")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # a generator that was never started still owns a reader
        self.close()

    def __enter__(self) -> "BlobReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chunk(self, index: int) -> bytes:
        """Chunk ``index``, verified against its recorded digest."""
        cs = self.off.chunk_size
        start = index * cs
        want = min(cs, self.off.size - start)
        parts, got = [], 0
        while got < want:
            data = os.pread(self._fd, want - got, start + got)
            if not data:
                raise CorruptBlobError(self.off.sha256, f"file ends before byte {start + got}")
            parts.append(data)
            got += len(data)
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if hashlib.sha256(data).digest() != self.off.digest(index):
            raise CorruptBlobError(
                self.off.sha256,
                f"bytes {start}..{start + want - 1} (chunk {index}) do not match their recorded SHA-256",
            )
        return data

    def iter_chunks(self, first: int = 0) -> Generator[tuple[int, bytes], None, None]:
        """Yield ``(offset, chunk)`` from chunk ``first``; from 0, also check the whole hash."""
        whole = hashlib.sha256() if first == 0 else None
        cs = self.off.chunk_size
        for index in range(first, self.off.n_chunks):
            data = self.chunk(index)
            if whole is not None:
                whole.update(data)
            yield index * cs, data
        if whole is not None and whole.hexdigest() != self.off.sha256:
            raise CorruptBlobError(self.off.sha256, f"content hashes to {whole.hexdigest()}")

    def read_range(self, start: int, end: int) -> bytes:
        """Verified bytes ``[start, end)``, clipped to the blob."""
        end = min(end, self.off.size)
        if start >= end:
            return b""
        cs = self.off.chunk_size
        parts = []
        for index in range(start // cs, (end - 1) // cs + 1):
            base = index * cs
            parts.append(self.chunk(index)[max(0, start - base) : end - base])
        return b"".join(parts)


def _strip_cr(texts: list[str]) -> list[str]:
    return [t[:-1] if t.endswith("\r") else t for t in texts]


def _utf8_cut(data: bytes, limit: int) -> int:
    """A cut point <= ``limit`` that does not split a UTF-8 sequence (when possible)."""
    cut = limit
    while cut > limit - 3 and cut > 0 and 0x80 <= data[cut] <= 0xBF:
        cut -= 1
    return cut if cut > 0 else limit


Batch = tuple[int, list[str], bool]


def _pieces(data: bytes, limit: int | None, line_no: int) -> tuple[list[Batch], bytes]:
    """Split off ``limit``-sized pieces of an over-long line; return them and the rest."""
    out: list[Batch] = []
    while limit and len(data) > limit:
        cut = _utf8_cut(data, limit)
        out.append((line_no, [data[:cut].decode("utf-8", "replace")], True))
        data = data[cut:]
    return out, data


def iter_line_batches(reader: BlobReader, start_line: int = 1, max_line_bytes: int | None = None) -> Iterator[Batch]:
    """Yield ``(first_line_number, texts, is_piece)`` batches from 1-based ``start_line``.

    Batching lets a whole chunk be decoded and split in C, which is what makes
    a full scan fast.  ``is_piece`` marks a fragment of an over-long line (see
    :func:`iter_numbered_lines`); other batches hold consecutive whole lines.
    """
    off = reader.off
    if start_line < 1:
        raise ValueError("line numbers start at 1")
    target = start_line - 1
    if target >= off.line_count:
        return
    cp_line, cp_byte = off.line_checkpoint(target)
    skip = target - cp_line
    cs = off.chunk_size
    pos = cp_byte % cs
    carry: list[bytes] = []
    carry_len = 0
    line_no = start_line
    limit = max_line_bytes
    for _base, chunk in reader.iter_chunks(cp_byte // cs):
        if skip:
            nl = nth_newline(chunk, pos, skip)
            if nl < 0:
                skip -= chunk.count(b"\n", pos)
                pos = 0
                continue
            pos, skip = nl + 1, 0
        last_nl = chunk.rfind(b"\n", pos)
        if last_nl < 0:
            if pos < len(chunk):
                carry.append(chunk[pos:] if pos else chunk)
                carry_len += len(carry[-1])
            if limit and carry_len > limit:
                pieces, rest = _pieces(b"".join(carry), limit, line_no)
                yield from pieces
                carry, carry_len = [rest], len(rest)
            pos = 0
            continue
        if carry:
            first_nl = chunk.find(b"\n", pos)
            pieces, rest = _pieces(b"".join(carry) + chunk[pos:first_nl], limit, line_no)
            yield from pieces
            yield line_no, _strip_cr([rest.decode("utf-8", "replace")]), False
            line_no += 1
            carry, carry_len = [], 0
            pos = first_nl + 1
        if pos <= last_nl:
            region = chunk[pos:last_nl]
            if limit and len(region) > limit:
                for raw in region.split(b"\n"):
                    pieces, rest = _pieces(raw, limit, line_no)
                    yield from pieces
                    yield line_no, _strip_cr([rest.decode("utf-8", "replace")]), False
                    line_no += 1
            else:
                # '\n' never belongs to a multi-byte or invalid sequence, so decoding the
                # region at once equals decoding line by line.
                texts = region.decode("utf-8", "replace").split("\n")
                if b"\r" in region:
                    texts = _strip_cr(texts)
                yield line_no, texts, False
                line_no += len(texts)
        pos = 0
        if last_nl + 1 < len(chunk):
            carry, carry_len = [chunk[last_nl + 1 :]], len(chunk) - last_nl - 1
    if carry:
        pieces, rest = _pieces(b"".join(carry), limit, line_no)
        yield from pieces
        yield line_no, [rest.decode("utf-8", "replace")], False


def iter_numbered_lines(
    reader: BlobReader, start_line: int = 1, max_line_bytes: int | None = None
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` from 1-based ``start_line`` to the end.

    Lines are split on ``\\n``; the terminator (and a ``\\r`` before it) is
    dropped; bytes are decoded as UTF-8 with ``errors="replace"``.  With
    ``max_line_bytes``, a longer line comes out as several consecutive pieces
    sharing one line number, which keeps memory bounded on one-line JSON.
    """
    for first, texts, _piece in iter_line_batches(reader, start_line, max_line_bytes):
        yield from zip(counter(first), texts)


def iter_lines(reader: BlobReader, start_line: int = 1) -> Generator[str, None, None]:
    """Just the texts of :func:`iter_numbered_lines` (whole lines, no numbers)."""
    for _first, texts, _piece in iter_line_batches(reader, start_line):
        yield from texts


def read_lines(reader: BlobReader, first_line: int, count: int) -> list[str]:
    """Up to ``count`` lines starting at 1-based ``first_line``."""
    if count <= 0:
        if first_line < 1:
            raise ValueError("line numbers start at 1")
        return []
    lines = iter_lines(reader, first_line)
    try:
        return list(islice(lines, count))
    finally:
        lines.close()


def read_chars(reader: BlobReader, start: int, count: int) -> str:
    """``count`` characters from 0-based character ``start`` (one char per byte if not UTF-8)."""
    off = reader.off
    if start < 0 or count < 0:
        raise ValueError("start and count must be >= 0")
    if count == 0 or start >= off.char_count:
        return ""
    if not off.is_utf8:
        return reader.read_range(start, start + count).decode("utf-8", "replace")
    first_char, byte_at = off.char_checkpoint(start)
    skip, need = start - first_char, count
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    cs = off.chunk_size
    pos = byte_at % cs
    out: list[str] = []
    chunks = reader.iter_chunks(byte_at // cs)
    try:
        for _base, chunk in chunks:
            while pos < len(chunk) and need > 0:
                piece = chunk[pos : pos + max(4096, 4 * (skip + need) + 4)]
                pos += len(piece)
                text = decoder.decode(piece)
                if skip:
                    if len(text) <= skip:
                        skip -= len(text)
                        continue
                    text, skip = text[skip:], 0
                out.append(text[:need])
                need -= len(out[-1])
            pos = 0
            if need <= 0:
                break
    finally:
        chunks.close()
    return "".join(out)


class BlobStream(io.RawIOBase):
    """Read-only stream over a whole blob, verified chunk by chunk and as a whole."""

    def __init__(self, reader: BlobReader) -> None:
        super().__init__()
        self._reader = reader
        self._chunks = reader.iter_chunks(0)
        self._buf = b""
        self._pos = 0

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        while self._pos >= len(self._buf):
            try:
                _, self._buf = next(self._chunks)
            except StopIteration:
                return False
            self._pos = 0
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._fill():
            return 0
        n = min(len(buffer), len(self._buf) - self._pos)
        buffer[:n] = self._buf[self._pos : self._pos + n]
        self._pos += n
        return n

    def readall(self) -> bytes:
        parts = []
        while self._fill():
            parts.append(self._buf[self._pos :])
            self._pos = len(self._buf)
        return b"".join(parts)

    def close(self) -> None:
        if not self.closed:
            self._chunks.close()
            self._reader.close()
        super().close()
