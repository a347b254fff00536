"""What a live session did, on disk, for ``stowage status`` and ``/stowage`` in other processes.

The engine lives inside the agent's process; the ``stowage`` command does
not.  At the end of every user turn (and of the session) the engine writes a
small JSON file per session under the store folder, once the session did
something (``status_report.publish_status``); the command reads the newest
ones.  Writing is atomic (temp file and rename), 0600 in a 0700 folder, named
by :func:`.session_files.file_stem`; a failure is only logged: figures must
never cost the session anything.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from .session_files import STATUS_FOLDER, read_json, session_path, write_json
from .session_status import SessionStatus

logger = logging.getLogger(__name__)

FOLDER = STATUS_FOLDER


def status_path(store_root: Path, session_id: str) -> Path:
    return session_path(store_root, FOLDER, session_id, ".json")


def write_session_status(store_root: Path | None, session_id: str | None, status: SessionStatus) -> None:
    if store_root is None or not session_id:
        return
    path = status_path(store_root, session_id)
    try:
        write_json(path, {**status.as_dict(), "session_id": session_id, "updated_at": time.time()})
    except OSError as exc:
        logger.warning("stowage: could not write the session status file %s: %s", path, exc)


def read_session_status(store_root: Path, session_id: str) -> SessionStatus | None:
    """One session's figures, or None (no file, unreadable, or a file of another session)."""
    data = read_json(status_path(store_root, session_id))
    return SessionStatus.from_dict(data) if data is not None and data.get("session_id") == session_id else None


def read_session_statuses(store_root: Path, limit: int = 5) -> list[SessionStatus]:
    """The newest ``limit`` session status files (corrupt, hostile or unreadable ones skipped)."""
    folder = Path(store_root) / FOLDER
    dated = []
    try:
        for path in folder.glob("*.json"):
            try:
                dated.append((path.stat().st_mtime, path))
            except OSError:
                continue
    except OSError:
        return []
    dated.sort(key=lambda item: item[0], reverse=True)
    statuses: list[SessionStatus] = []
    for _, path in dated:
        if len(statuses) >= limit:
            break
        data = read_json(path)
        if data is not None and isinstance(data.get("session_id"), str):
            statuses.append(SessionStatus.from_dict(data))
    return statuses
