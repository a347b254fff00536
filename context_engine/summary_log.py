"""Each compaction's summary, on disk, for ``stowage summary`` and ``/stowage summary``.

The summary text lives only in the agent's history; the command line runs in
another process without the host.  So at each compaction the engine appends
one JSON line per summary to ``<store>/session-summaries/<session>.jsonl``:
the body exactly as it went into the history (after redaction and
grounding), with the figures that explain it.  A plain file next to the
status files, not a blob: it is small, must survive retention as long as the
session's figures do, and is listed per session without opening the store.
Appending is one ``write`` of one line; a failure is only logged, and a
reader skips lines it cannot parse.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from .status_file import FOLDER as STATUS_FOLDER, status_path

logger = logging.getLogger(__name__)

FOLDER = "session-summaries"
_HANDLE = re.compile(r"under handle ([0-9a-f]{16,64})")


def summaries_path(store_root: Path, session_id: str) -> Path:
    """Named like the session's status file, so one session id maps to both."""
    return Path(store_root) / FOLDER / (status_path(store_root, session_id).stem + ".jsonl")


def window_handle(reference: str | None) -> str | None:
    """The blob handle inside a window reference sentence (None when the window was not stored)."""
    found = _HANDLE.search(reference or "")
    return found.group(1) if found else None


def append_summary(store_root: Path | None, session_id: str | None, record: dict[str, Any]) -> None:
    if store_root is None or not session_id:
        return
    path = summaries_path(store_root, session_id)
    line = json.dumps({**record, "session_id": session_id}, default=str, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        logger.warning("stowage: could not record the compaction summary in %s: %s", path, exc)


def read_summaries(store_root: Path, session_id: str) -> tuple[list[dict[str, Any]], int]:
    """The session's summaries oldest first, and how many lines were unreadable."""
    try:
        text = summaries_path(store_root, session_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return [], 0
    records: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(record, dict) and isinstance(record.get("body"), str):
            records.append(record)
        else:
            bad += 1
    return records, bad


def known_session(store_root: Path, session_id: str) -> bool:
    """A session this store has figures or summaries of."""
    return status_path(store_root, session_id).is_file() or summaries_path(store_root, session_id).is_file()


def newest_session(store_root: Path) -> str | None:
    """The session whose status or summaries changed last (its id as the engine wrote it)."""
    newest: tuple[float, Path] | None = None
    for folder, pattern in ((STATUS_FOLDER, "*.json"), (FOLDER, "*.jsonl")):
        for path in (Path(store_root) / folder).glob(pattern):
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if newest is None or mtime > newest[0]:
                newest = (mtime, path)
    return _session_id_of(newest[1]) if newest else None


def _session_id_of(path: Path) -> str:
    """The id recorded inside the file (file names are sanitized), else the file name."""
    try:
        if path.suffix == ".jsonl":
            first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
            value = json.loads(first).get("session_id")
        else:
            value = json.loads(path.read_text()).get("session_id")
    except (OSError, ValueError, IndexError, AttributeError):
        value = None
    return value if isinstance(value, str) and value else path.stem
