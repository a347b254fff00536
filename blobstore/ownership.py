"""Which folder is a store, and which of its entries the store wrote.

A store folder carries a marker file at its root, written when Stowage
creates the store (or adopts a store an earlier version made without one).
Stowage starts a store only in a missing or empty folder, or in one whose
every entry is a name it writes: ``store.path`` pointed at a folder of the
user's own files is refused with the folder named, never filled.  The same
names tell ``stowage uninstall --purge`` what to delete and what to leave.
Stowage never writes a symbolic link, so a link inside the folder is never
one of its entries.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .errors import StoreError
from .fsutil import FILE_MODE, ensure_dir, remove_quietly

MARKER_NAME = "stowage-store.json"
MARKER_FORMAT = "stowage-store"
INDEX_FILE = "index.sqlite3"
# what BlobStore itself writes at its root (SQLite adds the -wal, -shm and -journal files beside the index)
STORE_NAMES = frozenset(
    {
        MARKER_NAME,
        INDEX_FILE,
        f"{INDEX_FILE}-wal",
        f"{INDEX_FILE}-shm",
        f"{INDEX_FILE}-journal",
        "blobs",
        "tmp",
        "trash",
        "quarantine",
        "grants.jsonl",
    }
)
# an earlier version's store, made before the marker: its index or its blob folder
LEGACY_SIGNS = (INDEX_FILE, "blobs")


class ForeignFolderError(StoreError):
    """The configured store folder holds files Stowage did not write: nothing is stored there."""

    code = "foreign_folder"


@dataclass(frozen=True)
class Inventory:
    """A store folder's top-level entries, split into the store's own and the rest (names, sorted)."""

    own: tuple[str, ...]
    foreign: tuple[str, ...]
    marked: bool  # the marker is there
    created_folder: bool  # the marker says Stowage made the folder itself


def read_marker(root: Path) -> dict | None:
    """The marker's record, or None (missing, a link, unreadable, or not Stowage's)."""
    path = Path(root) / MARKER_NAME
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 65_536:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == MARKER_FORMAT else None


def inventory(root: Path, companions: Iterable[str] = ()) -> Inventory:
    """Split ``root``'s entries: the store's names (and its companions'), real files and folders, vs the rest."""
    ours = STORE_NAMES | frozenset(companions)
    own: list[str] = []
    foreign: list[str] = []
    with os.scandir(root) as entries:
        for entry in entries:
            (own if entry.name in ours and not entry.is_symlink() else foreign).append(entry.name)
    marker = read_marker(root)
    return Inventory(
        tuple(sorted(own)), tuple(sorted(foreign)), marker is not None, bool(marker and marker.get("created_folder"))
    )


def describe(names: Iterable[str], limit: int = 6) -> str:
    listed = sorted(names)
    shown = ", ".join(listed[:limit])
    return shown + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def check(root: Path, companions: Iterable[str] = ()) -> Inventory | None:
    """``root``'s inventory (None when missing) if Stowage may keep a store there; else ``ForeignFolderError``.

    Changes nothing: the engine asks before anything of a session is written.
    """
    root = Path(root)
    try:
        found = inventory(root, companions)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise ForeignFolderError(f"the store folder {root} is a file, not a folder; nothing is stored") from None
    except OSError as exc:
        raise StoreError(f"cannot list the store folder {root}: {exc}") from exc
    if found.marked or not found.foreign or any(name in found.own for name in LEGACY_SIGNS):
        return found
    raise ForeignFolderError(
        f"the store folder {root} already holds files Stowage did not write ({describe(found.foreign)}); "
        "Stowage stores nothing there. Point stowage.store.path at a new or empty folder "
        "(or remove the setting to use $HERMES_HOME/stowage)"
    )


def refusal(root: Path, companions: Iterable[str] = ()) -> str | None:
    """Why Stowage stores nothing in ``root`` (its user's files are there), or None."""
    try:
        check(root, companions)
    except ForeignFolderError as exc:
        return str(exc)
    except StoreError:
        return None
    return None


def claim(root: Path, companions: Iterable[str] = ()) -> None:
    """Make ``root`` a store folder Stowage owns, or raise ``ForeignFolderError`` having changed nothing.

    A missing or empty folder is created and marked; a folder already
    marked is used as is; an unmarked folder holding an earlier version's
    store (its index or blob folder) is adopted and marked, so it keeps
    working; any other folder with entries Stowage does not write is refused.
    """
    root = Path(root)
    if read_marker(root) is not None:
        return
    found = check(root, companions)
    # Stowage made the folder: now, or an earlier version whose store fills it alone (not a folder the user made)
    created = found is None or (bool(found.own) and not found.foreign)
    try:
        if found is None:
            ensure_dir(root)
        record = {
            "format": MARKER_FORMAT,
            "version": 1,
            "created_at": time.time(),
            "created_folder": created,
            "adopted": bool(found and found.own),
            "note": "Stowage's store. `stowage uninstall --purge` deletes what Stowage wrote here and nothing else.",
        }
        path = root / MARKER_NAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return  # another process marked it first
    except OSError as exc:
        raise StoreError(f"cannot create the store folder {root}: {exc}") from exc
    try:
        os.write(fd, json.dumps(record, indent=1).encode("utf-8") + b"\n")
    except OSError as exc:
        os.close(fd)
        remove_quietly(path)
        raise StoreError(f"cannot mark the store folder {root}: {exc}") from exc
    os.close(fd)
