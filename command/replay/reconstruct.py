"""The conversation as it happened, from a session's ``state.db`` rows (Hermes's in-place compaction undone).

With Hermes's in-place compaction (``archive_and_compact``) the summarized
rows stay on disk (``active = 0, compacted = 1``) and the compacted set is
inserted after them (head copies, the summary, tail copies); :func:`reconstruct`
drops the inserted summary and copies, so the replay sees every message once,
and counts the compactions Hermes made.
"""

from __future__ import annotations

import json
from typing import Any, Callable

SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY", "[PRIOR CONTEXT", "[STOWAGE CONTEXT SUMMARY")


def _is_summary(content: Any) -> bool:
    text = content if isinstance(content, str) else json.dumps(content, default=str) if content else ""
    text = text.lstrip()
    return text.startswith(SUMMARY_PREFIXES) or any(p in text[:20000] for p in SUMMARY_PREFIXES[:2])


def _key(message: dict[str, Any]) -> str:
    return json.dumps(
        [message.get("role"), message.get("content"), message.get("tool_call_id"), message.get("tool_calls")],
        sort_keys=True,
        default=str,
    )


BLOCK_GAP_S = 0.001  # rows one compaction inserts are stamped microseconds apart; appends are milliseconds apart


def _block(rows: list[dict[str, Any]], index: int) -> tuple[int, int]:
    """The run of rows written with the compaction's summary row (by their timestamps), as [start, end)."""

    def stamp(i: int) -> float | None:
        value = rows[i].get("_ts")
        return float(value) if isinstance(value, (int, float)) else None

    def close(a: int, b: int) -> bool:
        first, second = stamp(a), stamp(b)
        return first is not None and second is not None and 0 <= second - first < BLOCK_GAP_S

    start = end = index
    while start > 0 and close(start - 1, start):
        start -= 1
    while end + 1 < len(rows) and close(end, end + 1):
        end += 1
    return start, end + 1


def reconstruct(
    rows: list[dict[str, Any]], is_summary: Callable[[Any], bool] = _is_summary
) -> tuple[list[dict[str, Any]], int]:
    """The conversation as it happened from a session's rows in id order, and the compactions found.

    A compaction shows as a block of rows written in one transaction (their
    timestamps microseconds apart) holding a summary row: copies of the
    protected head, the summary, copies of the kept tail, and possibly the
    turn's new user message (a compaction before the turn writes it first).
    The summary and the copies (rows seen before) are dropped; a row new to the
    session is kept.
    """
    summaries = [i for i, row in enumerate(rows) if is_summary(row.get("content"))]
    in_block: set[int] = set()
    for index in summaries:
        start, end = _block(rows, index)
        in_block.update(range(start, end))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    summary_set = set(summaries)
    for index, row in enumerate(rows):
        row.pop("_ts", None)
        if index in summary_set:
            continue
        key = _key(row)
        if index in in_block and key in seen:
            continue
        seen.add(key)
        out.append(row)
    return out, len(summaries)
