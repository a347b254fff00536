"""Range reads (bytes, lines, characters), streams, and corruption detection."""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.blobstore import BlobStore, CorruptBlobError
from stowage.blobstore import offsets as offsets_mod

SMALL_CHUNK = 64


def reference_lines(data: bytes) -> list[str]:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    out = []
    for i, part in enumerate(parts):
        complete = i < len(parts) - 1 or data.endswith(b"\n")
        if complete and part.endswith(b"\r"):
            part = part[:-1]
        out.append(part.decode("utf-8", "replace"))
    return out


@pytest.fixture
def tiny_steps(monkeypatch):
    """Checkpoints every few bytes/chars so small examples cross many of them."""
    monkeypatch.setattr(offsets_mod, "LINE_SPACING", 40)
    monkeypatch.setattr(offsets_mod, "CHAR_STEP", 7)
    monkeypatch.setattr(offsets_mod, "SCAN_BLOCK", 5)


@pytest.fixture
def small_store(tmp_path, tiny_steps):
    return BlobStore(tmp_path / "small", chunk_size=SMALL_CHUNK)


@pytest.fixture
def store(tmp_path):
    return BlobStore(tmp_path / "store")


line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30)
documents = st.builds(
    lambda lines, crlf, tail: ("\r\n" if crlf else "\n").join(lines) + ("\n" if tail else ""),
    st.lists(line_text, max_size=25),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents, data=st.data())
def test_lines_chars_and_bytes_match_a_reference(small_store, doc, data):
    raw = doc.encode("utf-8")
    res = small_store.put(raw)
    sha = res.sha256
    lines = reference_lines(raw)
    assert res.line_count == len(lines) and res.char_count == len(doc)
    off = small_store._offsets(sha)
    assert off.char_step == 7 and off.line_spacing == 40
    assert len(off.char_off) == max(1, (len(doc) + 6) // 7)
    for k, byte_at in enumerate(off.char_off):
        assert len(doc[: k * 7].encode()) == byte_at
    for idx, byte_at in zip(off.line_idx, off.line_off, strict=True):
        assert raw[:byte_at].count(b"\n") == idx and (byte_at == 0 or raw[byte_at - 1] == 10)
    assert list(small_store.iter_lines(sha)) == lines
    first = data.draw(st.integers(1, len(lines) + 2))
    count = data.draw(st.integers(0, len(lines) + 2))
    assert small_store.read_lines(sha, first, count) == lines[first - 1 : first - 1 + count]
    assert list(small_store.iter_lines(sha, first)) == lines[first - 1 :]
    start = data.draw(st.integers(0, len(doc) + 3))
    n = data.draw(st.integers(0, len(doc) + 3))
    assert small_store.read_chars(sha, start, n) == doc[start : start + n]
    b0 = data.draw(st.integers(0, len(raw) + 3))
    bn = data.draw(st.integers(0, len(raw) + 3))
    assert small_store.read_bytes(sha, b0, bn) == raw[b0 : b0 + bn]
    limit = data.draw(st.integers(4, 20))
    pieces = list(small_store.iter_numbered_lines(sha, 1, max_line_bytes=limit))
    rebuilt: dict[int, str] = {}
    for number, text in pieces:
        rebuilt[number] = rebuilt.get(number, "") + text
    assert [rebuilt.get(i + 1, "") for i in range(len(lines))] == lines
    assert all(len(t.encode()) <= limit + 1 for _, t in pieces)  # +1: a dropped \r


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=400), data=st.data())
def test_non_utf8_reads_count_one_char_per_byte(small_store, raw, data):
    raw = raw + b"\xff"  # never valid UTF-8
    res = small_store.put(raw)
    assert res.is_utf8 is False and res.char_count is None
    start = data.draw(st.integers(0, len(raw)))
    n = data.draw(st.integers(0, len(raw)))
    assert small_store.read_chars(res.sha256, start, n) == raw[start : start + n].decode("utf-8", "replace")
    assert small_store.read_lines(res.sha256, 1, 10**6) == reference_lines(raw)


def test_checkpoints_at_real_sizes(store):
    lines = [f"{i:07d} {'é' * (i % 5)} {'漢' * (i % 3)} ✓" for i in range(300_000)]
    doc = "\n".join(lines) + "\n"
    res = store.put(doc.encode())
    sha = res.sha256
    assert res.line_count == 300_000 and res.char_count == len(doc)
    assert store.read_lines(sha, 299_998, 10) == lines[299_997:]
    assert store.read_lines(sha, 123_457, 3) == lines[123_456:123_459]
    for start in (0, 65_535, 65_536, 65_537, 1_000_000, len(doc) - 5):
        assert store.read_chars(sha, start, 50) == doc[start : start + 50]
    assert list(store.iter_lines(sha, 299_999)) == lines[299_998:]


