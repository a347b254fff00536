"""Temporary directories for end-to-end runs, kept for inspection with ``STOWAGE_E2E_KEEP=1``."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator


def scratch_dir(prefix: str) -> Iterator[Path]:
    """Yield a new directory; remove it afterwards unless ``STOWAGE_E2E_KEEP=1`` (then print where it is)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    yield path
    if os.environ.get("STOWAGE_E2E_KEEP") == "1":
        print(f"\n[stowage-e2e] kept {path}")
    else:
        shutil.rmtree(path, ignore_errors=True)
