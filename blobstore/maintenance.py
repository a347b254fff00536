"""What the store doctor may do to a store: a narrow, typed maintenance API.

``BlobStore`` implements it; the doctor is written against this protocol
only, so it never reaches into the store's privates and ``doctor.py`` does
not import ``store.py`` (the store imports the doctor, not the reverse).
Every method that takes a ``Tx`` runs inside the caller's write transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

from .index import Index, Tx
from .offsets import Offsets
from .records import Tombstone


class Maintainable(Protocol):
    root: Path
    blobs_dir: Path
    tmp_dir: Path
    trash_dir: Path
    quarantine_dir: Path
    index_path: Path
    clock: Callable[[], float]

    @property
    def index(self) -> Index: ...

    def blob_path(self, sha: str) -> Path: ...

    def sidecar_path(self, sha: str) -> Path: ...

    def record_path(self, sha: str) -> Path: ...

    def index_file(self, path: Path) -> Offsets:
        """Hash and index a file's bytes."""

    def forget(self, sha: str) -> None:
        """Drop the cached sidecar of ``sha`` (after it was rewritten)."""

    def remove_files(self, tx: Tx, sha: str) -> None:
        """Move a blob's files away (unlinked after commit)."""

    def evict_in(self, tx: Tx, sha: str, reason: str, detail: str) -> Tombstone:
        """Replace a blob by its tombstone."""

    def restore_from_trash(self, tx: Tx, sha: str) -> bool:
        """Undo an eviction that never committed."""

    def reindex(self, tx: Tx, sha: str, off: Offsets | None = None) -> bool:
        """Index an unindexed blob file with the provenance its records kept."""

    def replay_grants(self, tx: Tx) -> None:
        """Re-apply the logged grants."""

    def rebuild_index(self) -> int:
        """Set an unreadable index aside and rebuild it from the blob files."""
