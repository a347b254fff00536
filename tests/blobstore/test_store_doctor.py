"""Store doctor: each kind of damage is found, classified and (when safe) repaired."""

from __future__ import annotations

import json
import os

import pytest

from stowage.blobstore import BlobStore, CorruptBlobError, EvictedBlobError


@pytest.fixture
def store(tmp_path):
    st = BlobStore(tmp_path / "store")
    st.put(b"healthy blob\n" * 1000, session_id="s", tool_name="terminal")
    return st


def check(store, kind, severity, consistent):
    report = store.doctor(temp_grace_seconds=0)
    assert report.kinds() == {kind}, report.to_dict()
    assert {i.severity for i in report.issues} == {severity}
    assert report.consistent is consistent and not report.clean
    json.dumps(report.to_dict())
    fixed = store.doctor(repair=True, temp_grace_seconds=0)
    assert all(i.repaired for i in fixed.issues), fixed.to_dict()
    after = store.doctor(temp_grace_seconds=0)
    assert after.clean, after.to_dict()
    return fixed


def test_fresh_store_is_clean(store):
    report = store.doctor()
    assert report.clean and report.consistent and report.blobs_checked == 1
    assert report.bytes_checked == 13_000


def test_corrupt_blob_is_quarantined_and_tombstoned(store):
    res = store.put(b"will rot\n" * 5000, tool_name="web_extract", tool_args="https://x")
    with open(store.blob_path(res.sha256), "r+b") as fh:
        fh.seek(100)
        fh.write(b"#")
    fixed = check(store, "corrupt-blob", "error", False)
    assert fixed.issues[0].subject == res.sha256
    assert [p.name[:64] for p in store.quarantine_dir.iterdir()] == [res.sha256]
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(res.handle)
    assert "web_extract" in str(info.value) and "quarantine" in str(info.value)


def test_missing_blob_file(store):
    res = store.put(b"vanishing")
    os.unlink(store.blob_path(res.sha256))
    with pytest.raises(CorruptBlobError):
        store.read_bytes(res.sha256)
    check(store, "missing-blob", "error", False)
    assert store.tombstone(res.sha256).reason == "missing"


def test_orphan_blob_is_reindexed_with_its_recorded_provenance(store):
    res = store.put(b"orphaned\n", session_id="s1", tool_name="grep", content_type="log")
    with store.index.write() as tx:
        tx.delete_blob(res.sha256)
    check(store, "orphan-blob", "warning", True)
    info = store.stat(res.sha256)
    assert info.content_type == "log" and info.line_count == 1
    assert [(p.session_id, p.tool_name) for p in info.provenance] == [("s1", "grep")]
    assert store.resolve(res.handle, "s1") == res.sha256


def test_orphan_blob_without_records_is_reindexed_as_unknown(store):
    res = store.put(b"orphaned\n")
    with store.index.write() as tx:
        tx.delete_blob(res.sha256)
    store.record_path(res.sha256).unlink()
    check(store, "orphan-blob", "warning", True)
    info = store.stat(res.sha256)
    assert info.content_type == "unknown" and info.line_count == 1
    assert store.read_bytes(res.sha256) == b"orphaned\n"


def test_stale_temp_files_are_removed_but_live_ones_kept(store):
    stale = store.tmp_dir / "put-1-dead.tmp"
    stale.write_bytes(b"half a blob")
    os.chmod(stale, 0o600)
    from stowage.blobstore.fsutil import create_temp

    fd, live = create_temp(store.tmp_dir, "put")  # held (locked) by this process
    try:
        report = store.doctor(temp_grace_seconds=0)
        assert report.kinds() == {"stale-temp"} and report.consistent
        assert report.temp_in_progress == 1
        store.doctor(repair=True, temp_grace_seconds=0)
        assert not stale.exists() and live.exists()
    finally:
        os.close(fd)


