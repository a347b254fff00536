"""A writer killed with SIGKILL at random points never leaves a resolvable partial blob."""

from __future__ import annotations

import hashlib
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import stowage_dev.store_workers as workers
from stowage.blobstore import BlobStore

pytestmark = pytest.mark.slow

ROUNDS = 24
CAP = 12 * workers.MIB


def check_every_resolvable_blob(store: BlobStore) -> int:
    """Each indexed blob is complete (its provenance names the full payload) and verifies."""
    infos = store.list_blobs(limit=10**6)
    for info in infos:
        seed, k = map(int, info.provenance[0].tool_args.split(":"))
        assert info.sha256 == workers.expected_sha(seed, k), "partial blob is resolvable"
        assert store.resolve(info.handle) == info.sha256
        digest = hashlib.sha256()
        with store.open_stream(info.sha256) as stream:  # verifies chunks and the whole hash
            for piece in iter(lambda: stream.read(1 << 20), b""):
                digest.update(piece)
        assert digest.hexdigest() == info.sha256
    return len(infos)


def test_sigkill_during_large_puts(tmp_path):
    root = tmp_path / "store"
    BlobStore(root)  # create the schema once
    rng = random.Random(20240607)
    seen_temps = 0
    for seed in range(ROUNDS):
        proc = subprocess.Popen(
            [sys.executable, "-m", workers.__name__, str(root), str(seed), str(CAP)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert proc.stdout.readline().strip() == b"ready", proc.stderr.read()
            time.sleep(rng.uniform(0.0, 0.2))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        store = BlobStore(root)
        check_every_resolvable_blob(store)
        report = store.doctor(temp_grace_seconds=0)
        assert report.consistent, report.to_dict()
        assert report.kinds() <= {
            "stale-temp",
            "orphan-blob",
            "orphan-sidecar",
            "interrupted-eviction",
            "trash-leftover",
            "bad-sidecar",
            "evicted-leftover",
            "orphan-record",
        }
        seen_temps += "stale-temp" in report.kinds()
        store.close()
    assert seen_temps > 0  # the kills did land mid-write

    store = BlobStore(root)
    fixed = store.doctor(repair=True, temp_grace_seconds=0)
    assert all(issue.repaired for issue in fixed.issues), fixed.to_dict()
    final = store.doctor(temp_grace_seconds=0)
    assert final.clean, final.to_dict()
    assert list(store.tmp_dir.iterdir()) == [] and list(store.trash_dir.iterdir()) == []
    for info in store.list_blobs(limit=10**6):  # re-indexed orphans are complete too
        if not info.provenance:
            assert hashlib.sha256(store.read_bytes(info.sha256)).hexdigest() == info.sha256


def test_a_put_into_a_new_shard_makes_the_shard_itself_durable(tmp_path, monkeypatch):
    import stowage.blobstore.store as store_module

    synced: list[Path] = []
    real = store_module.fsync_dir
    monkeypatch.setattr(store_module, "fsync_dir", lambda path: (synced.append(Path(path)), real(path)))
    store = BlobStore(tmp_path / "store")
    first = store.put(b"first")
    assert synced == [store.blobs_dir, store.blob_path(first.sha256).parent]  # blobs/ before the blob's rename
    synced.clear()
    shard = first.sha256[:2]
    same_shard = next(
        d
        for d in (str(n).encode() for n in range(100_000))
        if hashlib.sha256(d).hexdigest()[:2] == shard and d != b"first"
    )
    store.put(same_shard)
    assert synced == [store.blob_path(first.sha256).parent]  # an existing shard: one folder fsync, as before


def _count_syncs(monkeypatch) -> list[str]:
    import os

    import stowage.blobstore.store as store_module

    calls: list[str] = []
    real_fsync = os.fsync

    def sync_dir(path) -> None:
        calls.append("dir")
        fd = os.open(path, os.O_RDONLY)
        try:
            real_fsync(fd)
        finally:
            os.close(fd)

    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("file"), real_fsync(fd))[1])
    monkeypatch.setattr(store_module, "fsync_dir", sync_dir)
    return calls


def test_a_dedup_put_of_an_intact_copy_does_no_fsync(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "store")
    first = store.put(b"same bytes\n" * 1000, session_id="a")
    inode = store.blob_path(first.sha256).stat().st_ino
    calls = _count_syncs(monkeypatch)
    again = store.put(b"same bytes\n" * 1000, session_id="b")
    assert calls == [] and again.deduplicated and again.sha256 == first.sha256
    assert store.blob_path(first.sha256).stat().st_ino == inode  # the durable copy was left in place
    assert {p.session_id for p in store.stat(first.sha256).provenance} == {"a", "b"}
    assert list(store.tmp_dir.iterdir()) == []  # the unused staged copy is gone


def test_a_dedup_put_that_loses_its_intact_copy_replaces_it_durably(tmp_path, monkeypatch):
    import stowage.blobstore.store as store_module

    store = BlobStore(tmp_path / "store")
    first = store.put(b"payload\n" * 1000)
    # the copy read intact is swapped before the put takes the lock (another writer, an eviction ...)
    monkeypatch.setattr(store_module, "_intact_copy", lambda path, off: -1)
    calls = _count_syncs(monkeypatch)
    store.put(b"payload\n" * 1000)
    assert calls == ["file", "dir"]  # staged bytes fsync'ed before the rename, then the folder
    assert store.read_bytes(first.sha256) == b"payload\n" * 1000
