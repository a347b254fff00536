"""Where ``stowage replay`` reads recorded sessions: Hermes's ``state.db`` or a JSONL of transcripts.

Both sources are streamed one session at a time and never written to:

* ``state.db`` (Hermes 0.19.0, ``hermes_state.py``): the file and its WAL are
  **copied** to a private temporary folder and the copy is opened.  Nothing is
  ever opened in the user's folder, so a running Hermes (or a lock it holds)
  is neither disturbed nor able to block the replay, and SQLite cannot create
  ``-shm``/``-journal`` files beside the user's database.
* a JSONL(.gz) file of OpenAI-format transcripts (``{id, messages, ...}`` a
  line, the shared data set's format), read with
  :func:`stowage.command.replay.offline.chain.read_transcripts`.

A recorded session is turned back into the conversation that happened
(:mod:`.reconstruct` undoes Hermes's in-place compactions) and made
replayable (:mod:`.hygiene`).  Rewound rows (``active = 0, compacted = 0``) are
left out: the user took them back.  Each problem found in a session (orphan
tool results, unanswered calls, non-text content) is named, and the session
is still replayed with the offending parts dropped.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ...blobstore import safe_json
from .hygiene import cap_messages, tidy
from .offline.chain import chain_sessions, read_transcripts
from .rebuild import is_stowage_summary
from .reconstruct import reconstruct

KNOWN_SCHEMA = 22  # hermes_state.SCHEMA_VERSION in hermes-agent 0.19.0
CONTENT_JSON_PREFIX = "\x00json:"  # hermes_state._CONTENT_JSON_PREFIX: non-text content stored as JSON


class SourceError(Exception):
    """A source that cannot be read at all (missing, corrupt, newer schema, unknown session)."""

    def __init__(self, message: str, kind: str = "source") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class RecordedSession:
    """One session to replay, as it happened."""

    id: str
    messages: list[dict[str, Any]]
    started_at: float | None = None
    title: str = ""
    model: str = ""
    recorded_rows: int = 0  # rows read for it (state.db) or messages in the file
    host_compactions: int | None = None  # compactions Hermes made (state.db); None when unknown
    problems: list[str] = field(default_factory=list)
    stowage_summaries: int = 0  # summary rows Stowage wrote (the session ran Stowage)

    def counts(self) -> dict[str, int]:
        """What the replay should see: a direct count of the messages by role."""
        roles = [m.get("role") for m in self.messages]
        return {
            "messages": len(self.messages),
            "user": roles.count("user"),
            "assistant": roles.count("assistant"),
            "tool": roles.count("tool"),
            "tool_calls": sum(len(m.get("tool_calls") or []) for m in self.messages),
        }


@dataclass
class SkippedSession:
    """A session that could not be replayed, and why (the others still are)."""

    id: str
    reason: str


def parse_since(text: str) -> float:
    """``2026-11-01`` or ``2026-11-01T12:00`` (UTC unless it says otherwise) -> epoch seconds."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise SourceError(f"--since {text!r} is not a date (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM)", "usage") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


# -- state.db ----------------------------------------------------------------------------------------
def _row_message(row: sqlite3.Row, problems: list[str]) -> dict[str, Any]:
    """One stored row as a message; a part that is not readable JSON (too deep, too long, junk) is named and
    replaced (content) or left out (tool calls), never raised."""
    where = f"row {row['id']}"
    content: Any = row["content"]
    if isinstance(content, str) and content.startswith(CONTENT_JSON_PREFIX):
        try:
            content = safe_json.loads(content[len(CONTENT_JSON_PREFIX) :])
        except safe_json.JsonRejected as exc:
            problems.append(f"{where}: content not replayed ({exc.reason})")
            content = f"[content not replayed: {exc.reason}]"
    message: dict[str, Any] = {"role": row["role"], "content": content}
    if row["tool_call_id"]:
        message["tool_call_id"] = row["tool_call_id"]
    if "timestamp" in row.keys():
        message["_ts"] = row["timestamp"]
    if row["tool_calls"]:
        try:
            message["tool_calls"] = safe_json.loads(row["tool_calls"])
        except safe_json.JsonRejected as exc:
            if exc.reason.startswith("not valid JSON"):
                message["tool_calls"] = row["tool_calls"]  # clean_transcript parses or drops it
            else:
                problems.append(f"{where}: tool calls left out ({exc.reason})")
    return message


