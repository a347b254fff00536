"""What rebuilds a lost index: the records each blob keeps beside it, and reading them back.

Every put appends a provenance record to the blob's ``.prov`` file (and a
grant to ``grants.jsonl``), best effort, so an index that is lost or damaged
can be rebuilt from the files alone: each blob re-indexed with the provenance
its records kept (the blob it stands for included), the logged grants
replayed.  Mixed into ``BlobStore`` (apart from writing and reading blobs);
the doctor reaches it through ``maintenance.Maintainable``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Callable

from . import safe_json
from .access import ReadAccess
from .fsutil import FILE_MODE, append_line, write_durable
from .index import Index, Tx
from .offsets import Offsets

log = logging.getLogger(__name__)
SHA_NAME = re.compile(r"[0-9a-f]{64}")


class IndexRebuild(ReadAccess):
    """The records a lost index is rebuilt from: appended, read back, replayed."""

    blobs_dir: Path
    quarantine_dir: Path
    index_path: Path
    grants_log: Path
    busy_timeout: float
    clock: Callable[[], float]

    def record_path(self, sha: str) -> Path:
        raise NotImplementedError

    @staticmethod
    def _append_record(path: Path, record: dict) -> None:
        """Best effort: a record that cannot be written costs only provenance after a rebuild."""
        try:
            append_line(path, json.dumps(record, ensure_ascii=False).encode("utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("could not append to %s: %s", path.name, exc)

    @staticmethod
    def _read_records(path: Path) -> list[dict]:
        try:
            raw = path.read_bytes()
        except OSError:
            return []
        out = []
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            record = safe_json.loads_or(line)  # None for a torn last line after a crash, garbage or a hostile line
            if isinstance(record, dict):
                out.append(record)
        return out

    def reindex(self, tx: Tx, sha: str, off: Offsets | None = None) -> bool:
        """Index an unindexed blob file, with the provenance its records kept (inside a write)."""
        path = self.blob_path(sha)
        off = off or self.index_file(path)
        if off.sha256 != sha or tx.get_blob(sha) is not None:
            return False
        records = self._read_records(self.record_path(sha))
        times = [r["at"] for r in records if isinstance(r.get("at"), (int, float))]
        created = min(times) if times else path.stat().st_mtime
        types = [r["content_type"] for r in records if isinstance(r.get("content_type"), str)]
        write_durable(self.sidecar_path(sha), off.to_bytes(), self.tmp_dir)
        tx.insert_blob(off, types[0] if types else "unknown", created)
        tx.delete_tombstone(sha)
        for r in records:
            session = r.get("session_id") if isinstance(r.get("session_id"), str) else None
            at = r["at"] if isinstance(r.get("at"), (int, float)) else created
            tx.add_provenance(
                sha,
                session,
                _text_field(r, "tool_name"),
                _text_field(r, "tool_args"),
                _text_field(r, "kind", "spill"),
                at,
                _sha_field(r, "source"),
            )
        self.forget(sha)
        return True

    def rebuild_index(self) -> int:
        """Set an unreadable index aside (in quarantine/) and rebuild it from the blob files.

        Provenance comes from each blob's records and grants from ``grants.jsonl``,
        so every session reads what it produced; tombstones and fetch counts are lost.
        Returns the number of blobs indexed.
        """
        self._index.close()
        stamp = f"{int(time.time())}-{os.getpid()}"
        for suffix in ("", "-wal", "-shm"):
            old = Path(str(self.index_path) + suffix)
            if old.exists():
                os.replace(old, self.quarantine_dir / f"{self.index_path.name}{suffix}-{stamp}")
        os.close(os.open(self.index_path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        os.chmod(self.index_path, FILE_MODE)
        self._index = Index(self.index_path, self.busy_timeout)
        count = 0
        with self._index.write() as tx:
            for path in sorted(self.blobs_dir.glob("[0-9a-f][0-9a-f]/*")):
                if SHA_NAME.fullmatch(path.name) and path.name[:2] == path.parent.name and path.is_file():
                    count += self.reindex(tx, path.name)
            self.replay_grants(tx)
        return count

    def replay_grants(self, tx: Tx) -> None:
        """Re-apply the logged grants to re-indexed blobs (idempotent)."""
        now = self.clock()
        for record in self._read_records(self.grants_log):
            if isinstance(record.get("revoke"), str) and isinstance(record.get("sha"), str):
                tx.revoke(record["sha"], record["revoke"])  # a purge took this session's claim away
                continue
            target = record.get("target")
            if not isinstance(target, str):
                continue
            if isinstance(record.get("source"), str):
                tx.grant_session(record["source"], target, now)
            elif isinstance(record.get("sha"), str) and tx.get_blob(record["sha"]) is not None:
                tx.grant(record["sha"], target, now)


def _text_field(record: dict, key: str, default: str = "") -> str:
    """A string field of a provenance record read back from disk (anything else: the default)."""
    value = record.get(key)
    return value if isinstance(value, str) else default


def _sha_field(record: dict, key: str) -> str | None:
    """A full sha-256 field of a record read back from disk (a record written before the field, or garbage: None)."""
    value = record.get(key)
    return value if isinstance(value, str) and SHA_NAME.fullmatch(value) else None
