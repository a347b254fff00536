"""Everything computed while a blob streams in, and its sidecar file.

A put feeds every chunk through a :class:`StreamIndexer`, which produces in one
pass: the SHA-256 of the whole blob, a SHA-256 per fixed-size chunk (so a range
read verifies only the chunks it touches), line and character counts, UTF-8
validity, and sparse checkpoints so reads can seek instead of scanning:

* line checkpoints: ``(line_index, byte_offset)`` of the first line start at
  least ``LINE_SPACING`` bytes after the previous checkpoint.  Spacing by bytes
  rather than "every Nth line" bounds both the scan after a seek (one spacing
  plus one line) and the sidecar size (at most one entry per spacing), whether
  lines are 2 bytes or 2 MB long.
* character checkpoints: byte offset of every ``CHAR_STEP``-th character
  (UTF-8 blobs only; other blobs count one character per byte).

The sidecar is a small binary file bound to the blob by its hash and sealed by
a trailing SHA-256 of its own bytes; any mismatch makes it invalid, and the
store rebuilds it from the (verified) blob.
"""

from __future__ import annotations

import codecs
import hashlib
import struct
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass

CHUNK_SIZE = 256 * 1024
LINE_SPACING = 32 * 1024
CHAR_STEP = 64 * 1024

_MAGIC = b"STWOFF\x00\x01"
_HEADER = struct.Struct("<8s32sQQQB3xIIIQQQ")
_TRAILER = 32
_BIG_ENDIAN = sys.byteorder == "big"


class SidecarError(ValueError):
    """A sidecar file is missing, truncated, tampered with or for another blob."""


def _u64(values: array) -> bytes:
    if _BIG_ENDIAN:  # pragma: no cover - little-endian on every supported host
        values = array("Q", values)
        values.byteswap()
    return values.tobytes()


def _u64_from(data: bytes) -> array:
    values = array("Q")
    values.frombytes(data)
    if _BIG_ENDIAN:  # pragma: no cover
        values.byteswap()
    return values