def _started_at(value: Any, problems: list[str]) -> float | None:
    """Epoch seconds a report can print as a date, else None (named)."""
    if value is None:
        return None
    try:
        seconds = float(value)
        datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        problems.append(f"start time {str(value)[:40]!r} is not a date; shown blank")
        return None
    return seconds


class StateDb:
    """A private read-only copy of a Hermes ``state.db``; ``close()`` removes it."""

    def __init__(self, hermes_home: Path) -> None:
        self.path = Path(hermes_home) / "state.db"
        if not self.path.is_file():
            raise SourceError(f"no Hermes state.db at {self.path} (use --hermes-home, or --from FILE)", "missing")
        self._dir = Path(tempfile.mkdtemp(prefix="stowage-replay-db-"))
        try:
            copy = self._dir / "state.db"
            shutil.copyfile(self.path, copy)
            wal = self.path.with_name("state.db-wal")
            if wal.is_file():
                shutil.copyfile(wal, self._dir / "state.db-wal")
            self.conn = sqlite3.connect(str(copy), timeout=1.0)
            self.conn.row_factory = sqlite3.Row
            self._check_schema()
        except OSError as exc:
            self.close()
            raise SourceError(f"cannot read {self.path}: {exc.strerror or exc}", "unreadable") from exc
        except sqlite3.DatabaseError as exc:
            self.close()
            raise SourceError(
                f"{self.path} is not a readable Hermes state.db ({exc}); it may be corrupt — "
                "Hermes's own files were not changed",
                "corrupt",
            ) from exc
        except SourceError:
            self.close()
            raise

    def _check_schema(self) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = {"sessions", "messages"} - tables
        if missing:
            raise SourceError(
                f"{self.path} has no {' or '.join(sorted(missing))} table: not a Hermes state.db", "corrupt"
            )
        version = None
        if "schema_version" in tables:
            row = self.conn.execute("SELECT version FROM schema_version LIMIT 1").fetchone()
            version = int(row[0]) if row and row[0] is not None else None
        self.schema_version = version
        if version is not None and version > KNOWN_SCHEMA:
            raise SourceError(
                f"{self.path} has schema version {version}, newer than the {KNOWN_SCHEMA} this replay "
                "reads (hermes-agent 0.19.0); update Stowage to replay it",
                "newer_schema",
            )
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(messages)")}
        need = {"session_id", "role", "content", "tool_call_id", "tool_calls", "id"}
        if need - columns:
            raise SourceError(f"{self.path}: messages table lacks {', '.join(sorted(need - columns))}", "corrupt")
        self._has_active = {"active", "compacted"} <= columns
        self.conn.execute("PRAGMA quick_check(1)").fetchone()

    def session_ids(self, session: str | None, since: float | None, limit: int | None) -> list[tuple[str, Any]]:
        if session:
            row = self.conn.execute("SELECT id, started_at FROM sessions WHERE id = ?", (session,)).fetchone()
            if row is None:
                raise SourceError(f"no session {session!r} in {self.path}", "unknown_session")
            return [(row[0], row[1])]
        sql = "SELECT id, started_at FROM sessions"
        params: list[Any] = []
        if since is not None:
            sql += " WHERE started_at >= ?"
            params.append(since)
        sql += " ORDER BY started_at DESC, id"
        if limit:
            sql += " LIMIT ?"
            params.append(int(limit))
        rows = [(r[0], r[1]) for r in self.conn.execute(sql, params)]
        rows.reverse()  # oldest first among the newest N
        return rows

    def read(self, session_id: str) -> RecordedSession:
        meta = self.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        where = " AND (active = 1 OR compacted = 1)" if self._has_active else ""
        rows = self.conn.execute(
            f"SELECT * FROM messages WHERE session_id = ?{where} ORDER BY id", (session_id,)
        ).fetchall()
        problems: list[str] = []
        stowage_summaries = sum(1 for r in rows if isinstance(r["content"], str) and is_stowage_summary(r["content"]))
        messages, compactions = reconstruct([_row_message(r, problems) for r in rows])
        system = meta["system_prompt"] if meta is not None and "system_prompt" in meta.keys() else None
        if system:
            messages.insert(0, {"role": "system", "content": system})
        messages = cap_messages(tidy(messages, problems), problems)
        return RecordedSession(
            id=session_id,
            messages=messages,
            started_at=_started_at(meta["started_at"], problems) if meta is not None else None,
            title=str((meta["title"] if meta is not None and "title" in meta.keys() else "") or ""),
            model=str((meta["model"] if meta is not None and "model" in meta.keys() else "") or ""),
            recorded_rows=len(rows),
            host_compactions=compactions,
            problems=problems,
            stowage_summaries=stowage_summaries,
        )

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()
            self.conn = None  # type: ignore[assignment]
        shutil.rmtree(self._dir, ignore_errors=True)


