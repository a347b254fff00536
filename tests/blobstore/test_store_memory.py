"""Putting and reading a large stream needs bounded memory (a memory bound, not a timing)."""

from __future__ import annotations

import shutil
import tracemalloc

import pytest

from stowage.blobstore import BlobStore

MIB = 1 << 20
BLOCK = ("log line with some text, a number 1234567890 and ünïcödé ✓\n" * 1100).encode()[: 64 * 1024]


def stream(total: int):
    sent = 0
    while sent < total:
        piece = BLOCK[: total - sent]
        sent += len(piece)
        yield piece


@pytest.mark.slow
def test_put_256mb_stream_in_bounded_memory(tmp_path):
    store = BlobStore(tmp_path / "store")
    store.put(b"warm up")  # sqlite connection and caches outside the measurement
    try:
        tracemalloc.start()
        res = store.put(stream(256 * MIB), session_id="s", tool_name="gen")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert res.size == 256 * MIB and res.is_utf8
        assert peak < 4 * MIB, f"peak {peak / MIB:.1f} MiB"

        tracemalloc.start()
        lines = 0
        for _ in store.iter_lines(res.sha256, start_line=res.line_count - 50_000):
            lines += 1
        tail = store.read_lines(res.sha256, res.line_count - 2, 3)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert lines == 50_001 and len(tail) == 3
        assert peak < 4 * MIB, f"peak {peak / MIB:.1f} MiB"
    finally:
        tracemalloc.stop()
        shutil.rmtree(store.root)