@dataclass
class Offsets:
    """Parsed sidecar: per-chunk digests plus line and character checkpoints."""

    sha256: str
    size: int
    line_count: int
    char_count: int
    is_utf8: bool
    chunk_size: int
    digests: bytes
    line_idx: array
    line_off: array
    char_off: array
    char_step: int = CHAR_STEP
    line_spacing: int = LINE_SPACING

    @property
    def n_chunks(self) -> int:
        return len(self.digests) // 32

    def digest(self, chunk: int) -> bytes:
        return self.digests[chunk * 32 : chunk * 32 + 32]

    def line_checkpoint(self, line_index: int) -> tuple[int, int]:
        """Nearest checkpoint at or before 0-based ``line_index``: (line_index, byte_offset)."""
        i = bisect_right(self.line_idx, line_index) - 1
        return self.line_idx[i], self.line_off[i]

    def char_checkpoint(self, char_index: int) -> tuple[int, int]:
        """Nearest checkpoint at or before 0-based ``char_index``: (char_index, byte_offset)."""
        if not self.is_utf8:
            return char_index, min(char_index, self.size)
        i = min(char_index // self.char_step, len(self.char_off) - 1)
        return i * self.char_step, self.char_off[i]

    def to_bytes(self) -> bytes:
        header = _HEADER.pack(
            _MAGIC,
            bytes.fromhex(self.sha256),
            self.size,
            self.line_count,
            self.char_count,
            1 if self.is_utf8 else 0,
            self.chunk_size,
            self.line_spacing,
            self.char_step,
            self.n_chunks,
            len(self.line_idx),
            len(self.char_off),
        )
        body = b"".join((header, self.digests, _u64(self.line_idx), _u64(self.line_off), _u64(self.char_off)))
        return body + hashlib.sha256(body).digest()

    def seal(self) -> bytes:
        """The sidecar's own SHA-256 (its last 32 bytes); the index keeps it to tie the sidecar to the blob."""
        return self.to_bytes()[-_TRAILER:]

    @classmethod
    def from_bytes(cls, data: bytes, sha256: str) -> "Offsets":
        """Parse and check a sidecar; raise :class:`SidecarError` on any inconsistency."""
        if len(data) < _HEADER.size + _TRAILER:
            raise SidecarError("sidecar is truncated")
        body, seal = data[:-_TRAILER], data[-_TRAILER:]
        if hashlib.sha256(body).digest() != seal:
            raise SidecarError("sidecar checksum mismatch")
        (magic, raw_sha, size, lines, chars, utf8, chunk_size, spacing, char_step, n_chunks, n_lines, n_chars) = (
            _HEADER.unpack_from(body)
        )
        if magic != _MAGIC:
            raise SidecarError("unknown sidecar format")
        if raw_sha.hex() != sha256:
            raise SidecarError("sidecar belongs to another blob")
        expect = _HEADER.size + 32 * n_chunks + 8 * (2 * n_lines + n_chars)
        if len(body) != expect or min(chunk_size, spacing, char_step, n_lines, n_chars) < 1:
            raise SidecarError("sidecar layout is inconsistent")
        if n_chunks != -(-size // chunk_size):
            raise SidecarError("sidecar chunk count does not match the blob size")
        pos = _HEADER.size
        digests = body[pos : pos + 32 * n_chunks]
        pos += 32 * n_chunks
        line_idx = _u64_from(body[pos : pos + 8 * n_lines])
        pos += 8 * n_lines
        line_off = _u64_from(body[pos : pos + 8 * n_lines])
        pos += 8 * n_lines
        char_off = _u64_from(body[pos : pos + 8 * n_chars])
        return cls(
            sha256,
            size,
            lines,
            chars,
            bool(utf8),
            chunk_size,
            digests,
            line_idx,
            line_off,
            char_off,
            char_step,
            spacing,
        )


class StreamIndexer:
    """Single-pass hashing and indexing of a byte stream fed in ``chunk_size`` pieces.

    Every piece but the last must be exactly ``chunk_size`` bytes, so chunk
    digests line up with the offsets a reader will later verify.
    """

    def __init__(
        self, chunk_size: int = CHUNK_SIZE, line_spacing: int | None = None, char_step: int | None = None
    ) -> None:
        self.chunk_size = chunk_size
        self.line_spacing = line_spacing or LINE_SPACING
        self.char_step = char_step or CHAR_STEP
        self._whole = hashlib.sha256()
        self._digests = bytearray()
        self._size = 0
        self._short_seen = False
        self._last = b""
        self._newlines = 0
        self._line_idx = array("Q", [0])
        self._line_off = array("Q", [0])
        self._next_line_cp = self.line_spacing
        self._utf8 = True
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._chars = 0
        self._char_off = array("Q", [0])
        self._next_char_cp = self.char_step

    @property
    def size(self) -> int:
        return self._size

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self._short_seen or len(chunk) > self.chunk_size:
            raise ValueError("StreamIndexer needs full chunks; only the last may be short")
        if len(chunk) < self.chunk_size:
            self._short_seen = True
        self._whole.update(chunk)
        self._digests += hashlib.sha256(chunk).digest()
        self._scan_lines(chunk)
        if self._utf8:
            self._scan_chars(chunk)
        self._size += len(chunk)
        self._last = chunk[-1:]

    def _scan_lines(self, chunk: bytes) -> None:
        base, n, counted = self._size, len(chunk), 0
        while True:
            rel = self._next_line_cp - 1 - base  # a newline here starts a line at the threshold
            if rel >= n:
                break
            nl = chunk.find(b"\n", max(rel, 0))
            if nl < 0:
                break
            self._newlines += chunk.count(b"\n", counted, nl + 1)
            counted = nl + 1
            self._line_idx.append(self._newlines)
            self._line_off.append(base + nl + 1)
            self._next_line_cp = base + nl + 1 + self.line_spacing
        self._newlines += chunk.count(b"\n", counted)

    def _scan_chars(self, chunk: bytes) -> None:
        base = self._size
        pending = self._decoder.getstate()[0]
        if not pending and chunk.isascii():
            end = self._chars + len(chunk)
            while self._next_char_cp < end:
                self._char_off.append(base + self._next_char_cp - self._chars)
                self._next_char_cp += self.char_step
            self._chars = end
            return
        try:
            text = self._decoder.decode(chunk)
        except UnicodeDecodeError:
            self._utf8 = False
            return
        # (done, pos): char index in ``text`` and the chunk byte where that char starts.
        # text[0] may begin in the previous chunk (``pending`` bytes).
        done, pos = 0, -len(pending)
        while self._next_char_cp < self._chars + len(text):
            k = self._next_char_cp - self._chars
            if k and pos < 0:
                done, pos = 1, len(text[0].encode("utf-8")) - len(pending)
            pos = _skip_chars(chunk, pos, k - done) if k > done else pos
            done = k
            self._char_off.append(base + pos)
            self._next_char_cp += self.char_step
        self._chars += len(text)

    def finish(self) -> Offsets:
        """Close the stream and return the offsets (including the whole-blob hash)."""
        if self._utf8:
            try:
                self._decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self._utf8 = False
        size = self._size
        line_count = self._newlines + (1 if size and self._last != b"\n" else 0)
        line_idx, line_off = self._line_idx, self._line_off
        if len(line_off) > 1 and line_off[-1] >= size:  # checkpoint at EOF: no line starts there
            line_idx, line_off = line_idx[:-1], line_off[:-1]
        if self._utf8:
            chars, char_off = self._chars, self._char_off
        else:
            chars, char_off = size, array("Q", [0])
        return Offsets(
            sha256=self._whole.hexdigest(),
            size=size,
            line_count=line_count,
            char_count=chars,
            is_utf8=self._utf8,
            chunk_size=self.chunk_size,
            digests=bytes(self._digests),
            line_idx=line_idx,
            line_off=line_off,
            char_off=char_off,
            char_step=self.char_step,
            line_spacing=self.line_spacing,
        )


SCAN_BLOCK = 4096


def _skip_chars(data: bytes, pos: int, n: int) -> int:
    """Byte index after skipping ``n`` UTF-8 characters of valid ``data`` from ``pos``.

    Works in blocks so that ASCII stretches cost one ``isascii`` call and other
    stretches one small decode, instead of re-encoding the decoded text.
    """
    size = len(data)
    while n:
        end = min(pos + SCAN_BLOCK, size)
        while end < size and 0x80 <= data[end] <= 0xBF:  # end on a character boundary
            end -= 1
        if end <= pos:
            end = min(pos + SCAN_BLOCK, size)
        block = data[pos:end]
        if block.isascii():
            if len(block) >= n:
                return pos + n
            n -= len(block)
        else:
            text = block.decode("utf-8", "surrogateescape")
            if len(text) > n:
                return pos + len(text[:n].encode("utf-8", "surrogateescape"))
            n -= len(text)
        pos = end
        if pos >= size:
            break
    return pos


def nth_newline(buf: bytes, start: int, n: int) -> int:
    """Index of the ``n``-th (1-based) ``\\n`` at or after ``start``, or -1.

    Gallops and bisects with ``bytes.count`` so skipping thousands of short
    lines costs a few dozen C-level scans instead of a Python loop per line.
    """
    end = len(buf)
    lo, step = start, 256
    while True:
        hi = min(lo + step, end)
        found = buf.count(b"\n", lo, hi)
        if found >= n:
            break
        if hi == end:
            return -1
        n -= found
        lo, step = hi, step * 2
    while hi - lo > 64:
        mid = (lo + hi) // 2
        found = buf.count(b"\n", lo, mid)
        if found >= n:
            hi = mid
        else:
            n -= found
            lo = mid
    pos = lo - 1
    for _ in range(n):
        pos = buf.find(b"\n", pos + 1, hi)
    return pos
