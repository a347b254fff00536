"""Per-session files beside the store (status figures, the summary log): names, modes, reading, checks.

They hold what the blobs hold (figures, summaries quoting tool output), so
they get the store's privacy: folders 0700 and files 0600, made through the
blob store's own helpers (``blobstore.fsutil``) so a permissive umask cannot
widen them.  A file is named by a readable prefix of the session id plus a
hash of the whole id: ``team:alpha`` and ``team/alpha``, or two long ids with
a common prefix, never share a file.  Readers still keep only the records of
the session they asked for, and parse with the bounded reader
(``blobstore.safe_json``): one hostile line is skipped, never raised.  Every
record written or read passes the mask (:mod:`..redaction.shown`): a file
written by an older Stowage is masked when shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...blobstore import safe_json
from ...blobstore.fsutil import DIR_MODE, FILE_MODE, append_line, ensure_dir, mode_of, write_durable
from ..redaction.shown import shown_record

STATUS_FOLDER = "session-status"
SUMMARY_FOLDER = "session-summaries"
VECTOR_FOLDER = "tool-vectors"  # tool search's embedding cache
# what the engine writes beside the blob store, at the store folder's root (blobstore.ownership knows the rest)
STORE_COMPANIONS = (STATUS_FOLDER, SUMMARY_FOLDER, VECTOR_FOLDER)
PREFIX_CHARS = 48
HASH_CHARS = 16
MAX_FILE_BYTES = 16 * 1024 * 1024  # a status file is a few kB; a summary log a few hundred kB
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{0,%d}-[0-9a-f]{%d}$" % (PREFIX_CHARS, HASH_CHARS))


def file_stem(session_id: str) -> str:
    """``<readable prefix>-<16 hex of sha256(id)>``: unique per id, still recognisable in a listing."""
    readable = _UNSAFE.sub("_", session_id)[:PREFIX_CHARS].lstrip(".")
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{readable}-{digest}"


def session_path(store_root: Path, folder: str, session_id: str, suffix: str) -> Path:
    return Path(store_root) / folder / f"{file_stem(session_id)}{suffix}"


def _folder(path: Path) -> Path:
    ensure_dir(path.parent)  # 0700, parents included
    return path.parent


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` atomically with ``data`` (0600); raises ``OSError``."""
    folder = _folder(path)
    write_durable(path, json.dumps(shown_record(data), default=str).encode("utf-8"), folder, sync=False)


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``path`` (created 0600 in a 0700 folder); raises ``OSError``."""
    _folder(path)
    append_line(path, json.dumps(shown_record(record), default=str, ensure_ascii=False).encode("utf-8"))


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it is missing, unreadable, too big, too deep or not an object."""
    try:
        value = safe_json.read_file(path, max_chars=MAX_FILE_BYTES)
    except (OSError, safe_json.JsonRejected):
        return None
    return shown_record(value) if isinstance(value, dict) else None


def read_json_lines(path: Path, session_id: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """The objects of a JSONL file (those of ``session_id`` only, when given) and how many lines were bad."""
    records: list[dict[str, Any]] = []
    bad = 0
    try:
        for _, value in safe_json.iter_lines(path, max_chars=MAX_FILE_BYTES):
            if not isinstance(value, dict) or (session_id is not None and not isinstance(value.get("session_id"), str)):
                bad += 1
            elif session_id is None or value["session_id"] == session_id:
                records.append(value)
    except OSError:
        pass
    return shown_record(records), bad


def legacy_path(store_root: Path, folder: str, session_id: str, suffix: str) -> Path:
    """Where a Stowage that named files by the cut, sanitized id wrote this session's file (shared by lookalikes)."""
    return Path(store_root) / folder / f"{_UNSAFE.sub('_', session_id)[:120]}{suffix}"


def forget_session(store_root: Path, session_id: str) -> int:
    """Remove the session's status file and summary log, and its records from an old-style shared file.

    Another session's records in an old-style file stay; returns how many files were removed or rewritten."""
    changed = 0
    for folder, suffix in ((STATUS_FOLDER, ".json"), (SUMMARY_FOLDER, ".jsonl")):
        path = session_path(store_root, folder, session_id, suffix)
        if path.is_file():
            path.unlink()
            changed += 1
        old = legacy_path(store_root, folder, session_id, suffix)
        if old == path or not old.is_file():
            continue
        if suffix == ".json":
            data = read_json(old)
            if data is not None and data.get("session_id") == session_id:
                old.unlink()
                changed += 1
            continue
        records, _ = read_json_lines(old)
        others = [r for r in records if r.get("session_id") != session_id]
        if len(others) == len(records):
            continue
        if others:
            write_durable(
                old,
                "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in others).encode("utf-8"),
                old.parent,
                sync=False,
            )
        else:
            old.unlink()
        changed += 1
    return changed


@dataclass(frozen=True)
class FileProblem:
    """One thing wrong with the per-session files (the CLI's doctor reports them)."""

    kind: str  # bad-permissions | unreadable-session-file | misnamed-session-file
    path: Path
    detail: str
    repair_mode: int | None = None  # chmod to this fixes it

    def repair(self) -> bool:
        if self.repair_mode is None:
            return False
        os.chmod(self.path, self.repair_mode)
        return True


def check(store_root: Path) -> list[FileProblem]:
    """Modes, names and parsability of every per-session file under ``store_root``."""
    problems: list[FileProblem] = []
    for folder, suffix in ((STATUS_FOLDER, ".json"), (SUMMARY_FOLDER, ".jsonl")):
        base = Path(store_root) / folder
        if not base.is_dir():
            continue
        problems += _mode_problem(base, DIR_MODE)
        for path in sorted(base.iterdir()):
            if path.is_symlink() or not path.is_file():
                continue
            problems += _mode_problem(path, FILE_MODE)
            if path.suffix != suffix:
                continue
            if not _NAME.match(path.stem):
                problems.append(
                    FileProblem(
                        "misnamed-session-file",
                        path,
                        "named by a sanitized, cut session id "
                        "(written before ids were hashed): two sessions may share it",
                    )
                )
            if suffix == ".json" and read_json(path) is None:
                problems.append(
                    FileProblem(
                        "unreadable-session-file",
                        path,
                        "not a readable JSON object (too big, too deep or corrupt); `stowage status` skips it",
                    )
                )
            elif suffix == ".jsonl":
                _, bad = read_json_lines(path)
                if bad:
                    problems.append(
                        FileProblem(
                            "unreadable-session-file", path, f"{bad} unreadable line(s); `stowage summary` skips them"
                        )
                    )
    return problems


def _mode_problem(path: Path, want: int) -> list[FileProblem]:
    try:
        mode = mode_of(path)
    except OSError:
        return []
    if mode == want:
        return []
    return [FileProblem("bad-permissions", path, f"mode {mode:o}, expected {want:o}", repair_mode=want)]