def test_young_temp_files_count_as_in_progress(store):
    (store.tmp_dir / "put-1-new.tmp").write_bytes(b"x")
    os.chmod(store.tmp_dir / "put-1-new.tmp", 0o600)
    report = store.doctor()
    assert report.clean and report.temp_in_progress == 1


def test_bad_permissions_are_fixed(store):
    res = store.put(b"private")
    os.chmod(store.blob_path(res.sha256), 0o644)
    os.chmod(store.blobs_dir, 0o755)
    fixed = check(store, "bad-permissions", "warning", True)
    assert len(fixed.issues) == 2
    assert os.stat(store.blob_path(res.sha256)).st_mode & 0o777 == 0o600


def test_missing_and_damaged_sidecars_are_rebuilt(store):
    a = store.put(b"a\n" * 10)
    b = store.put(b"b\n" * 10)
    good = store.sidecar_path(b.sha256).read_bytes()
    store.sidecar_path(a.sha256).unlink()
    store.sidecar_path(b.sha256).write_bytes(good[:20])
    fixed = check(store, "bad-sidecar", "warning", True)
    assert len(fixed.issues) == 2
    assert store.sidecar_path(b.sha256).read_bytes() == good


def test_orphan_sidecar_and_stray_file(store):
    (store.blobs_dir / "ab").mkdir(mode=0o700)
    (store.blobs_dir / "ab" / ("ab" * 32 + ".off")).write_bytes(b"junk")
    os.chmod(store.blobs_dir / "ab" / ("ab" * 32 + ".off"), 0o600)
    check(store, "orphan-sidecar", "warning", True)
    stray = store.blobs_dir / "notes.txt"
    stray.write_text("hello")
    os.chmod(stray, 0o600)
    check(store, "stray-file", "warning", True)
    assert not stray.exists() and any(p.name.startswith("notes.txt") for p in store.quarantine_dir.iterdir())


def test_metadata_mismatch(store):
    res = store.put(b"x\ny\n")
    with store.index.write() as tx:
        tx.execute("UPDATE blobs SET line_count=99 WHERE sha=?", (res.sha256,))
    check(store, "metadata-mismatch", "error", False)
    assert store.stat(res.sha256).line_count == 2


def test_evicted_leftover_file(store):
    res = store.put(b"evicted but lingering")
    data_path = store.blob_path(res.sha256)
    saved = data_path.read_bytes()
    store.evict(res.handle)
    data_path.write_bytes(saved)
    os.chmod(data_path, 0o600)
    check(store, "evicted-leftover", "warning", True)
    assert not data_path.exists()


def test_interrupted_eviction_is_restored(store):
    res = store.put(b"half evicted")
    # a process died after moving the file to trash/ but before committing
    os.replace(store.blob_path(res.sha256), store.trash_dir / f"{res.sha256}-1-dead")
    check(store, "interrupted-eviction", "warning", True)
    assert store.read_bytes(res.sha256) == b"half evicted"


def test_reads_restore_an_interrupted_eviction_themselves(store):
    res = store.put(b"half evicted")
    os.replace(store.blob_path(res.sha256), store.trash_dir / f"{res.sha256}-1-dead")
    assert store.read_bytes(res.sha256) == b"half evicted"
    assert store.doctor().clean


def test_dangling_rows(store):
    with store.index.write() as tx:
        tx.add_provenance("cd" * 32, "s", "t", "", "spill", 0.0)
    check(store, "dangling-rows", "warning", True)


def test_quick_mode_skips_hashing(store):
    report = store.doctor(verify=False)
    assert report.clean and report.bytes_checked == 0 and not report.verified


def test_an_orphan_preview_is_reindexed_with_the_blob_it_stands_for(store):
    original = store.put(b"the whole output\n" * 50, session_id="s1", kind="spill")
    preview = store.put(b"an excerpt\n", session_id="s1", kind="preview", source=original.sha256)
    with store.index.write() as tx:
        tx.delete_blob(preview.sha256)
    check(store, "orphan-blob", "warning", True)
    assert store.source_handle(preview.sha256) == original.handle  # read back from the blob's records
