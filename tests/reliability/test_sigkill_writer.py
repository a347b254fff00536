"""SIGKILL a writer at random points: every put it completed survives, byte for byte.

A child process puts outputs of mixed sizes (some repeated, so dedupe paths
run too) and, after each put returns, appends the handle and the content's
own SHA-256 to a journal (fsynced).  The parent kills it with SIGKILL at
random moments, round after round on the same store.  Afterwards every
journaled blob must read back with its hash, and the doctor must find the
store consistent (crash residue is repairable warnings only).
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from stowage.blobstore import BlobStore

pytestmark = pytest.mark.reliability
ROUNDS = 8

WRITER = textwrap.dedent("""
    import hashlib, os, random, sys
    from stowage.blobstore import BlobStore
    root, journal, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    store = BlobStore(root)
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, b"ready\\n")
    i = 0
    while True:
        i += 1
        size = rng.choice([10, 3000, 70_000, 600_000])
        data = (f"{seed}-{i % 40}-".encode() * (size // 8 + 1))[:size]
        res = store.put(data, session_id=f"w{seed}", tool_name="gen", kind="spill")
        os.write(fd, f"{res.sha256} {hashlib.sha256(data).hexdigest()}\\n".encode())
        os.fsync(fd)
""")


def test_sigkill_at_random_points_loses_no_completed_put(tmp_path, figures):
    root, journal = tmp_path / "store", tmp_path / "journal"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    rng = random.Random(13)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    kills = 0
    for round_number in range(ROUNDS):
        child = subprocess.Popen([sys.executable, str(script), str(root), str(journal), str(round_number)], env=env)
        deadline = time.monotonic() + 60
        while (
            (journal.read_bytes().count(b"ready\n") if journal.exists() else 0) <= round_number
            and child.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)  # the child has imported everything and opened the store
        time.sleep(rng.uniform(0.02, 0.4))  # a random point of the write loop
        child.send_signal(signal.SIGKILL)
        child.wait()
        kills += child.returncode == -signal.SIGKILL
    entries = [line.split() for line in journal.read_text().splitlines() if line != "ready"]
    store = BlobStore(root)
    lost_puts = lost_bytes = 0
    for sha, digest in entries:
        try:
            data = store.read_bytes(sha)
            ok = hashlib.sha256(data).hexdigest() == digest == sha
        except Exception:  # noqa: BLE001 - counted
            ok, data = False, b""
        if not ok:
            lost_puts += 1
            lost_bytes += len(data)
    report = store.doctor(repair=True, temp_grace_seconds=0)
    after = store.doctor(temp_grace_seconds=0)
    figures.update(
        rounds=ROUNDS,
        sigkills=kills,
        completed_puts=len(entries),
        puts_lost=lost_puts,
        bytes_lost=lost_bytes,
        residue_repaired=sum(i.repaired for i in report.issues),
        errors_after_repair=sum(i.severity == "error" for i in after.open_issues),
    )
    assert kills == ROUNDS and entries
    assert lost_puts == 0
    assert report.consistent and after.clean, [(i.kind, i.detail) for i in after.open_issues]