def messages_containing(path: Path, text: str) -> int | None:
    """How many messages of Hermes's ``state.db`` at *path* contain *text* (None: no database, or unreadable).

    Opened read-only in place, for a count only (``stowage uninstall --purge`` names the previews it leaves).
    """
    if not path.is_file():
        return None
    try:
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2) as conn:
            row = conn.execute("SELECT count(*) FROM messages WHERE instr(content, ?) > 0", (text,)).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else None


def open_state_db(
    hermes_home: Path, *, session: str | None = None, since: float | None = None, limit: int | None = None
) -> tuple[int, Iterator[RecordedSession | SkippedSession]]:
    """Check the database now (errors raise here, before any replay) and return (count, sessions)."""
    db = StateDb(hermes_home)
    try:
        ids = db.session_ids(session, since, limit)
    except BaseException:
        db.close()
        raise

    def sessions() -> Iterator[RecordedSession | SkippedSession]:
        try:
            for session_id, _ in ids:
                try:
                    yield db.read(session_id)
                except sqlite3.DatabaseError as exc:
                    yield SkippedSession(session_id, f"its rows cannot be read ({exc})")
                except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
                    yield SkippedSession(
                        session_id, f"its rows cannot be replayed ({type(exc).__name__}: {str(exc)[:200]})"
                    )
        finally:
            db.close()

    return len(ids), sessions()


# -- JSONL transcripts ----------------------------------------------------------------------------------
def jsonl_sessions(
    path: Path, *, chain: int = 1, limit: int | None = None
) -> Iterator[RecordedSession | SkippedSession]:
    """Transcripts from a JSONL(.gz) file, ``chain`` consecutive ones per session (1: each is a session).

    A line that is not a transcript is reported as a skipped session and the lines after it are read."""
    if not Path(path).is_file():
        raise SourceError(f"no transcript file at {path}", "missing")
    bad: list[SkippedSession] = []

    def on_bad_line(number: int, reason: str) -> None:
        bad.append(SkippedSession(f"{Path(path).name} line {number}", f"not replayed: {reason}"))

    transcripts = read_transcripts(path, limit=limit * max(1, chain) if limit else None, on_bad_line=on_bad_line)

    def session(ident: str, messages: list[dict[str, Any]]) -> RecordedSession:
        problems: list[str] = []
        return RecordedSession(
            ident, cap_messages(tidy(messages, problems), problems), recorded_rows=len(messages), problems=problems
        )

    try:
        if chain > 1:
            for chained in chain_sessions(transcripts, chain=chain):
                yield from bad
                bad.clear()
                yield session(chained.id, chained.messages)
        else:
            for transcript in transcripts:
                yield from bad
                bad.clear()
                yield session(transcript.id, transcript.messages)
        yield from bad
    except (OSError, EOFError, ValueError) as exc:  # a truncated gzip: what was read is kept
        yield from bad
        yield SkippedSession(str(path), f"the file stops being readable here ({exc})")
