"""BlobStore basics: puts of every input shape, dedupe, metadata, layout, copying."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import pickle
import stat

import pytest

from stowage.blobstore import (
    BlobStore,
    EvictedBlobError,
    MalformedHandleError,
    RetentionPolicy,
    StoreWriteError,
    UnknownHandleError,
)
from stowage_dev.clock import ManualClock


@pytest.fixture
def store(tmp_path):
    return BlobStore(tmp_path / "store", clock=ManualClock())


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_put_bytes_roundtrip_and_metadata(store):
    data = "alpha\nbéta\r\ngamma ✓".encode()
    res = store.put(data, session_id="s1", tool_name="terminal", tool_args="cat x", kind="spill", content_type="log")
    assert res.sha256 == sha(data)
    assert res.handle == res.sha256[:16]
    assert (res.size, res.line_count, res.char_count, res.is_utf8) == (len(data), 3, 19, True)
    assert res.content_type == "log" and not res.deduplicated
    assert store.read_bytes(res.sha256) == data
    info = store.stat(res.sha256)
    assert info.size == len(data) and info.line_count == 3 and info.char_count == 19
    assert info.created_at == info.last_access == 1_700_000_000.0
    assert info.fetch_count == 0 and info.last_fetch is None
    (prov,) = info.provenance
    assert (prov.session_id, prov.tool_name, prov.tool_args, prov.kind) == ("s1", "terminal", "cat x", "spill")
    json.dumps(info.to_dict())
    json.dumps(res.to_dict())


def test_every_input_shape_stores_the_same_blob(store):
    data = os.urandom(700_000)
    pieces = [data[:10], data[10:400_000], data[400_000:400_001], data[400_001:]]
    results = [
        store.put(data),
        store.put(bytearray(data)),
        store.put(memoryview(data)),
        store.put(io.BytesIO(data)),
        store.put(iter(pieces)),
        store.put(pieces),
    ]
    assert {r.sha256 for r in results} == {sha(data)}
    assert [r.deduplicated for r in results] == [False] + [True] * 5
    assert store.read_bytes(results[0].sha256) == data
    assert store.put("héllo").sha256 == sha("héllo".encode())


def test_short_reads_from_pipes_are_reassembled(store):
    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data, self.pos = data, 0

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            out = self.data[self.pos : self.pos + min(n, 1000)]
            self.pos += len(out)
            return out

    data = b"x" * 600_000 + b"\n" + b"y" * 10
    res = store.put(Trickle(data))
    assert res.sha256 == sha(data) and store.read_bytes(res.sha256) == data


@pytest.mark.parametrize("bad", [123, None, ["text chunks"], io.StringIO("text")])
def test_wrong_input_types_raise_type_error_and_leave_nothing(store, bad):
    with pytest.raises(TypeError):
        store.put(bad)
    assert list(store.tmp_dir.iterdir()) == []
    assert store.stats()["blob_count"] == 0


def test_dedupe_keeps_one_file_and_folds_provenance(store):
    data = b"same output\n" * 100
    a = store.put(data, session_id="s1", tool_name="grep", tool_args="-r foo")
    b = store.put(data, session_id="s2", tool_name="grep", tool_args="-r foo", kind="pruned")
    c = store.put(data, session_id="s1", tool_name="grep", tool_args="-r foo")
    assert a.sha256 == b.sha256 == c.sha256 and b.deduplicated and c.deduplicated
    files = [p for p in store.blobs_dir.rglob("*") if p.is_file() and not p.name.endswith((".off", ".prov"))]
    assert files == [store.blob_path(a.sha256)]
    prov = {(p.session_id, p.kind): p.count for p in store.stat(a.sha256).provenance}
    assert prov == {("s1", "blob"): 2, ("s2", "pruned"): 1}  # "blob": the store's neutral default kind
    assert store.stats()["blob_count"] == 1


def test_content_type_of_first_put_is_kept(store):
    first = store.put(b"{}", content_type="json")
    again = store.put(b"{}", content_type="text")
    assert first.content_type == again.content_type == "json"


def test_short_handle_grows_past_a_shared_prefix(store):
    res = store.put(b"payload")
    twin = res.sha256[:20] + ("0" if res.sha256[20] != "0" else "1") * 44
    with store.index.write() as tx:  # a tombstone sharing 20 hex chars with the blob
        tx.execute("INSERT INTO tombstones VALUES(?,0,'',0,'manual','','','',NULL,'',0,'[]','[]')", (twin,))
    assert store.short_handle(res.sha256) == res.sha256[:21]
    assert store.resolve(res.sha256[:21]) == res.sha256
    assert store.put(b"payload").handle == res.sha256[:21]


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_files_are_0600_and_folders_0700_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        st = BlobStore(tmp_path / "deep" / "store")
        res = st.put(b"secret token=abc\n", session_id="s")
        st.mark_session_live("s")
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    for folder in (st.root, st.blobs_dir, st.tmp_dir, st.trash_dir, st.quarantine_dir, st.blob_path(res.sha256).parent):
        assert mode(folder) == 0o700, folder
    for path in (st.blob_path(res.sha256), st.sidecar_path(res.sha256), st.index_path):
        assert mode(path) == 0o600, path
    for extra in st.root.glob("index.sqlite3-*"):
        assert mode(extra) & 0o077 == 0, extra


def test_empty_blob(store):
    res = store.put(b"")
    assert (res.size, res.line_count, res.char_count) == (0, 0, 0)
    assert store.read_bytes(res.sha256) == b""
    assert store.read_lines(res.sha256, 1, 10) == []
    assert store.read_chars(res.sha256, 0, 10) == ""
    assert list(store.iter_lines(res.sha256)) == []


def test_non_utf8_blob_says_so(store):
    data = b"ok line\n\xff\xfe binary \x80\n"
    res = store.put(data)
    assert res.is_utf8 is False and res.char_count is None and res.line_count == 2
    info = store.stat(res.sha256)
    assert info.is_utf8 is False and info.char_count is None


def test_record_fetch_counts_and_touches(store):
    res = store.put(b"x")
    store.clock.t += 50
    assert store.record_fetch(res.sha256) is True
    assert store.record_fetch(res.sha256) is True
    info = store.stat(res.sha256)
    assert info.fetch_count == 2 and info.last_fetch == info.last_access == store.clock.t
    assert store.record_fetch("0" * 64) is False


def test_stats_and_list_blobs(store):
    a = store.put(b"a" * 10, session_id="s1", kind="spill", content_type="text")
    store.clock.t += 1
    b = store.put(b"b" * 20, session_id="s1", kind="pruned", content_type="json")
    store.clock.t += 1
    c = store.put(b"c" * 30, session_id="s2", kind="window", content_type="text")
    store.clock.t += 1
    store.record_fetch(a.sha256)
    store.grant(c.handle, "s1")
    stats = store.stats()
    assert stats["total_bytes"] == 60 and stats["blob_count"] == 3
    assert stats["by_kind"] == {"spill": 1, "pruned": 1, "window": 1}
    assert stats["by_content_type"] == {"text": 2, "json": 1}
    assert stats["fetch_total"] == 1 and stats["fetched_blobs"] == 1
    assert stats["sessions"] == 2 and stats["tombstones"] == 0
    json.dumps(stats)
    order = [i.sha256 for i in store.list_blobs()]
    assert order == [a.sha256, c.sha256, b.sha256]  # most recently used first
    assert {i.sha256 for i in store.list_blobs(session_id="s1")} == {a.sha256, b.sha256, c.sha256}
    assert [i.sha256 for i in store.list_blobs(session_id="s2")] == [c.sha256]
    assert [i.sha256 for i in store.list_blobs(kind="pruned")] == [b.sha256]
    assert {i.sha256 for i in store.list_blobs(content_type="text")} == {a.sha256, c.sha256}
    assert len(store.list_blobs(limit=2)) == 2
    assert all(i.handle == i.sha256[:16] for i in store.list_blobs())


def test_stat_of_unknown_and_evicted(store):
    with pytest.raises(UnknownHandleError):
        store.stat("ab" * 32)
    res = store.put(b"x", tool_name="t")
    store.evict(res.handle)
    with pytest.raises(EvictedBlobError):
        store.stat(res.sha256)


def test_deepcopy_shares_and_pickle_reopens(store):
    assert copy.deepcopy(store) is store
    assert copy.copy(store) is store
    holder = {"store": store, "other": [1, 2]}
    assert copy.deepcopy(holder)["store"] is store
    res = store.put(b"pickled")
    clone = pickle.loads(pickle.dumps(BlobStore(store.root, RetentionPolicy(ttl_seconds=5))))
    assert clone.root == store.root and clone.policy.ttl_seconds == 5
    assert clone.read_bytes(res.sha256) == b"pickled"


def test_forked_child_uses_its_own_connection(store):
    parent = store.put(b"before fork")
    pid = os.fork()
    if pid == 0:  # child: must not reuse the parent's sqlite connection
        try:
            ok = store.read_bytes(parent.sha256) == b"before fork"
            store.put(b"from child", session_id="child")
            os._exit(0 if ok else 1)
        except BaseException:  # noqa: BLE001 - the forked child must exit, whatever it raised
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.read_bytes(sha(b"from child")) == b"from child"
    assert store.put(b"after fork").size == 10


def test_unwritable_root_raises_store_write_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreWriteError):
        BlobStore(blocker / "store")


STORAGE_MODULES = [
    "store",
    "access",
    "rebuild",
    "index",
    "offsets",
    "retention",
    "errors",
    "handles",
    "doctor",
    "maintenance",
    "fsutil",
    "reader",
    "records",
    "safe_json",
    "window",
    "writer",
    "__init__",
]


def test_storage_modules_use_only_stdlib_and_relative_imports():
    import ast
    import sys
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "blobstore"
    storage = set(STORAGE_MODULES) - {"__init__"}
    for name in STORAGE_MODULES:
        tree = ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    assert top in sys.stdlib_module_names, f"{name}.py imports {alias.name}"
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    top = (node.module or "").split(".")[0]
                    assert top in sys.stdlib_module_names or top == "__future__", f"{name}.py imports {node.module}"
                else:  # storage code depends on storage code only
                    targets = [node.module] if node.module else [a.name for a in node.names]
                    assert node.level == 1 and all(t.split(".")[0] in storage for t in targets), (
                        f"{name}.py imports .{targets}"
                    )


def test_all_sql_of_the_store_is_in_the_index_module():
    """Other modules ask ``Tx`` for what they need; none runs SQL of its own (issue 21)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("blobstore", "command", "context_engine", "host"):
        for path in sorted((root / folder).rglob("*.py")):
            if path == root / "blobstore" / "index.py" or "replay" in path.parts:
                continue  # (replay reads Hermes's own state.db, not the store)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("execute", "executemany", "executescript")
                ):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not offenders, offenders


