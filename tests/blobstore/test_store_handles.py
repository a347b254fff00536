"""Handle validation, prefix resolution and session scoping."""

from __future__ import annotations

import pytest

from stowage.blobstore import (
    AmbiguousHandleError,
    BlobStore,
    EvictedBlobError,
    ForeignHandleError,
    HandleError,
    MalformedHandleError,
    PathLikeHandleError,
    UnknownHandleError,
    errors,
)
from stowage_dev.clock import ManualClock


@pytest.fixture
def store(tmp_path):
    return BlobStore(tmp_path / "store", clock=ManualClock())


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("0123456789abcde", "too-short"),
        ("abc", "too-short"),
        ("0" * 65, "too-long"),
        ("0123456789abcdefg", "non-hex"),
        ("0123-4567-89ab-cdef", "non-hex"),
        ("blob:0123456789abcdef", "non-hex"),
        ("0123456789abcdef\n0000", "non-hex"),
        (None, "not-text"),
        (1234567890123456, "not-text"),
        (b"0123456789abcdef", "not-text"),
    ],
)
def test_malformed_handles_say_what_is_wrong(store, raw, reason):
    with pytest.raises(MalformedHandleError) as info:
        store.resolve(raw)
    err = info.value
    assert not isinstance(err, PathLikeHandleError)
    assert err.reason == reason and err.code == "malformed_handle"
    assert "16 to 64 hexadecimal characters" in str(err)


@pytest.mark.parametrize(
    "raw",
    [
        "../x",
        "/etc/passwd",
        "..",
        "~/.ssh/id_rsa",
        "0123456789abcdef/../../etc",
        "0123456789abcdef\x000000",
        "..\\..\\windows\\system32",
        "C:\\blobs\\0123456789abcdef",
        "./0123456789abcdef",
        ".0123456789abcdef",
    ],
)
def test_path_like_input_is_refused_before_any_lookup(store, raw, monkeypatch):
    class Exploding:
        def __getattr__(self, name):
            raise AssertionError("the index must not be touched")

    monkeypatch.setattr(store, "_index", Exploding())
    import os

    def no_fs(*a, **k):
        raise AssertionError("the filesystem must not be touched")

    for name in ("stat", "open", "lstat", "listdir", "scandir"):
        monkeypatch.setattr(os, name, no_fs)
    with pytest.raises(PathLikeHandleError) as info:
        store.resolve(raw, session_id="s")
    monkeypatch.undo()
    assert info.value.code == "path_like_handle" and info.value.reason == "path-like"
    assert "file path" in str(info.value)


def test_read_apis_refuse_paths_and_prefixes(store):
    res = store.put(b"data")
    with pytest.raises(PathLikeHandleError):
        store.read_bytes("../../etc/passwd")
    with pytest.raises(MalformedHandleError) as info:
        store.read_lines(res.handle)
    assert info.value.reason == "not-full"


def test_case_and_whitespace_are_forgiven(store):
    res = store.put(b"data")
    assert store.resolve(f"  {res.handle.upper()}\n") == res.sha256
    assert store.resolve(res.sha256) == res.sha256
    assert store.resolve(res.sha256[:40]) == res.sha256


def test_unknown_handle(store):
    store.put(b"data")
    with pytest.raises(UnknownHandleError) as info:
        store.resolve("f" * 16)
    assert info.value.code == "unknown_handle" and "f" * 16 in str(info.value)


def test_ambiguous_prefix(store):
    prefix = "abcdef0123456789"
    with store.index.write() as tx:
        for tail in ("0" * 48, "1" * 48):
            tx.execute("INSERT INTO blobs VALUES(?,1,1,1,1,'text',0,0,NULL,0,NULL)", (prefix + tail,))
    with pytest.raises(AmbiguousHandleError) as info:
        store.resolve(prefix)
    assert info.value.matches == 2 and "more of the hash" in str(info.value)
    assert store.resolve(prefix + "1") == prefix + "1" * 48