def test_one_line_json_reads_by_char_and_bounded_pieces(store):
    doc = "[" + ",".join(f'{{"id": {i}, "name": "ñame-{i}"}}' for i in range(100_000)) + "]"
    res = store.put(doc.encode(), content_type="json")
    assert res.line_count == 1
    mid = len(doc) // 2
    assert store.read_chars(res.sha256, mid, 200) == doc[mid : mid + 200]
    pieces = list(store.iter_numbered_lines(res.sha256, max_line_bytes=64 * 1024))
    assert len(pieces) > 10 and {n for n, _ in pieces} == {1}
    assert "".join(t for _, t in pieces) == doc


def test_streams(store):
    data = os.urandom(1_000_000)
    res = store.put(data)
    with store.open_stream(res.sha256) as stream:
        head = stream.read(1000)
        rest = stream.read()
    assert head + rest == data
    with store.open_stream(res.sha256) as stream:
        got = b"".join(iter(lambda: stream.read(77_777), b""))
    assert got == data


def test_bad_arguments(store):
    sha = store.put(b"a\nb\n").sha256
    with pytest.raises(ValueError):
        store.read_lines(sha, 0, 1)
    with pytest.raises(ValueError):
        store.read_bytes(sha, -1, 2)
    with pytest.raises(ValueError):
        store.read_chars(sha, -1, 2)
    assert store.read_lines(sha, 3, 5) == [] and store.read_lines(sha, 1, 0) == []


def flip_byte(path, offset: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0x01]))


@pytest.fixture
def big(store):
    lines = [f"line {i:06d} " + "x" * 50 for i in range(20_000)]  # ~1.2 MB, 5 chunks
    data = ("\n".join(lines) + "\n").encode()
    return store, store.put(data, tool_name="t"), data, lines


def test_flipped_byte_is_reported_for_reads_that_touch_it(big):
    store, res, data, lines = big
    flip_byte(store.blob_path(res.sha256), 600_000)  # inside chunk 2
    with pytest.raises(CorruptBlobError) as info:
        store.read_bytes(res.sha256, 599_990, 20)
    assert info.value.sha256 == res.sha256
    assert res.sha256[:16] in str(info.value) and "chunk 2" in str(info.value)
    assert store.read_bytes(res.sha256, 0, 100) == data[:100]  # untouched chunks still read
    assert store.read_lines(res.sha256, 19_990, 3) == lines[19_989:19_992]
    for read in (
        lambda: store.read_bytes(res.sha256),
        lambda: list(store.iter_lines(res.sha256)),
        lambda: store.open_stream(res.sha256).read(),
        lambda: store.read_chars(res.sha256, 599_000, 2000),
    ):
        with pytest.raises(CorruptBlobError):
            read()


def test_truncated_blob_is_corrupt(big):
    store, res, data, _ = big
    os.truncate(store.blob_path(res.sha256), 1000)
    with pytest.raises(CorruptBlobError) as info:
        store.read_bytes(res.sha256, 0, 10)
    assert "1000 bytes" in str(info.value)


def test_damaged_or_missing_sidecar_is_rebuilt(big):
    store, res, data, lines = big
    side = store.sidecar_path(res.sha256)
    good = side.read_bytes()
    side.write_bytes(good[:-5] + b"xxxxx")
    store._cache.clear()
    assert store.read_lines(res.sha256, 5, 2) == lines[4:6]
    assert side.read_bytes() == good
    side.unlink()
    assert store.read_chars(res.sha256, 100, 10) == data[100:110].decode()
    assert side.read_bytes() == good


def test_blob_replaced_by_other_content_is_corrupt(store):
    a = store.put(b"original content\n" * 100)
    b = store.put(b"forged content!!\n" * 100)
    # someone swaps both the file and the sidecar for another blob's
    os.replace(store.blob_path(b.sha256), store.blob_path(a.sha256))
    os.replace(store.sidecar_path(b.sha256), store.sidecar_path(a.sha256))
    store._cache.clear()
    with pytest.raises(CorruptBlobError) as info:
        store.read_bytes(a.sha256, 0, 10)
    assert b.sha256[:16] in str(info.value)


def test_reput_heals_a_corrupt_blob(big):
    store, res, data, _ = big
    flip_byte(store.blob_path(res.sha256), 10)
    with pytest.raises(CorruptBlobError):
        store.read_bytes(res.sha256)
    store.put(data)
    assert hashlib.sha256(store.read_bytes(res.sha256)).hexdigest() == res.sha256


def test_line_batches_number_whole_lines_consecutively(store):
    lines = [f"row {i}" for i in range(100_000)]
    sha = store.put(("\n".join(lines) + "\n").encode()).sha256
    batches = list(store.iter_line_batches(sha, 500))
    assert len(batches) > 1 and not any(piece for _, _, piece in batches)
    expected = 500
    for first, texts, _ in batches:
        assert first == expected and texts == lines[first - 1 : first - 1 + len(texts)]
        expected += len(texts)
    assert expected == 100_001


def test_abandoned_iterators_do_not_leak_descriptors(store):
    sha = store.put(b"a\nb\n" * 1000).sha256
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        store.iter_lines(sha)  # never started
        it = store.iter_numbered_lines(sha)
        next(it)  # started, then dropped
        del it
    import gc

    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before + 1
