"""``stowage summary``: the text a compaction put into the history, and where its window is stored.

Users of compacting engines cannot otherwise see what the model now
believes about the turns it no longer has.  The engine appends each summary
to ``<store>/session-summaries/<name>.jsonl`` (see
``context_engine/records/summary_log.py``); this reads it without the host.
Formatting is a pure function of one record: files written by another
version, or damaged, lack keys, and every figure is optional.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..context_engine.records.status_file import read_session_status
from ..context_engine.records.summary_log import known_session, newest_session, read_summaries
from .env import CliError, Env, Outcome
from .formatting import fields, relative_time

EXIT_USAGE = 2


def _n(value: Any) -> str:
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return "?"


def summary_header(record: dict[str, Any], now: float | None = None) -> str:
    """Rows above one summary: when, sizes, who wrote it, what it covers, where the window is."""
    at = record.get("at")
    when = relative_time(at, now) if isinstance(at, (int, float)) else "unknown time"
    if isinstance(at, (int, float)):
        when += time.strftime(" (%Y-%m-%d %H:%M:%S UTC)", time.gmtime(at))
    before, after = record.get("tokens_before"), record.get("tokens_after")
    sizes = (
        f"{_n(before)} -> {_n(after)} tokens"
        if before and after
        else (f"-> {_n(after)} tokens (size before not reported by the host)" if after else "not measured")
    )
    if record.get("fallback_used") or record.get("result") == "fallback":
        writer = f"model-free fallback summary (why: {record.get('summary_error') or 'not recorded'})"
    else:
        model = record.get("model")
        writer = "the summary model (auxiliary 'compression' task" + (f"; session model {model})" if model else ")")
    covered = f"{_n(record.get('window_messages'))} message(s)"
    if record.get("window_tool_outputs"):
        covered += f" with {_n(record['window_tool_outputs'])} tool output(s)"
    covered += f"; history {_n(record.get('messages_before'))} -> {_n(record.get('messages_after'))} messages"
    handle = record.get("window_handle")
    window = (
        f'{handle} (stowage_fetch(handle="{handle}", mode="range"), or `stowage blobs cat {handle}`)'
        if handle
        else "not stored (the store was unavailable)"
    )
    rows: list[tuple[str, Any]] = [
        ("when", when),
        ("tokens", sizes),
        ("written by", writer),
        ("covers", covered),
        ("window", window),
    ]
    if record.get("pruned_outputs"):
        rows.append(("pruned", f"{_n(record['pruned_outputs'])} older tool output(s) replaced by stubs"))
    if record.get("forced"):
        rows.append(
            ("forced", "yes (/compress)" + (f", focus: {record['focus_topic']}" if record.get("focus_topic") else ""))
        )
    return fields(rows)


def summary_text(
    session_id: str, records: list[dict[str, Any]], *, show_all: bool, skipped: int = 0, now: float | None = None
) -> str:
    """The newest summary (or all, oldest first) of one session, as text."""
    shown = records if show_all else records[-1:]
    lines = [
        f"session {session_id}: {len(records)} compaction summary(ies)"
        + ("" if show_all or len(records) == 1 else "; the newest (--all lists every one)")
    ]
    for record in shown:
        lines.append("")
        number = record.get("compaction")
        lines.append(f"compaction {_n(number) if number is not None else '?'}")
        lines.append(summary_header(record, now))
        lines.append("--- summary as inserted into the history ---")
        lines.append(str(record.get("body", "")).rstrip())
        lines.append("--- end of summary ---")
    if skipped:
        lines.append(f"({skipped} unreadable line(s) in the summary file skipped)")
    return "\n".join(lines)


def no_summary_text(root: Path, session_id: str) -> str:
    """Why a session has no summary: no compaction yet, or only compactions that pruned (as status says)."""
    status = read_session_status(root, session_id)
    count = status.compression_count if status is not None else 0
    if not count:
        return f"session {session_id}: no compaction yet, so no summary"
    return (
        f"session {session_id}: {count:,} compaction(s), each prune only (older tool outputs replaced by stubs "
        "with handles; no summary was needed), so no summary"
    )


def summary(env: Env, session: str | None = None, show_all: bool = False) -> Outcome:
    """``stowage summary [--session ID] [--all]``."""
    root = env.store_root
    session_id = session or newest_session(root)
    if session_id is None:
        raise CliError(
            f"no Stowage session has run with the store at {root} yet (nothing to summarize)", 1, "no_session"
        )
    records, skipped = read_summaries(root, session_id)
    if not records:
        if session is not None and not known_session(root, session):
            raise CliError(
                f"unknown session {session!r}: the store at {root} has no status or summary of it "
                "(`stowage status` lists recent sessions)",
                EXIT_USAGE,
                "unknown_session",
            )
        text = no_summary_text(root, session_id)
        if skipped:
            text += f" ({skipped} unreadable line(s) in its summary file)"
        return Outcome({"session_id": session_id, "summaries": [], "skipped": skipped}, text)
    data = {
        "session_id": session_id,
        "summaries": records if show_all else records[-1:],
        "count": len(records),
        "skipped": skipped,
    }
    return Outcome(data, summary_text(session_id, records, show_all=show_all, skipped=skipped))


def summaries_for(root: Path, session_id: str, show_all: bool = False) -> str:
    """Text for one session the caller already knows (``/stowage summary`` in a live session)."""
    records, skipped = read_summaries(root, session_id)
    if not records:
        return no_summary_text(root, session_id)
    return summary_text(session_id, records, show_all=show_all, skipped=skipped)
