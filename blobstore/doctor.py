"""Store doctor: cross-check files, sidecars and the index, and repair what is safe.

Checks run without the write lock (hashing a large store takes a while); each
repair then re-checks its condition under the lock, so the doctor can run
next to live writers without removing anything they are about to commit.

Severity: ``warning`` is residue a crash or an interrupted write can leave
(temp files, unindexed but valid blobs, stale sidecars) and that reads already
tolerate; ``error`` means the index and the disk disagree or bytes are corrupt.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from sqlite3 import Row
from typing import Any, Callable

from .errors import StoreError, StoreIndexError
from .fsutil import DIR_MODE, FILE_MODE, TEMP_SUFFIX, mode_of, remove_quietly, temp_in_use, write_durable
from .maintenance import Maintainable
from .offsets import Offsets, SidecarError
from .retention import REASON_CORRUPT, REASON_MISSING

_SHA = re.compile(r"[0-9a-f]{64}")
_SUB = re.compile(r"[0-9a-f]{2}")
WARNING, ERROR = "warning", "error"


@dataclass
class DoctorIssue:
    """One finding.  ``subject`` is a sha or a path relative to the store root."""

    kind: str
    severity: str
    subject: str
    detail: str
    repairable: bool
    repaired: bool = False


@dataclass
class DoctorReport:
    """Outcome of ``BlobStore.doctor``.

    ``consistent``: every indexed blob is present and intact (warnings allowed).
    ``clean``: nothing left to report at all.
    """

    root: str
    repair: bool
    verified: bool
    blobs_checked: int = 0
    bytes_checked: int = 0
    temp_in_progress: int = 0
    issues: list[DoctorIssue] = field(default_factory=list)

    @property
    def open_issues(self) -> list[DoctorIssue]:
        return [i for i in self.issues if not i.repaired]

    @property
    def consistent(self) -> bool:
        return not any(i.severity == ERROR for i in self.open_issues)

    @property
    def clean(self) -> bool:
        return not self.open_issues

    def kinds(self) -> set[str]:
        return {i.kind for i in self.open_issues}

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(consistent=self.consistent, clean=self.clean)
        return out


class _Doctor:
    def __init__(self, store: Maintainable, repair: bool, verify: bool, temp_grace: float) -> None:
        self.store = store
        self.repair = repair
        self.verify = verify
        self.temp_grace = temp_grace
        self.report = DoctorReport(str(store.root), repair, verify)
        self.progress: Callable[[int, int, int], None] | None = None

    def issue(self, kind: str, severity: str, subject: str, detail: str, fix: Any = None) -> None:
        item = DoctorIssue(kind, severity, subject, detail, repairable=fix is not None)
        self.report.issues.append(item)
        if self.repair and fix is not None:
            try:
                item.repaired = bool(fix())
            except (OSError, StoreError) as exc:
                item.detail += f" (repair failed: {exc})"

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.store.root))

    # -- checks -------------------------------------------------------------------
    def run(self) -> DoctorReport:
        st = self.store
        for folder in (st.root, st.blobs_dir, st.tmp_dir, st.trash_dir, st.quarantine_dir):
            self.check_mode(folder, DIR_MODE)
        for suffix in ("", "-wal", "-shm"):
            path = Path(str(st.index_path) + suffix)
            if path.exists():
                self.check_mode(path, FILE_MODE)
        self.check_temps()
        try:
            with st.index.read() as tx:
                rows = tx.all_blobs()
                tombs = tx.tombstone_shas()
        except StoreIndexError as exc:
            return self.index_unreadable(str(exc))
        blobs, sidecars = self.walk()
        for done, (sha, path) in enumerate(sorted(blobs.items()), 1):
            self.check_blob(sha, path, rows.get(sha), sha in tombs, sha in sidecars)
            if self.progress is not None:
                self.progress(done, len(blobs), self.report.bytes_checked)
        if any(i.kind == "orphan-blob" and i.repaired for i in self.report.issues):
            with st.index.write() as tx:  # re-indexed blobs get their logged grants back
                st.replay_grants(tx)
        trashed = self.check_trash(rows, blobs)
        for sha in self.confirm_missing(set(rows) - set(blobs) - trashed):
            self.issue(
                "missing-blob", ERROR, sha, "indexed but its file is missing", lambda sha=sha: self.fix_missing(sha)
            )
        for sha in sorted(set(sidecars) - set(blobs) - set(rows)):
            self.issue(
                "orphan-sidecar",
                WARNING,
                self.rel(sidecars[sha]),
                "sidecar without a blob",
                lambda sha=sha: self.fix_orphan_sidecar(sha),
            )
        for sha in sorted(set(self.records) - set(blobs) - set(rows)):
            self.issue(
                "orphan-record",
                WARNING,
                self.rel(self.records[sha]),
                "provenance record without a blob",
                lambda sha=sha: self.fix_orphan_record(sha),
            )
        self.check_index()
        return self.report

    def index_unreadable(self, why: str) -> DoctorReport:
        """The index cannot be read: count (and verify) the blob files, offer a rebuild from them."""
        blobs, _ = self.walk()
        for sha, path in sorted(blobs.items()):
            self.report.blobs_checked += 1
            if self.verify:
                off = self.store.index_file(path)
                self.report.bytes_checked += off.size
                if off.sha256 != sha:
                    self.issue("corrupt-blob", ERROR, sha, f"content hashes to {off.sha256[:16]}")
        self.issue(
            "index-unreadable",
            ERROR,
            "index.sqlite3",
            f"{why}; {len(blobs):,} blob files are on disk and can be re-indexed from their records",
            self.fix_rebuild,
        )
        if self.repair and self.report.issues[-1].repaired:  # check the rebuilt store like any other
            again = _Doctor(self.store, self.repair, self.verify, self.temp_grace).run()
            self.report.issues += [i for i in again.issues if i.kind != "stale-temp"]
        return self.report

    def confirm_missing(self, candidates: set[str]) -> list[str]:
        """Drop rows that a concurrent eviction removed after our snapshot (checked under the lock)."""
        if not candidates:
            return []
        st = self.store
        with st.index.write() as tx:
            return sorted(
                sha
                for sha in candidates
                if tx.get_blob(sha) is not None
                and not st.blob_path(sha).exists()
                and not any(st.trash_dir.glob(f"{sha}-*"))
            )

    def check_mode(self, path: Path, want: int) -> None:
        try:
            mode = mode_of(path)
        except FileNotFoundError:
            return
        if mode != want:
            self.issue(
                "bad-permissions",
                WARNING,
                self.rel(path) or ".",
                f"mode {mode:o}, expected {want:o}",
                lambda: _chmod(path, want),
            )

    def check_temps(self) -> None:
        now = time.time()
        for path in sorted(self.store.tmp_dir.iterdir()):
            self.check_mode(path, FILE_MODE)
            try:
                young = now - path.stat().st_mtime < self.temp_grace
            except FileNotFoundError:
                continue
            if young or temp_in_use(path):
                self.report.temp_in_progress += 1
                continue
            what = (
                "temp file left by an interrupted write"
                if path.name.endswith(TEMP_SUFFIX)
                else "unexpected file in tmp/"
            )
            self.issue(
                "stale-temp",
                WARNING,
                self.rel(path),
                what,
                lambda path=path: not temp_in_use(path) and remove_quietly(path),
            )

    def check_trash(self, rows: dict[str, Row], blobs: dict[str, Path]) -> set[str]:
        """Trash entries: interrupted evictions (restore) or leftovers (delete)."""
        interrupted: set[str] = set()
        for path in sorted(self.store.trash_dir.iterdir()):
            sha = path.name[:64]
            if sha in rows and sha not in blobs and _SHA.fullmatch(sha):
                interrupted.add(sha)
                self.issue(
                    "interrupted-eviction",
                    WARNING,
                    sha,
                    "indexed blob sits in trash/ after an eviction that did not commit",
                    lambda sha=sha: self.fix_interrupted(sha),
                )
            else:
                self.issue(
                    "trash-leftover",
                    WARNING,
                    self.rel(path),
                    "evicted blob file not yet deleted",
                    lambda path=path: self.fix_trash(path),
                )
        return interrupted

    def walk(self) -> tuple[dict[str, Path], dict[str, Path]]:
        blobs: dict[str, Path] = {}
        sidecars: dict[str, Path] = {}
        self.records: dict[str, Path] = {}
        for sub in sorted(self.store.blobs_dir.iterdir()):
            if not (sub.is_dir() and _SUB.fullmatch(sub.name)):
                self.stray(sub)
                continue
            self.check_mode(sub, DIR_MODE)
            for path in sorted(sub.iterdir()):
                name = path.name
                if _SHA.fullmatch(name) and name[:2] == sub.name and path.is_file():
                    blobs[name] = path
                elif name.endswith(".off") and _SHA.fullmatch(name[:-4]) and name[:2] == sub.name:
                    sidecars[name[:-4]] = path
                elif name.endswith(".prov") and _SHA.fullmatch(name[:-5]) and name[:2] == sub.name:
                    self.records[name[:-5]] = path
                else:
                    self.stray(path)
                    continue
                self.check_mode(path, FILE_MODE)
        return blobs, sidecars

    def stray(self, path: Path) -> None:
        self.issue("stray-file", WARNING, self.rel(path), "unexpected entry in blobs/", lambda: self.quarantine(path))

    def check_blob(self, sha: str, path: Path, row: Row | None, tombstoned: bool, has_side: bool) -> None:
        st = self.store
        self.report.blobs_checked += 1
        off: Offsets | None = None
        try:
            stat = path.stat()
        except FileNotFoundError:  # evicted while we were walking
            return
        if self.verify:
            try:
                off = st.index_file(path)
            except FileNotFoundError:  # evicted while we were hashing
                return
            self.report.bytes_checked += off.size
            if off.sha256 != sha:
                self.issue(
                    "corrupt-blob",
                    ERROR,
                    sha,
                    f"content hashes to {off.sha256[:16]}",
                    lambda: self.fix_corrupt(sha, path, stat),
                )
                return
        if row is None:
            if tombstoned:
                self.issue(
                    "evicted-leftover",
                    WARNING,
                    sha,
                    "file of an evicted blob is still on disk",
                    lambda: self.fix_leftover(sha),
                )
            else:
                self.issue(
                    "orphan-blob", WARNING, sha, "valid blob file with no index row", lambda: self.fix_orphan(sha, off)
                )
            return  # the repair (re-index or delete) takes care of the sidecar too
        if row["size"] != stat.st_size or (
            off is not None
            and (row["line_count"], row["char_count"], bool(row["is_utf8"]))
            != (off.line_count, off.char_count, off.is_utf8)
        ):
            self.issue(
                "metadata-mismatch",
                ERROR,
                sha,
                "index metadata disagrees with the file",
                (lambda: self.fix_metadata(sha, off)) if off is not None else None,
            )
        side = st.sidecar_path(sha)
        problem = "missing" if not has_side else None
        if problem is None:
            try:
                parsed = Offsets.from_bytes(side.read_bytes(), sha)
                if off is not None and parsed.to_bytes() != off.to_bytes():
                    problem = "out of date"
                elif parsed.size != stat.st_size:
                    problem = "for a different size"
            except (SidecarError, OSError) as exc:
                problem = str(exc)
        if problem:
            self.issue("bad-sidecar", WARNING, sha, f"sidecar {problem}", lambda: self.fix_sidecar(sha, off))

    def check_index(self) -> None:
        try:
            with self.store.index.read() as tx:
                result = tx.quick_check()
                dangling = tx.dangling_rows()
        except StoreIndexError as exc:
            result, dangling = str(exc), 0
        if result != "ok":
            self.issue(
                "index-integrity",
                ERROR,
                "index.sqlite3",
                f"{result}; `--repair` rebuilds the index from the blob files and their records",
                self.fix_rebuild,
            )
        if dangling:
            self.issue(
                "dangling-rows",
                WARNING,
                "index.sqlite3",
                f"{dangling} provenance/grant/pin rows for blobs that are gone",
                self.fix_dangling,
            )

    # -- repairs (each re-checks its condition under the write lock) ---------------------
    def fix_missing(self, sha: str) -> bool:
        st = self.store
        with st.index.write() as tx:
            if tx.get_blob(sha) is None or st.blob_path(sha).exists():
                return False
            st.evict_in(tx, sha, REASON_MISSING, "found missing by the store doctor")
        return True

    def fix_corrupt(self, sha: str, path: Path, stat: os.stat_result) -> bool:
        st = self.store
        with st.index.write() as tx:
            now_stat = path.stat()
            if (now_stat.st_ino, now_stat.st_size, now_stat.st_mtime_ns) != (
                stat.st_ino,
                stat.st_size,
                stat.st_mtime_ns,
            ):
                return False  # replaced meanwhile (a re-put heals corrupt blobs)
            self.quarantine(path)
            if tx.get_blob(sha) is not None:
                st.evict_in(tx, sha, REASON_CORRUPT, "quarantined by the store doctor")
            else:
                remove_quietly(st.sidecar_path(sha))
        return True

    def quarantine(self, path: Path) -> bool:
        target = self.store.quarantine_dir / f"{path.name}-{int(time.time())}-{os.getpid()}"
        os.replace(path, target)
        return True

    def fix_interrupted(self, sha: str) -> bool:
        with self.store.index.write() as tx:
            return self.store.restore_from_trash(tx, sha)

    def fix_trash(self, path: Path) -> bool:
        st = self.store
        with st.index.write() as tx:
            sha = path.name[:64]
            if tx.get_blob(sha) is not None and not st.blob_path(sha).exists():
                return False  # became an interrupted eviction: restore instead
            return remove_quietly(path)

    def fix_leftover(self, sha: str) -> bool:
        st = self.store
        with st.index.write() as tx:
            if tx.get_blob(sha) is not None:
                return False
            st.remove_files(tx, sha)
        return True

    def fix_orphan(self, sha: str, off: Offsets | None) -> bool:
        st = self.store
        path = st.blob_path(sha)
        off = off or st.index_file(path)
        if off.sha256 != sha:
            return False
        with st.index.write() as tx:
            if tx.get_blob(sha) is not None or not path.exists():
                return False
            return st.reindex(tx, sha, off)

    def fix_rebuild(self) -> bool:
        self.store.rebuild_index()
        return True

    def fix_orphan_record(self, sha: str) -> bool:
        st = self.store
        with st.index.write():
            if st.blob_path(sha).exists():
                return False
            return remove_quietly(st.record_path(sha))

    def fix_metadata(self, sha: str, off: Offsets) -> bool:
        with self.store.index.write() as tx:
            tx.update_metadata(off)
        return True

    def fix_sidecar(self, sha: str, off: Offsets | None) -> bool:
        st = self.store
        off = off or st.index_file(st.blob_path(sha))
        if off.sha256 != sha:
            return False
        with st.index.write() as tx:
            if not st.blob_path(sha).exists():
                return False
            write_durable(st.sidecar_path(sha), off.to_bytes(), st.tmp_dir)
            tx.set_sidecar_seal(off)
        st.forget(sha)
        return True

    def fix_orphan_sidecar(self, sha: str) -> bool:
        st = self.store
        with st.index.write():
            if st.blob_path(sha).exists():
                return False
            return remove_quietly(st.sidecar_path(sha))

    def fix_dangling(self) -> bool:
        with self.store.index.write() as tx:
            tx.delete_dangling()
        return True


def _chmod(path: Path, mode: int) -> bool:
    os.chmod(path, mode)
    return True


def run_doctor(
    store: Maintainable,
    repair: bool = False,
    verify: bool = True,
    temp_grace_seconds: float = 5.0,
    progress: Callable[[int, int, int], None] | None = None,
) -> DoctorReport:
    """Check the store; with ``repair``, fix what is safe.  See module docstring.

    ``progress(done, total, bytes_checked)`` is called as blob files are checked (large stores take a while).
    """
    doctor = _Doctor(store, repair, verify, temp_grace_seconds)
    doctor.progress = progress
    return doctor.run()
