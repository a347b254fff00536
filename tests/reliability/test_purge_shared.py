"""``stowage purge --session A`` never removes bytes another session also holds.

The store keeps one copy per content: when sessions A and B both stored the
same output (or B was granted A's blobs when its conversation continued
under a new id), purging A must leave B's handle readable.  Only what A
alone held is evicted (with a tombstone); A loses its claim to the rest.
"""

from __future__ import annotations

import json

import pytest

from stowage.blobstore import BlobStore, EvictedBlobError, ForeignHandleError
from stowage.command import main
from stowage.context_engine.store_session.fetch_tools import FetchLimits, FetchTools

pytestmark = pytest.mark.reliability

SHARED = b"".join(b"shared build log line %d\n" % i for i in range(2000))  # about 50 KB, as in the attack
ONLY_A = b"output only session A produced\n" * 300
ROTATED = b"output A produced, granted to session A2\n" * 300


def fetch(root, session: str, handle: str) -> dict:
    store = BlobStore(root)
    try:
        return json.loads(
            FetchTools(store, lambda: session, FetchLimits()).handle(
                "stowage_fetch", {"handle": handle, "mode": "range", "start": 1, "count": 3}
            )
        )
    finally:
        store.close()


def test_purging_one_session_keeps_what_another_live_session_holds(home, capsys, figures):
    root = home / "stowage"
    store = BlobStore(root)
    store.mark_session_live("A")
    store.mark_session_live("B")
    shared_a = store.put(SHARED, session_id="A", tool_name="terminal", tool_args="make", kind="spill")
    shared_b = store.put(SHARED, session_id="B", tool_name="terminal", tool_args="make", kind="spill")
    only_a = store.put(ONLY_A, session_id="A", tool_name="terminal", tool_args="ls", kind="spill")
    rotated = store.put(ROTATED, session_id="A", tool_name="read_file", tool_args="x.py", kind="spill")
    store.grant(rotated.handle, "A2")  # granted to another session (a rotation grants all of A's blobs)
    store.mark_session_ended("A")
    assert shared_a.sha256 == shared_b.sha256  # one content-addressed copy

    assert main(["--json", "purge", "--session", "A", "--yes"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["sha256"] for r in data["removed"]] == [only_a.sha256]
    assert data["kept_shared"] == 2

    b_reads = fetch(root, "B", shared_b.handle)
    assert "shared build log line 0" in b_reads["text"]
    assert "output A produced" in fetch(root, "A2", rotated.handle)["text"]
    with pytest.raises(EvictedBlobError):
        store.resolve(only_a.handle, "A")
    with pytest.raises(ForeignHandleError):  # A gave up its claim: it can no longer read the shared copy
        store.resolve(shared_a.handle, "A")
    assert store.stat(shared_b.sha256).size == len(SHARED)
    assert all(p.session_id != "A" for p in store.stat(shared_b.sha256).provenance)
    # A2 was granted a blob B holds too; purging A2 takes its grant away.
    store.grant(shared_b.handle, "A2")
    store.mark_session_ended("A2")
    assert main(["purge", "--session", "A2", "--yes"]) == 0
    capsys.readouterr()
    store.mark_session_live("A2")
    # A rebuilt index (from the provenance records and the grants log on disk) gives neither its claim back.
    store.rebuild_index()
    with pytest.raises(ForeignHandleError):
        store.resolve(shared_a.handle, "A")
    with pytest.raises(ForeignHandleError):
        store.resolve(shared_b.handle, "A2")
    lost = 0 if "shared build log line" in fetch(root, "B", shared_b.handle)["text"] else len(SHARED)

    # Once B and A2 are purged too, nobody holds the bytes: they go.
    store.mark_session_ended("B")
    store.mark_session_ended("A2")
    assert main(["purge", "--session", "B", "--yes"]) == 0
    assert main(["purge", "--session", "A2", "--yes"]) == 0
    capsys.readouterr()
    assert not store.blob_path(shared_b.sha256).exists() and not store.blob_path(rotated.sha256).exists()
    figures.update(purges=3, shared_blobs=2, shared_bytes_lost=lost, removed_alone_held=1)
    store.close()


def test_forced_purge_of_a_live_session_spares_another_sessions_copy(home, capsys):
    root = home / "stowage"
    store = BlobStore(root)
    for session in ("A", "B"):
        store.mark_session_live(session)
        put = store.put(SHARED, session_id=session, tool_name="terminal", kind="spill")
    assert main(["purge", "--session", "A", "--yes", "--force"]) == 0
    assert "kept because another session holds the same content" in capsys.readouterr().out
    assert "shared build log line 1" in fetch(root, "B", put.handle)["text"]
    store.close()
