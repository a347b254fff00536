"""Child-process code of the blob store's concurrency and crash tests (tests/blobstore/).

Spawned children import it by module name and the crash test runs it as
``python -m stowage_dev.store_workers ROOT SEED CAP``, so it lives in the
installed harness (no ``sys.path`` edits): standard library plus
``stowage.blobstore`` only.
"""

from __future__ import annotations

import hashlib
import random
import sys
from typing import Iterator

from stowage.blobstore import BlobStore, CorruptBlobError, EvictedBlobError, HandleError, RetentionPolicy

MIB = 1 << 20


def shared_policy(cap: int) -> RetentionPolicy:
    return RetentionPolicy(
        ttl_seconds=None, max_total_bytes=cap, fetch_grace_seconds=3600.0, session_idle_seconds=3600.0
    )


def worker_payload(worker: int, i: int, rng: random.Random) -> bytes:
    size = rng.randint(10_000, 200_000)
    line = hashlib.sha256(f"w{worker}:{i}".encode()).hexdigest().encode() + b"\n"
    return (line * (size // len(line) + 1))[:size]


def mp_worker(args: tuple[str, int, int, int]) -> dict:
    """Write, read, fetch and gc against one shared store; report what happened."""
    root, worker, rounds, cap = args
    store = BlobStore(root, shared_policy(cap))
    session = f"w{worker}"
    store.mark_session_ended(session)  # worker blobs are fair game for eviction
    rng = random.Random(worker)
    mine: dict[str, bytes] = {}
    out: dict = {"puts": {}, "keeper": {}, "fetched": [], "evicted_reads": 0, "errors": []}
    for i in range(rounds):
        data = worker_payload(worker, i, rng)
        res = store.put(data, session_id=session, tool_name="gen", tool_args=f"{worker}:{i}")
        mine[res.sha256] = data
        out["puts"][res.sha256] = hashlib.sha256(data).hexdigest()
        if i % 10 == 0:
            keep = f"keeper-{worker}-{i}".encode() * 500
            out["keeper"][store.put(keep, session_id="keeper").sha256] = len(keep)
        for sha in rng.sample(sorted(mine), min(2, len(mine))):
            try:
                got = store.read_bytes(sha)
                if got != mine[sha]:
                    out["errors"].append(f"wrong bytes for {sha[:16]}")
                lines = store.read_lines(sha, 2, 3)
                if lines != mine[sha].decode().split("\n")[1:4]:
                    out["errors"].append(f"wrong lines for {sha[:16]}")
            except EvictedBlobError:
                out["evicted_reads"] += 1
            except (CorruptBlobError, HandleError) as exc:
                out["errors"].append(f"{type(exc).__name__}: {exc}")
        if i % 15 == 7 and store.record_fetch(res.sha256):
            out["fetched"].append(res.sha256)
        if i % 20 == 19:
            store.gc()
    return out


def crash_payload(seed: int, k: int) -> tuple[int, bytes]:
    """(size, repeating line) of the k-th put of writer ``seed``: 1 to 6 MiB."""
    line = hashlib.sha256(f"{seed}:{k}".encode()).hexdigest().encode() + b"\n"
    size = (1 + int(line[:4], 16) % 6) * MIB
    return size, line


def crash_chunks(seed: int, k: int) -> Iterator[bytes]:
    size, line = crash_payload(seed, k)
    block = line * 1000
    sent = 0
    while sent < size:
        piece = block[: size - sent]
        sent += len(piece)
        yield piece


def expected_sha(seed: int, k: int) -> str:
    h = hashlib.sha256()
    for piece in crash_chunks(seed, k):
        h.update(piece)
    return h.hexdigest()


def crash_writer(root: str, seed: int, cap: int) -> None:
    """Put large payloads forever; the parent kills this process with SIGKILL."""
    store = BlobStore(root, shared_policy(cap))
    store.mark_session_ended(f"crash-{seed}")
    print("ready", flush=True)
    k = 0
    while True:
        store.put(crash_chunks(seed, k), session_id=f"crash-{seed}", tool_name="gen", tool_args=f"{seed}:{k}")
        if k % 4 == 3:
            store.record_fetch(expected_sha(seed, k))
        k += 1


if __name__ == "__main__":  # pragma: no cover - used as a subprocess entry point
    crash_writer(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