def test_a_put_records_the_blob_it_stands_for_and_hands_back_its_handle(store):
    original = store.put(b"the whole output\n" * 100, session_id="s1", kind="spill")
    preview = store.put(b"an excerpt of it\n", session_id="s1", kind="preview", source=original.sha256)
    plain = store.put(b"just an output\n", session_id="s1", kind="output")
    assert store.source_handle(preview.sha256) == original.handle
    assert store.source_handle(plain.sha256) is None and store.source_handle(original.sha256) is None
    records = [json.loads(line) for line in store.record_path(preview.sha256).read_text().splitlines()]
    assert records[-1]["source"] == original.sha256  # the link travels in the blob's records too
    assert "source" not in json.loads(store.record_path(plain.sha256).read_text().splitlines()[-1])
    with pytest.raises(MalformedHandleError):
        store.put(b"a preview of nothing\n", kind="preview", source="not a sha")


def test_an_index_written_before_the_source_column_gains_it_and_keeps_its_rows(tmp_path):
    import sqlite3

    root = tmp_path / "store"
    old = BlobStore(root)
    earlier = old.put(b"an excerpt written by an older Stowage\n", session_id="s1", kind="preview")
    old.close()
    conn = sqlite3.connect(root / "index.sqlite3")
    conn.execute("ALTER TABLE provenance DROP COLUMN source")
    conn.execute("PRAGMA user_version=3")
    conn.commit()
    conn.close()
    store = BlobStore(root)
    assert store.source_handle(earlier.sha256) is None  # written before: no link, and nothing fails
    original = store.put(b"the whole output\n", session_id="s1", kind="spill")
    preview = store.put(b"an excerpt\n", session_id="s1", kind="preview", source=original.sha256)
    assert store.source_handle(preview.sha256) == original.handle
    assert [p.kind for p in store.stat(earlier.sha256).provenance] == ["preview"]
