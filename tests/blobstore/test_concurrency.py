"""Several processes writing, reading and evicting on one small store at once."""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
import time
from pathlib import Path

import pytest

import stowage_dev.store_workers as workers
from stowage.blobstore import BlobStore, EvictedBlobError

CAP = 3 * workers.MIB


@pytest.mark.slow
def test_processes_share_one_store_under_a_small_cap(tmp_path):
    root = str(tmp_path / "store")
    parent = BlobStore(root, workers.shared_policy(CAP))
    parent.mark_session_live("keeper")
    keeper = {parent.put(f"pinned {i}\n".encode() * 2000, session_id="keeper").sha256 for i in range(5)}
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        pending = pool.map_async(workers.mp_worker, [(root, w, 60, CAP) for w in range(4)])
        checks = 0
        while not pending.ready():  # the doctor runs next to live writers: no false errors
            report = parent.doctor(verify=checks % 4 == 0)
            assert report.consistent, report.to_dict()
            checks += 1
            time.sleep(0.05)
        results = pending.get()
    assert checks > 0

    assert [r["errors"] for r in results] == [[]] * 4
    for r in results:
        keeper |= set(r["keeper"])
    fetched = {sha for r in results for sha in r["fetched"]}
    puts = {sha: digest for r in results for sha, digest in r["puts"].items()}
    assert len(puts) == 240
    assert sum(r["evicted_reads"] for r in results) > 0 or parent.stats()["tombstones"] > 0

    # protected blobs (live session, recently fetched) were never evicted
    for sha in keeper | fetched:
        assert hashlib.sha256(parent.read_bytes(sha)).hexdigest() == sha
    # everything else is either intact or properly tombstoned: never lost or corrupt
    alive = evicted = 0
    for sha, digest in puts.items():
        try:
            assert hashlib.sha256(parent.read_bytes(sha)).hexdigest() == digest == sha
            alive += 1
        except EvictedBlobError as exc:
            assert exc.tombstone.reason == "size-cap" and exc.tombstone.tool_name == "gen"
            evicted += 1
    assert alive and evicted
    stats = parent.stats()
    assert stats["blob_count"] == alive + len(keeper)
    parent.gc()
    assert parent.stats()["total_bytes"] <= CAP
    report = parent.doctor()
    assert report.clean, report.to_dict()
    assert list(Path(root, "tmp").iterdir()) == [] and list(Path(root, "trash").iterdir()) == []


def test_threads_share_one_store_object(tmp_path):
    store = BlobStore(tmp_path / "store", workers.shared_policy(1 * workers.MIB))
    errors: list[str] = []

    def run(n: int) -> None:
        try:
            for i in range(25):
                data = f"thread {n} item {i}\n".encode() * 3000
                res = store.put(data, session_id=f"t{n}")
                store.mark_session_ended(f"t{n}")
                try:
                    if store.read_bytes(res.sha256) != data:
                        errors.append("mismatch")
                except EvictedBlobError:
                    pass
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.doctor().clean
