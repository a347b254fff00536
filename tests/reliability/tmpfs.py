"""A real full disk for the attack suite: a small tmpfs mounted for one test (root only, as CI runs)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """``path`` as a tmpfs of ``size`` (``4m``), unmounted afterwards; the test is skipped where none can be mounted."""
    if os.geteuid() != 0:
        pytest.skip("this test mounts a tmpfs and needs root (CI runs as root)")
    path.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
