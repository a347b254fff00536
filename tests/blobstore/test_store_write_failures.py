"""A put that cannot be written raises StoreWriteError and leaves no trace."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest

from stowage.blobstore import BlobStore, StoreWriteError
from stowage.blobstore.index import Tx


@pytest.fixture
def store(tmp_path):
    st = BlobStore(tmp_path / "store")
    st.put(b"already here\n", session_id="s")
    return st


def snapshot(st: BlobStore):
    files = sorted(
        str(p.relative_to(st.root))
        for p in st.root.rglob("*")
        if p.is_file() and not p.name.startswith("index.sqlite3")
    )
    stats = st.stats()
    return files, stats["blob_count"], stats["total_bytes"], stats["by_kind"]


PAYLOAD = b"0123456789abcdef\n" * 100_000  # 1.7 MB, several chunks


def fail_after(real, calls_ok: int, err: int):
    state = {"n": 0}

    def fake(*args, **kwargs):
        state["n"] += 1
        if state["n"] > calls_ok:
            raise OSError(err, os.strerror(err))
        return real(*args, **kwargs)

    return fake


@pytest.mark.parametrize("calls_ok", [0, 3])
def test_disk_full_during_write(store, monkeypatch, calls_ok):
    before = snapshot(store)
    monkeypatch.setattr(os, "write", fail_after(os.write, calls_ok, errno.ENOSPC))
    with pytest.raises(StoreWriteError) as info:
        store.put(PAYLOAD, session_id="s")
    monkeypatch.undo()
    assert "disk is full" in str(info.value) and "Nothing was stored" in str(info.value)
    assert snapshot(store) == before
    assert list(store.tmp_dir.iterdir()) == []


def test_fsync_failure(store, monkeypatch):
    before = snapshot(store)
    monkeypatch.setattr(os, "fsync", fail_after(os.fsync, 0, errno.EIO))
    with pytest.raises(StoreWriteError):
        store.put(PAYLOAD)
    monkeypatch.undo()
    assert snapshot(store) == before


def test_read_only_filesystem(store, monkeypatch):
    before = snapshot(store)
    real_open = os.open

    def ro_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", ro_open)
    with pytest.raises(StoreWriteError) as info:
        store.put(PAYLOAD)
    monkeypatch.undo()
    assert "read-only" in str(info.value)
    assert snapshot(store) == before


def test_permission_denied_on_rename(store, monkeypatch):
    before = snapshot(store)
    monkeypatch.setattr(os, "replace", fail_after(os.replace, 1, errno.EACCES))  # sidecar ok, blob not
    with pytest.raises(StoreWriteError) as info:
        store.put(PAYLOAD)
    monkeypatch.undo()
    assert "permission denied" in str(info.value)
    assert snapshot(store) == before


def test_index_failure_after_rename_removes_the_placed_files(store, monkeypatch):
    before = snapshot(store)

    def full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Tx, "insert_blob", full)
    with pytest.raises(StoreWriteError) as info:
        store.put(PAYLOAD, session_id="s")
    monkeypatch.undo()
    assert "database or disk is full" in str(info.value)
    assert snapshot(store) == before
    assert store.put(PAYLOAD).size == len(PAYLOAD)  # and the store still works


def test_failed_dedupe_put_keeps_the_existing_blob(store, monkeypatch):
    res = store.put(PAYLOAD, tool_name="first")
    before = snapshot(store)

    def broken(self, *args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(Tx, "add_provenance", broken)
    with pytest.raises(StoreWriteError):
        store.put(PAYLOAD, tool_name="second")
    monkeypatch.undo()
    assert snapshot(store) == before
    assert store.read_bytes(res.sha256) == PAYLOAD
    assert [p.tool_name for p in store.stat(res.sha256).provenance] == ["first"]


def test_failing_source_propagates_its_own_error(store):
    def source():
        yield b"x" * 300_000
        raise ValueError("tool stream broke")

    before = snapshot(store)
    with pytest.raises(ValueError, match="tool stream broke"):
        store.put(source())
    assert snapshot(store) == before


def test_unusable_index_gives_store_errors(tmp_path):
    from stowage.blobstore import StoreIndexError

    root = tmp_path / "broken"
    BlobStore(root)
    (root / "index.sqlite3").write_bytes(b"this is not a database" * 100)
    st = BlobStore(root)
    with pytest.raises(StoreIndexError) as info:
        st.resolve("0123456789abcdef")
    assert info.value.code == "index_unavailable"
    with pytest.raises(StoreWriteError):
        st.put(b"output")
    assert list(st.tmp_dir.iterdir()) == []
    assert [p for p in st.blobs_dir.rglob("*") if p.is_file()] == []
