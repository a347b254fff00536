"""What a live session did, on disk, for ``stowage status`` and ``/stowage`` in other processes.

The engine lives inside the agent's process; the ``stowage`` command does
not.  At the end of every user turn (and of the session) the engine writes a
small JSON file per session under the store folder; the command reads the
newest ones.  Writing is atomic (temp file and rename) and a failure is only
logged: figures must never cost the session anything.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path

from .session_status import SessionStatus

logger = logging.getLogger(__name__)

FOLDER = "session-status"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def status_path(store_root: Path, session_id: str) -> Path:
    return Path(store_root) / FOLDER / f"{_SAFE.sub('_', session_id)[:120]}.json"


def write_session_status(store_root: Path | None, session_id: str | None, status: SessionStatus) -> None:
    if store_root is None or not session_id:
        return
    path = status_path(store_root, session_id)
    data = {**status.as_dict(), "session_id": session_id, "updated_at": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, default=str))
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("stowage: could not write the session status file %s: %s", path, exc)


def read_session_statuses(store_root: Path, limit: int = 5) -> list[SessionStatus]:
    """The newest ``limit`` session status files (corrupt or unreadable ones skipped)."""
    folder = Path(store_root) / FOLDER
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    statuses = []
    for path in files[:limit]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            statuses.append(SessionStatus.from_dict(data))
    return statuses
