"""SQLite metadata index shared by every process that opens the store.

The Hermes gateway and CLI share one ``$HERMES_HOME``, so the index must take
concurrent writers: WAL mode (readers never block), a busy timeout, and
``BEGIN IMMEDIATE`` for writes so two writers queue instead of deadlocking on
a lock upgrade.  Connections are per thread and per pid: a connection that
crossed a ``fork`` is abandoned, never used or closed, because closing it in
the child could disturb the parent's locks.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .errors import StoreIndexError
from .handles import prefix_upper_bound
from .offsets import Offsets
from .records import Provenance, Tombstone

SCHEMA_VERSION = 4  # 2: blobs.sidecar_seal; 3: pins; 4: provenance.source
MAX_ARGS_CHARS = 1000
MAX_TOMBSTONE_SESSIONS = 64

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS blobs(
        sha TEXT PRIMARY KEY, size INTEGER NOT NULL, line_count INTEGER NOT NULL,
        char_count INTEGER NOT NULL, is_utf8 INTEGER NOT NULL, content_type TEXT NOT NULL,
        created_at REAL NOT NULL, last_access REAL NOT NULL, last_fetch REAL,
        fetch_count INTEGER NOT NULL DEFAULT 0, sidecar_seal TEXT) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS blobs_lru ON blobs(last_access)",
    """CREATE TABLE IF NOT EXISTS provenance(
        id INTEGER PRIMARY KEY, sha TEXT NOT NULL, session_id TEXT, tool_name TEXT NOT NULL,
        tool_args TEXT NOT NULL, kind TEXT NOT NULL, first_at REAL NOT NULL,
        last_at REAL NOT NULL, count INTEGER NOT NULL DEFAULT 1, source TEXT)""",
    "CREATE INDEX IF NOT EXISTS provenance_sha ON provenance(sha)",
    "CREATE INDEX IF NOT EXISTS provenance_session ON provenance(session_id, sha)",
    """CREATE TABLE IF NOT EXISTS grants(
        sha TEXT NOT NULL, session_id TEXT NOT NULL, granted_at REAL NOT NULL,
        PRIMARY KEY(sha, session_id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS grants_session ON grants(session_id, sha)",
    """CREATE TABLE IF NOT EXISTS sessions(
        id TEXT PRIMARY KEY, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
        live INTEGER NOT NULL) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS tombstones(
        sha TEXT PRIMARY KEY, size INTEGER NOT NULL, content_type TEXT NOT NULL,
        evicted_at REAL NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL,
        tool_name TEXT NOT NULL, tool_args TEXT NOT NULL, session_id TEXT, kind TEXT NOT NULL,
        created_at REAL, sessions TEXT NOT NULL, origins TEXT NOT NULL) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS tombstones_age ON tombstones(evicted_at)",
    # What each live session's current request shows verbatim or points to: the size cap spares these.
    """CREATE TABLE IF NOT EXISTS pins(
        session_id TEXT NOT NULL, sha TEXT NOT NULL, PRIMARY KEY(session_id, sha)) WITHOUT ROWID""",
]

# Connections inherited across fork(): kept referenced so they are never closed.
_ABANDONED: list[sqlite3.Connection] = []


def clip_args(text: str) -> str:
    return text if len(text) <= MAX_ARGS_CHARS else text[: MAX_ARGS_CHARS - 1] + "\u2026"


class Tx:
    """Queries over one connection, used inside a read or write transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.undo: list[Callable[[], object]] = []
        self.then: list[Callable[[], object]] = []

    def on_rollback(self, action: Callable[[], object]) -> None:
        """Run ``action`` if the transaction fails, while the write lock is still held."""
        self.undo.append(action)

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run ``action`` once the transaction has committed (best effort)."""
        self.then.append(action)

    def execute(self, sql: str, params: tuple | list = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    # -- blobs ---------------------------------------------------------------
    def get_blob(self, sha: str) -> sqlite3.Row | None:
        return self.execute("SELECT * FROM blobs WHERE sha=?", (sha,)).fetchone()

    def insert_blob(self, off: Offsets, content_type: str, now: float) -> None:
        self.execute(
            "INSERT OR REPLACE INTO blobs(sha,size,line_count,char_count,is_utf8,content_type,"
            "created_at,last_access,last_fetch,fetch_count,sidecar_seal) VALUES(?,?,?,?,?,?,?,?,NULL,0,?)",
            (
                off.sha256,
                off.size,
                off.line_count,
                off.char_count,
                int(off.is_utf8),
                content_type,
                now,
                now,
                off.seal().hex(),
            ),
        )

    def sidecar_seal(self, sha: str) -> str | None:
        """The seal of the sidecar written from the verified bytes (None: unknown)."""
        row = self.execute("SELECT sidecar_seal FROM blobs WHERE sha=?", (sha,)).fetchone()
        return row[0] if row else None

    def set_sidecar_seal(self, off: Offsets) -> None:
        self.execute("UPDATE blobs SET sidecar_seal=? WHERE sha=?", (off.seal().hex(), off.sha256))

    def update_metadata(self, off: Offsets) -> None:
        self.execute(
            "UPDATE blobs SET size=?, line_count=?, char_count=?, is_utf8=? WHERE sha=?",
            (off.size, off.line_count, off.char_count, int(off.is_utf8), off.sha256),
        )

    def touch_blob(self, sha: str, now: float) -> None:
        self.execute("UPDATE blobs SET last_access=max(last_access, ?) WHERE sha=?", (now, sha))

    def record_fetch(self, sha: str, now: float) -> bool:
        cur = self.execute(
            "UPDATE blobs SET fetch_count=fetch_count+1, last_fetch=?, last_access=max(last_access, ?) WHERE sha=?",
            (now, now, sha),
        )
        return cur.rowcount > 0

    def delete_blob(self, sha: str) -> None:
        for table in ("blobs", "provenance", "grants", "pins"):
            self.execute(f"DELETE FROM {table} WHERE sha=?", (sha,))

    def total_bytes(self) -> int:
        return int(self.execute("SELECT coalesce(sum(size),0) FROM blobs").fetchone()[0])

    def prefix_matches(self, table: str, prefix: str, limit: int = 2) -> list[str]:
        rows = self.execute(
            f"SELECT sha FROM {table} WHERE sha>=? AND sha<? ORDER BY sha LIMIT ?",
            (prefix, prefix_upper_bound(prefix), limit),
        )
        return [r[0] for r in rows]

    def neighbours(self, sha: str) -> list[str]:
        """Closest other keys on each side, among live blobs and tombstones."""
        out: list[str] = []
        for table in ("blobs", "tombstones"):
            for op, order in (("<", "DESC"), (">", "ASC")):
                row = self.execute(
                    f"SELECT sha FROM {table} WHERE sha{op}? ORDER BY sha {order} LIMIT 1", (sha,)
                ).fetchone()
                if row:
                    out.append(row[0])
        return out

    # -- provenance, grants, sessions --------------------------------------------
    def add_provenance(
        self,
        sha: str,
        session_id: str | None,
        tool_name: str,
        tool_args: str,
        kind: str,
        now: float,
        source: str | None = None,
    ) -> None:
        """One production of ``sha``; ``source``: the sha of the blob it stands for (a preview's original)."""
        args = clip_args(tool_args)
        cur = self.execute(
            "UPDATE provenance SET count=count+1, last_at=? WHERE sha=? AND session_id IS ? "
            "AND tool_name=? AND tool_args=? AND kind=? AND source IS ?",
            (now, sha, session_id, tool_name, args, kind, source),
        )
        if cur.rowcount == 0:
            self.execute(
                "INSERT INTO provenance(sha,session_id,tool_name,tool_args,kind,first_at,last_at,source)"
                " VALUES(?,?,?,?,?,?,?,?)",
                (sha, session_id, tool_name, args, kind, now, now, source),
            )

    def source_of(self, sha: str) -> str | None:
        """The blob ``sha`` stands for, as its newest production that names one recorded it (None: none does)."""
        row = self.execute(
            "SELECT source FROM provenance WHERE sha=? AND source IS NOT NULL ORDER BY last_at DESC, id DESC LIMIT 1",
            (sha,),
        ).fetchone()
        return row[0] if row else None

    def provenance(self, sha: str) -> list[Provenance]:
        rows = self.execute(
            "SELECT session_id,tool_name,tool_args,kind,first_at,last_at,count FROM provenance "
            "WHERE sha=? ORDER BY last_at DESC, id DESC",
            (sha,),
        )
        return [Provenance(*row) for row in rows]

    def readers(self, sha: str) -> list[str]:
        rows = self.execute(
            "SELECT session_id FROM provenance WHERE sha=? AND session_id IS NOT NULL "
            "UNION SELECT session_id FROM grants WHERE sha=?",
            (sha, sha),
        )
        return [r[0] for r in rows]

    def can_read(self, sha: str, session_id: str) -> bool:
        row = self.execute(
            "SELECT EXISTS(SELECT 1 FROM provenance WHERE session_id=? AND sha=?) OR "
            "EXISTS(SELECT 1 FROM grants WHERE sha=? AND session_id=?)",
            (session_id, sha, sha, session_id),
        ).fetchone()
        return bool(row[0])

    def grant(self, sha: str, session_id: str, now: float) -> None:
        self.execute("INSERT OR IGNORE INTO grants(sha,session_id,granted_at) VALUES(?,?,?)", (sha, session_id, now))

    def grant_session(self, source: str, target: str, now: float) -> int:
        cur = self.execute(
            "INSERT OR IGNORE INTO grants(sha,session_id,granted_at) SELECT sha, ?, ? FROM "
            "(SELECT sha FROM provenance WHERE session_id=? UNION SELECT sha FROM grants "
            "WHERE session_id=?) WHERE sha IN (SELECT sha FROM blobs)",
            (target, now, source, source),
        )
        return cur.rowcount

    def touch_session(self, session_id: str, now: float, live: bool | None) -> None:
        self.execute(
            "INSERT INTO sessions(id,first_seen,last_seen,live) VALUES(?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET last_seen=max(last_seen, excluded.last_seen), "
            "live=coalesce(?, live)",
            (session_id, now, now, 1 if live is None else int(live), None if live is None else int(live)),
        )

    def session_row(self, session_id: str) -> tuple[bool, float] | None:
        """``(live flag, last seen)`` of a session the store knows."""
        row = self.execute("SELECT live, last_seen FROM sessions WHERE id=?", (session_id,)).fetchone()
        return (bool(row[0]), float(row[1])) if row is not None else None

    def produced_by(self, session_id: str) -> list[str]:
        """Stored blobs ``session_id`` produced (not those only granted to it)."""
        return [
            r[0]
            for r in self.execute(
                "SELECT DISTINCT p.sha FROM provenance p JOIN blobs b ON b.sha=p.sha WHERE p.session_id=?",
                (session_id,),
            )
        ]

    def held_by(self, session_id: str) -> list[str]:
        """Stored blobs ``session_id`` produced or was granted."""
        return [
            r[0]
            for r in self.execute(
                "SELECT p.sha FROM provenance p JOIN blobs b ON b.sha=p.sha WHERE p.session_id=? UNION "
                "SELECT g.sha FROM grants g JOIN blobs b ON b.sha=g.sha WHERE g.session_id=?",
                (session_id, session_id),
            )
        ]

    def revoke(self, sha: str, session_id: str) -> None:
        """Take back a grant of ``sha`` to ``session_id``."""
        self.execute("DELETE FROM grants WHERE sha=? AND session_id=?", (sha, session_id))

    def drop_claims(self, sha: str, session_id: str) -> None:
        """Forget that ``session_id`` produced or was granted ``sha`` (the bytes stay for the others)."""
        self.execute("DELETE FROM provenance WHERE sha=? AND session_id=?", (sha, session_id))
        self.execute("DELETE FROM grants WHERE sha=? AND session_id=?", (sha, session_id))

    def live_held(self, seen_since: float) -> set[str]:
        """Shas produced in or granted to a session flagged live and seen since ``seen_since``."""
        rows = self.execute(
            "SELECT p.sha FROM provenance p JOIN sessions s ON s.id=p.session_id "
            "WHERE s.live=1 AND s.last_seen>=? UNION "
            "SELECT g.sha FROM grants g JOIN sessions s ON s.id=g.session_id "
            "WHERE s.live=1 AND s.last_seen>=?",
            (seen_since, seen_since),
        )
        return {r[0] for r in rows}

    def prune_sessions(self, seen_before: float) -> int:
        """Drop sessions not seen since ``seen_before`` that no longer hold anything."""
        return self.execute(
            "DELETE FROM sessions WHERE last_seen<? AND NOT EXISTS(SELECT 1 FROM provenance p "
            "WHERE p.session_id=sessions.id) AND NOT EXISTS(SELECT 1 FROM grants g "
            "WHERE g.session_id=sessions.id)",
            (seen_before,),
        ).rowcount

    # -- pins: what the sessions' current requests show or point to ----------------
    def set_pins(self, session_id: str, shas: Iterable[str]) -> None:
        """Replace ``session_id``'s pins (only stored blobs are kept); only the difference is written."""
        wanted, current = set(shas), self.pins_of(session_id)
        self.conn.executemany(
            "DELETE FROM pins WHERE session_id=? AND sha=?", [(session_id, sha) for sha in current - wanted]
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO pins(session_id, sha) SELECT ?, sha FROM blobs WHERE sha=?",
            [(session_id, sha) for sha in wanted - current],
        )

    def add_pin(self, session_id: str, sha: str) -> None:
        self.execute("INSERT OR IGNORE INTO pins(session_id, sha) VALUES(?,?)", (session_id, sha))

    def clear_pins(self, session_id: str) -> None:
        self.execute("DELETE FROM pins WHERE session_id=?", (session_id,))

    def pins_of(self, session_id: str) -> set[str]:
        return {r[0] for r in self.execute("SELECT sha FROM pins WHERE session_id=?", (session_id,))}

    def pinned(self, seen_since: float) -> set[str]:
        """Shas pinned by a session flagged live and seen since ``seen_since``."""
        rows = self.execute(
            "SELECT p.sha FROM pins p JOIN sessions s ON s.id=p.session_id WHERE s.live=1 AND s.last_seen>=?",
            (seen_since,),
        )
        return {r[0] for r in rows}

    # -- scans for retention and the doctor ---------------------------------------
    def lru_blobs(self, used_before: float | None = None) -> list[sqlite3.Row]:
        """``sha, size, last_access, last_fetch`` of blobs, least recently used first."""
        if used_before is None:
            return self.execute(
                "SELECT sha,size,last_access,last_fetch FROM blobs ORDER BY last_access, created_at, sha"
            ).fetchall()
        return self.execute(
            "SELECT sha,size,last_access,last_fetch FROM blobs WHERE last_access<? ORDER BY last_access, sha",
            (used_before,),
        ).fetchall()

    def created_before(self, cutoff: float) -> list[str]:
        return [r[0] for r in self.execute("SELECT sha FROM blobs WHERE created_at<?", (cutoff,))]

    def all_blobs(self) -> dict[str, sqlite3.Row]:
        return {r["sha"]: r for r in self.execute("SELECT * FROM blobs")}

    def tombstone_shas(self) -> set[str]:
        return {r[0] for r in self.execute("SELECT sha FROM tombstones")}

    def quick_check(self) -> str:
        """SQLite's own integrity check: ``ok`` or what is wrong."""
        return str(self.execute("PRAGMA quick_check").fetchone()[0])

    def dangling_rows(self) -> int:
        """Provenance and grant rows whose blob is gone."""
        return int(
            self.execute(
                "SELECT (SELECT count(*) FROM provenance WHERE sha NOT IN (SELECT sha FROM blobs))"
                " + (SELECT count(*) FROM grants WHERE sha NOT IN (SELECT sha FROM blobs))"
                " + (SELECT count(*) FROM pins WHERE sha NOT IN (SELECT sha FROM blobs))"
            ).fetchone()[0]
        )

    def delete_dangling(self) -> None:
        for table in ("provenance", "grants", "pins"):
            self.execute(f"DELETE FROM {table} WHERE sha NOT IN (SELECT sha FROM blobs)")

    # -- tombstones ----------------------------------------------------------
    def tombstone(self, sha: str) -> Tombstone | None:
        row = self.execute("SELECT * FROM tombstones WHERE sha=?", (sha,)).fetchone()
        return _tombstone(row) if row else None

    def insert_tombstone(self, t: Tombstone) -> None:
        self.execute(
            "INSERT OR REPLACE INTO tombstones(sha,size,content_type,evicted_at,reason,detail,"
            "tool_name,tool_args,session_id,kind,created_at,sessions,origins) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                t.sha256,
                t.size,
                t.content_type,
                t.evicted_at,
                t.reason,
                t.detail,
                t.tool_name,
                t.tool_args,
                t.session_id,
                t.kind,
                t.created_at,
                json.dumps(list(t.sessions[:MAX_TOMBSTONE_SESSIONS])),
                json.dumps([o.to_dict() for o in t.origins[:MAX_TOMBSTONE_SESSIONS]]),
            ),
        )

    def delete_tombstone(self, sha: str) -> None:
        self.execute("DELETE FROM tombstones WHERE sha=?", (sha,))

    def count_tombstones_before(self, cutoff: float) -> int:
        return int(self.execute("SELECT count(*) FROM tombstones WHERE evicted_at<?", (cutoff,)).fetchone()[0])

    def delete_tombstones_before(self, cutoff: float) -> int:
        return self.execute("DELETE FROM tombstones WHERE evicted_at<?", (cutoff,)).rowcount

    def tombstoned_for(self, session_id: str, reason: str) -> tuple[int, int]:
        """``(count, bytes)`` of tombstones with ``reason`` that ``session_id`` could read."""
        row = self.execute(
            "SELECT count(*), coalesce(sum(size),0) FROM tombstones t WHERE reason=? AND "
            "EXISTS(SELECT 1 FROM json_each(t.sessions) WHERE value=?)",
            (reason, session_id),
        ).fetchone()
        return int(row[0]), int(row[1])

    # -- reporting -----------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        one = lambda sql, *p: self.execute(sql, p).fetchone()  # noqa: E731
        count, total, fetches, fetched = one(
            "SELECT count(*), coalesce(sum(size),0), coalesce(sum(fetch_count),0), "
            "coalesce(sum(fetch_count>0),0) FROM blobs"
        )
        sessions, live = one("SELECT count(*), coalesce(sum(live),0) FROM sessions")
        by_kind = dict(self.execute("SELECT kind, count(DISTINCT sha) FROM provenance GROUP BY kind").fetchall())
        by_type = dict(self.execute("SELECT content_type, count(*) FROM blobs GROUP BY content_type").fetchall())
        reasons = dict(self.execute("SELECT reason, count(*) FROM tombstones GROUP BY reason").fetchall())
        return {
            "total_bytes": int(total),
            "blob_count": int(count),
            "tombstones": sum(reasons.values()),
            "tombstones_by_reason": reasons,
            "sessions": int(sessions),
            "live_sessions": int(live),
            "by_kind": by_kind,
            "by_content_type": by_type,
            "fetch_total": int(fetches),
            "fetched_blobs": int(fetched),
        }

    def list_blobs(
        self, session_id: str | None, kind: str | None, content_type: str | None, limit: int
    ) -> list[sqlite3.Row]:
        where, params = [], []
        if session_id is not None:
            where.append(
                "(EXISTS(SELECT 1 FROM provenance p WHERE p.sha=b.sha AND "
                "p.session_id=?) OR EXISTS(SELECT 1 FROM grants g WHERE g.sha=b.sha "
                "AND g.session_id=?))"
            )
            params += [session_id, session_id]
        if kind is not None:
            where.append("EXISTS(SELECT 1 FROM provenance p WHERE p.sha=b.sha AND p.kind=?)")
            params.append(kind)
        if content_type is not None:
            where.append("b.content_type=?")
            params.append(content_type)
        sql = "SELECT * FROM blobs b" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY b.last_access DESC, b.sha LIMIT ?"
        return self.execute(sql, params + [limit]).fetchall()

    def session_catalog(self, session_id: str) -> list[sqlite3.Row]:
        """Every blob ``session_id`` can read, newest first (``created_at``, then sha, both descending).

        One query, no per-row handle or provenance list: a session with tens
        of thousands of blobs is listed in well under a second.
        """
        latest = "(SELECT p.{0} FROM provenance p WHERE p.sha=b.sha ORDER BY p.last_at DESC, p.id DESC LIMIT 1)"
        return self.execute(
            "SELECT b.sha, b.created_at, b.size, b.is_utf8, b.content_type, "
            f"{latest.format('kind')} AS kind, {latest.format('tool_name')} AS tool_name FROM blobs b "
            "WHERE b.sha IN (SELECT sha FROM provenance WHERE session_id=? UNION "
            "SELECT sha FROM grants WHERE session_id=?) ORDER BY b.created_at DESC, b.sha DESC",
            (session_id, session_id),
        ).fetchall()


def _tombstone(row: sqlite3.Row) -> Tombstone:
    return Tombstone(
        sha256=row["sha"],
        size=row["size"],
        content_type=row["content_type"],
        evicted_at=row["evicted_at"],
        reason=row["reason"],
        detail=row["detail"],
        tool_name=row["tool_name"],
        tool_args=row["tool_args"],
        session_id=row["session_id"],
        kind=row["kind"],
        created_at=row["created_at"],
        sessions=tuple(json.loads(row["sessions"] or "[]")),
        origins=tuple(Provenance(**o) for o in json.loads(row["origins"] or "[]")),
    )


class Index:
    """Owner of the per-thread, per-process SQLite connections to one index file."""

    def __init__(self, path: Path, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._local = threading.local()

    @property
    def conn(self) -> sqlite3.Connection:
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            return conn
        if conn is not None:
            _ABANDONED.append(conn)
        conn = self._connect()
        local.conn, local.pid = conn, os.getpid()
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
        deadline = time.monotonic() + self.busy_timeout
        while conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            try:
                conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        conn.execute("PRAGMA synchronous=FULL")
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                columns = {row[1] for row in conn.execute("PRAGMA table_info(blobs)")}
                if "sidecar_seal" not in columns:  # a version 1 index: sidecars get sealed as they are read
                    conn.execute("ALTER TABLE blobs ADD COLUMN sidecar_seal TEXT")
                # before version 4 no production named the blob it stands for: those rows keep source NULL
                if "source" not in {row[1] for row in conn.execute("PRAGMA table_info(provenance)")}:
                    conn.execute("ALTER TABLE provenance ADD COLUMN source TEXT")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return conn

    def _begin(self, statement: str) -> sqlite3.Connection:
        try:
            conn = self.conn
            conn.execute(statement)
            return conn
        except sqlite3.Error as exc:
            raise StoreIndexError(self.path, exc) from exc

    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[Tx]:
        """A serialized write transaction (``BEGIN IMMEDIATE``).

        ``durable=False`` commits without an fsync (WAL, ``synchronous=NORMAL``):
        for advisory rows such as pins, which a crash may lose at no cost.
        SQLite errors come out as :class:`StoreIndexError`; others pass through.
        """
        if not durable:
            self._synchronous("NORMAL")
        try:
            with self._write() as tx:
                yield tx
        finally:
            if not durable:
                self._synchronous("FULL")

    def _synchronous(self, level: str) -> None:
        try:
            self.conn.execute(f"PRAGMA synchronous={level}")
        except sqlite3.Error as exc:
            raise StoreIndexError(self.path, exc) from exc

    @contextmanager
    def _write(self) -> Iterator[Tx]:
        conn = self._begin("BEGIN IMMEDIATE")
        tx = Tx(conn)
        try:
            yield tx
            conn.execute("COMMIT")
        except BaseException as exc:
            for action in reversed(tx.undo):
                try:
                    action()
                except Exception:  # noqa: BLE001 - best-effort cleanup
                    pass
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:  # pragma: no cover - connection is broken anyway
                    pass
            if isinstance(exc, sqlite3.Error):
                raise StoreIndexError(self.path, exc) from exc
            raise
        for action in tx.then:
            try:
                action()
            except Exception:  # noqa: BLE001 - best-effort cleanup
                pass

    @contextmanager
    def read(self) -> Iterator[Tx]:
        """A consistent snapshot for multi-statement reads."""
        conn = self._begin("BEGIN")
        try:
            yield Tx(conn)
        except sqlite3.Error as exc:
            self._end_read(conn)
            raise StoreIndexError(self.path, exc) from exc
        except BaseException:
            self._end_read(conn)
            raise
        try:
            if conn.in_transaction:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:  # a corrupt page can surface only here
            self._end_read(conn)
            raise StoreIndexError(self.path, exc) from exc

    @staticmethod
    def _end_read(conn: sqlite3.Connection) -> None:
        """End a failed read transaction; an error doing so must not replace the first one."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        """Close the calling thread's connection (if it belongs to this process)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local.conn = None
