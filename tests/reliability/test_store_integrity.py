"""Corrupted blobs and forged sidecars never yield wrong bytes; another session's content is invisible.

* Flipped bytes in a blob: every read (full and partial) either returns the
  original bytes or raises ``CorruptBlobError``; the doctor finds each one.
* A forged sidecar (chunk digests recomputed over tampered bytes): partial
  reads must not return the tampered bytes, because the sidecar is tied to
  the content hash through the seal the index keeps.
* "Not yours" and "not here" get the same answer, even for a full SHA-256.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random

import pytest

from stowage.blobstore import BlobStore, CorruptBlobError
from stowage.blobstore.offsets import StreamIndexer
from stowage.blobstore.writer import rechunk
from stowage.context_engine.store_session.fetch_tools import FETCH, FetchLimits, FetchTools

pytestmark = pytest.mark.reliability
CHUNK = 4096


def content(seed: int, lines: int = 2000) -> bytes:
    return "".join(f"{seed}:{i:05d} payload line with some text\n" for i in range(lines)).encode()


def offsets_of(data: bytes, chunk_size: int):
    indexer = StreamIndexer(chunk_size)
    for chunk in rechunk(iter([data]), chunk_size):
        indexer.feed(chunk)
    return indexer.finish()


LINE = len(content(7, 1))
TAMPERED_LINE = 951  # "7:00950 ..."


def partial_reads(store: BlobStore, sha: str):
    """Reads around the tampered line (lines, bytes, chars) and a whole read."""
    center = (TAMPERED_LINE - 1) * LINE
    yield lambda: "\n".join(store.read_lines(sha, TAMPERED_LINE - 10, 40)).encode()
    yield lambda: store.read_bytes(sha, center - 2000, 4000)
    yield lambda: store.read_chars(sha, center - 2000, 4000).encode()
    yield lambda: b"".join(store.read_bytes(sha))


def test_corrupted_blobs_never_read_back_wrong(tmp_path, figures):
    rng = random.Random(5)
    root = tmp_path / "store"
    store = BlobStore(root, chunk_size=CHUNK)
    originals = {}
    for i in range(12):
        data = content(i)
        originals[store.put(data, session_id="s").sha256] = data
    store.close()
    wrong = refused = correct = 0
    for sha in originals:
        path = store.blob_path(sha)
        raw = bytearray(path.read_bytes())
        for _ in range(3):
            at = rng.randrange(len(raw))
            raw[at] ^= 0x5A
        path.write_bytes(bytes(raw))
    fresh = BlobStore(root, chunk_size=CHUNK)
    for sha, data in originals.items():
        for read in partial_reads(fresh, sha):
            try:
                got = read()
            except CorruptBlobError:
                refused += 1
                continue
            full_text = data.decode()
            if got in data or got.decode(errors="replace") in full_text:
                correct += 1
            else:
                wrong += 1
    report = fresh.doctor()
    found = sum(1 for i in report.issues if i.kind == "corrupt-blob")
    figures.update(
        blobs=len(originals), reads_refused=refused, reads_correct=correct, reads_wrong=wrong, doctor_found=found
    )
    assert wrong == 0 and found == len(originals)


def test_a_forged_sidecar_does_not_make_partial_reads_return_tampered_bytes(tmp_path, figures):
    root = tmp_path / "store"
    store = BlobStore(root, chunk_size=CHUNK)
    data = content(7)
    sha = store.put(data, session_id="s").sha256
    store.close()
    tampered = bytearray(data)
    at = data.index(b"7:00950")
    tampered[at : at + 7] = b"HACKED!"
    forged = dataclasses.replace(offsets_of(bytes(tampered), CHUNK), sha256=sha)
    store.blob_path(sha).write_bytes(bytes(tampered))
    store.sidecar_path(sha).write_bytes(forged.to_bytes())
    fresh = BlobStore(root, chunk_size=CHUNK)
    leaked = refused = 0
    for read in partial_reads(fresh, sha):
        try:
            got = read()
        except CorruptBlobError:
            refused += 1
            continue
        leaked += b"HACKED!" in got
    figures.update(reads=4, refused=refused, tampered_bytes_returned=leaked)
    assert leaked == 0 and refused == 4


def test_not_yours_and_not_here_get_one_answer(tmp_path, figures):
    store = BlobStore(tmp_path / "store")
    theirs = b"the other session's private output\n" * 10
    store.put(theirs, session_id="other")
    unknown = b"content nobody stored\n" * 10
    mine = FetchTools(store, lambda: "me", FetchLimits())
    answers = {}
    for label, data in (("foreign", theirs), ("unknown", unknown)):
        full = hashlib.sha256(data).hexdigest()
        for length in (16, 40, 64):
            reply = json.loads(mine.handle(FETCH, {"handle": full[:length]}))
            answers[(label, length)] = (reply.get("code"), reply["error"].replace(full[:length], "<handle>"))
    distinct = {answers[("foreign", n)] != answers[("unknown", n)] for n in (16, 40, 64)}
    figures.update(probes=len(answers), oracle_answers=sum(distinct))
    assert distinct == {False}, answers