def test_sessions_read_only_their_own_blobs(store):
    mine = store.put(b"mine", session_id="s1", tool_name="t")
    theirs = store.put(b"theirs", session_id="s2", tool_name="t")
    assert store.resolve(mine.handle, session_id="s1") == mine.sha256
    with pytest.raises(ForeignHandleError) as info:
        store.resolve(theirs.handle, session_id="s1")
    with pytest.raises(UnknownHandleError) as unknown:
        store.resolve(theirs.handle[:-1] + ("0" if theirs.handle[-1] != "0" else "1"), session_id="s1")
    # "not yours" answers exactly like "not here": no existence oracle
    assert str(info.value) == str(unknown.value).replace(unknown.value.handle, theirs.handle)
    assert info.value.code == unknown.value.code == "unknown_handle"
    assert store.resolve(theirs.handle) == theirs.sha256  # operator access is unscoped


def test_grants_and_session_rotation(store):
    a = store.put(b"a", session_id="old")
    b = store.put(b"b", session_id="other")
    orphan = store.put(b"no session")
    with pytest.raises(ForeignHandleError):
        store.resolve(orphan.handle, session_id="old")
    assert store.grant(orphan.handle, "old") == orphan.sha256
    assert store.resolve(orphan.handle, session_id="old") == orphan.sha256
    assert store.grant_session("old", "new") == 2
    assert store.resolve(a.handle, session_id="new") == a.sha256
    assert store.resolve(orphan.handle, session_id="new") == orphan.sha256
    with pytest.raises(ForeignHandleError):
        store.resolve(b.handle, session_id="new")


def test_cross_session_reads_flag(tmp_path):
    st = BlobStore(tmp_path / "s", cross_session_reads=True)
    res = st.put(b"x", session_id="s1")
    assert st.resolve(res.handle, session_id="s2") == res.sha256


def test_evicted_handle_explains_and_suggests_rerun(store):
    res = store.put(b"big output", session_id="s1", tool_name="web_extract", tool_args='{"url": "https://example.com"}')
    store.clock.t += 3600
    store.evict(res.handle, detail="cleanup test")
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(res.handle, session_id="s1")
    msg = str(info.value)
    assert "web_extract" in msg and "https://example.com" in msg
    assert "2023-11-14 22:13:20 UTC" in msg  # stored
    assert "2023-11-14 23:13:20 UTC" in msg  # evicted
    assert "operator removed it" in msg and "cleanup test" in msg
    assert "Re-run 'web_extract'" in msg
    assert info.value.code == "evicted_blob" and info.value.tombstone.reason == "manual"


def test_evicted_handle_does_not_leak_to_other_sessions(store):
    res = store.put(b"shared bytes", session_id="s1", tool_name="t", tool_args="secret-arg")
    store.put(b"shared bytes", session_id="s2", tool_name="t", tool_args="other-arg")
    store.evict(res.handle)
    with pytest.raises(ForeignHandleError):
        store.resolve(res.handle, session_id="s3")
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(res.handle, session_id="s2")
    assert "other-arg" in str(info.value) and "secret-arg" not in str(info.value)
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(res.handle, session_id="s1")
    assert "secret-arg" in str(info.value) and "other-arg" not in str(info.value)


def test_reput_after_eviction_revives_the_handle(store):
    res = store.put(b"again", session_id="s1")
    store.evict(res.handle)
    with pytest.raises(EvictedBlobError):
        store.read_bytes(res.sha256)
    store.put(b"again", session_id="s1")
    assert store.read_bytes(res.sha256) == b"again"
    assert store.tombstone(res.sha256) is None


def test_error_classes_are_distinct_handle_errors():
    classes = [MalformedHandleError, PathLikeHandleError, UnknownHandleError, AmbiguousHandleError, EvictedBlobError]
    assert all(issubclass(c, HandleError) for c in classes)
    assert len({c.code for c in classes}) == len(classes)
    # another session's handle is deliberately indistinguishable from an unknown one
    assert issubclass(ForeignHandleError, UnknownHandleError) and ForeignHandleError.code == UnknownHandleError.code
    assert issubclass(HandleError, errors.StoreError)
