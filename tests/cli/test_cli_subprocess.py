"""The installed ``stowage`` console script, run as a real process with ``HERMES_HOME`` set."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .hermes_config import select_stowage, write_config

_BESIDE = Path(sys.executable).with_name("stowage")  # the venv's own script first
SCRIPT = _BESIDE if _BESIDE.exists() else Path(shutil.which("stowage") or _BESIDE)
pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="the stowage console script is not installed")


def stowage(home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([str(SCRIPT), *argv], env=env, capture_output=True, timeout=120)


def test_status_and_json(filled):
    proc = stowage(filled.home, "status")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert str(filled.root) in out and "4 blobs" in out and "tokenizer" in out
    proc = stowage(filled.home, "--json", "status")
    data = json.loads(proc.stdout)
    assert data["store"]["blob_count"] == 4 and data["hermes_home"] == str(filled.home)


def test_missing_store(home):
    proc = stowage(home, "blobs", "ls")
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"nothing has been stored yet" in proc.stderr and str(home / "stowage").encode() in proc.stderr


def test_ls_show_cat(filled):
    proc = stowage(filled.home, "blobs", "ls")
    assert proc.returncode == 0 and filled.log.encode() in proc.stdout
    proc = stowage(filled.home, "blobs", "show", filled.binary)
    assert proc.returncode == 0 and b"browser_screenshot" in proc.stdout
    proc = stowage(filled.home, "blobs", "cat", filled.log)
    assert proc.returncode == 0 and proc.stdout == filled.log_bytes
    proc = stowage(filled.home, "blobs", "cat", filled.binary)  # a pipe, not a terminal
    assert proc.returncode == 0 and proc.stdout == filled.binary_bytes


def test_cat_to_a_pipe_that_closes_early(filled):
    big = filled.store.put(b"y" * (8 << 20))
    script = f"{SCRIPT} blobs cat {big.handle} | head -c 10"
    proc = subprocess.run(
        ["sh", "-c", script], env={**os.environ, "HERMES_HOME": str(filled.home)}, capture_output=True, timeout=120
    )
    assert proc.stdout == b"y" * 10 and b"Traceback" not in proc.stderr


def test_bad_handles(filled):
    for handle, text in (("../x", b"looks like a file path"), ("0123456789abcdef", b"no stored blob matches")):
        proc = stowage(filled.home, "blobs", "cat", handle)
        assert proc.returncode == 2 and text in proc.stderr and proc.stdout == b""


def test_binary_to_a_terminal_is_refused_unless_forced(filled):
    def on_tty(*argv: str) -> tuple[int, bytes]:
        """Run with stdout on a pseudo-terminal; returns (status, terminal output + stderr)."""
        master, slave = pty.openpty()
        try:
            proc = subprocess.run(
                [str(SCRIPT), *argv],
                env={**os.environ, "HERMES_HOME": str(filled.home)},
                stdout=slave,
                stderr=subprocess.PIPE,
                timeout=120,
            )
        finally:
            os.close(slave)
        chunks = []
        try:
            while data := os.read(master, 65536):
                chunks.append(data)
        except OSError:  # EIO once the terminal is drained and its other side closed
            pass
        finally:
            os.close(master)
        return proc.returncode, b"".join(chunks) + proc.stderr

    code, out = on_tty("blobs", "cat", filled.binary)
    assert code == 1 and b"is binary" in out and b"--force" in out
    code, out = on_tty("blobs", "cat", filled.binary, "--force")
    assert code == 0 and b"IHDR" in out


def test_gc_and_doctor(filled):
    select_stowage(filled.home)
    proc = stowage(filled.home, "gc", "--dry-run")
    assert proc.returncode == 0 and filled.old.encode() in proc.stdout and b"would evict 1" in proc.stdout
    proc = stowage(filled.home, "gc")
    assert proc.returncode == 0 and b"evicted 1" in proc.stdout
    assert stowage(filled.home, "doctor").returncode == 0
    with open(filled.store.blob_path(filled.log_sha), "r+b") as fh:
        fh.seek(3)
        fh.write(b"#")
    proc = stowage(filled.home, "--json", "doctor")
    assert proc.returncode == 1 and json.loads(proc.stdout)["issues"][0]["kind"] == "corrupt-blob"
    proc = stowage(filled.home, "doctor", "--repair")
    assert proc.returncode == 0 and b"repaired" in proc.stdout


def test_invalid_config(filled):
    write_config(filled.home, {"spill": {"threshold_tokens": "lots"}})
    proc = stowage(filled.home, "doctor")
    assert proc.returncode == 1 and b"stowage.spill.threshold_tokens = 'lots': not a number" in proc.stdout
