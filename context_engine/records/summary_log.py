"""Each compaction's summary, on disk, for ``stowage summary`` and ``/stowage summary``.

The summary text lives only in the agent's history; the command line runs in
another process without the host.  So at each compaction the engine appends
one JSON line per summary to ``<store>/session-summaries/<name>.jsonl``
(named like the status file, :func:`.session_files.file_stem`, 0600 in a 0700
folder): the body exactly as it went into the history (after redaction and
grounding), with the figures that explain it.  A plain file next to the
status files, not a blob: it is small, must survive retention as long as the
session's figures do, and is listed per session without opening the store.
Appending is one ``write`` of one line; a failure is only logged, and a
reader skips lines it cannot parse and lines of another session.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from ...blobstore import safe_json
from .session_files import SUMMARY_FOLDER, append_json_line, read_json, read_json_lines, session_path
from .status_file import FOLDER as STATUS_FOLDER
from .status_file import status_path

logger = logging.getLogger(__name__)

FOLDER = SUMMARY_FOLDER
_HANDLE = re.compile(r"under handle ([0-9a-f]{16,64})")


def summaries_path(store_root: Path, session_id: str) -> Path:
    """Named like the session's status file, so one session id maps to both."""
    return session_path(store_root, FOLDER, session_id, ".jsonl")


def window_handle(reference: str | None) -> str | None:
    """The blob handle inside a window reference sentence (None when the window was not stored)."""
    found = _HANDLE.search(reference or "")
    return found.group(1) if found else None


def append_summary(store_root: Path | None, session_id: str | None, record: dict[str, Any]) -> None:
    if store_root is None or not session_id:
        return
    path = summaries_path(store_root, session_id)
    try:
        append_json_line(path, {**record, "session_id": session_id})
    except OSError as exc:
        logger.warning("stowage: could not record the compaction summary in %s: %s", path, exc)


def carry_summaries(store_root: Path | None, source: str, target: str) -> int:
    """The conversation goes on under a new id (a host that rotates the id at a compaction, 0.13-0.18 or
    ``compression.in_place: false``): the new id's log starts with the old one's summaries, so ``stowage
    summary`` of the newest id shows every compaction.  Only into a log not started yet; returns how many."""
    if store_root is None or source == target or summaries_path(store_root, target).exists():
        return 0
    records, _ = read_summaries(store_root, source)
    for record in records:
        append_summary(store_root, target, record)
    return len(records)


def read_summaries(store_root: Path, session_id: str) -> tuple[list[dict[str, Any]], int]:
    """The session's summaries oldest first, and how many lines were unreadable."""
    records, bad = read_json_lines(summaries_path(store_root, session_id), session_id)
    kept = [r for r in records if isinstance(r.get("body"), str)]
    return kept, bad + len(records) - len(kept)


def known_session(store_root: Path, session_id: str) -> bool:
    """A session this store has figures or summaries of."""
    return status_path(store_root, session_id).is_file() or summaries_path(store_root, session_id).is_file()


def newest_session(store_root: Path) -> str | None:
    """The session whose status or summaries changed last (its id as the engine wrote it)."""
    dated: list[tuple[float, Path]] = []
    for folder, pattern in ((STATUS_FOLDER, "*.json"), (FOLDER, "*.jsonl")):
        for path in (Path(store_root) / folder).glob(pattern):
            try:
                dated.append((path.stat().st_mtime, path))
            except OSError:
                continue
    for _, path in sorted(dated, key=lambda item: item[0], reverse=True):
        session_id = _session_id_of(path)
        if session_id is not None:
            return session_id
    return None


def _session_id_of(path: Path) -> str | None:
    """The id recorded inside the file (file names carry only a prefix and a hash), None if unreadable."""
    if path.suffix == ".jsonl":
        try:
            with open(path, "rb") as handle:
                for _, value in safe_json.iter_lines_of(handle, max_chars=1 << 20):
                    if isinstance(value, dict) and isinstance(value.get("session_id"), str):
                        return str(value["session_id"])
        except OSError:
            return None
        return None
    data = read_json(path)
    value = data.get("session_id") if data is not None else None
    return value if isinstance(value, str) and value else None
