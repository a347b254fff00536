"""Fixtures for the ``stowage`` command line: a Hermes home with a filled store.

The store is filled through ``BlobStore.put`` with an injectable clock, so
"old" blobs are really old to the CLI's wall clock and retention can be
exercised without sleeping.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from stowage.blobstore import BlobStore, RetentionPolicy

DAY = 86400.0
LOG = b"".join(b"2026-06-01 line %d status=200\n" % i for i in range(1, 501))
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@dataclass
class Filled:
    """Handles of what ``filled`` stored, by role."""

    home: Path
    root: Path
    store: BlobStore
    log: str
    log_sha: str
    binary: str
    old: str
    old_sha: str
    pruned: str
    log_bytes: bytes = LOG
    binary_bytes: bytes = BINARY


@pytest.fixture
def filled(home) -> Filled:
    """A store at the default place with a log, a binary, a 10-day-old blob and a pruned blob."""
    root = home / "stowage"
    now = time.time()
    old_store = BlobStore(root, clock=lambda: now - 10 * DAY)
    old = old_store.put(
        b"ancient output\n" * 100, session_id="s-old", tool_name="terminal", tool_args="make test", kind="spill"
    )
    old_store.mark_session_ended("s-old")
    old_store.close()
    store = BlobStore(root, RetentionPolicy(ttl_seconds=None))  # keep the old blob for gc to find
    store.mark_session_live("s-live")
    log = store.put(LOG, session_id="s-live", tool_name="terminal", tool_args="pytest -x", kind="spill")
    binary = store.put(BINARY, session_id="s-live", tool_name="browser_screenshot", tool_args="{}", kind="spill")
    pruned = store.put(
        b'{"results": [1, 2, 3]}',
        session_id="s-live",
        tool_name="web_search",
        tool_args='{"query": "stowage"}',
        kind="pruned",
    )
    return Filled(home, root, store, log.handle, log.sha256, binary.handle, old.handle, old.sha256, pruned.handle)
