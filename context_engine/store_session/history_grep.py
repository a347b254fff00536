"""``stowage_grep``: one pattern over everything the session stored, newest first, in bounded pages.

Each call searches items until its time budget, its result count or its
reply size runs out, and says exactly what is left and how to go on (a
cursor, ``grep_pages``); one item it could not finish is named with the
``stowage_fetch`` call that searches the rest.  One item is searched by
``fetch_tools``' grep, handed in as ``grep``.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

from ...blobstore import BlobStore
from ...blobstore.errors import describe_input
from ...blobstore.retrieval.grep_windows import REASON_MATCH_CAP
from ..chat.markers import GREP_KINDS, HISTORY_KINDS, BlobKind
from .grep_pages import CursorError, cursor_after, page, parse_cursor
from .tool_args import FetchLimits, ToolError, int_arg, pattern_arg

# (sha, args, context=, max_matches=, budget_s=) -> (the grep's result, lines scanned): one item searched
GrepOne = Callable[..., Any]


def grep_history(
    args: dict[str, Any], *, store: BlobStore, session_id: Callable[[], str | None], limits: FetchLimits, grep: GrepOne
) -> dict[str, Any]:
    """Search the session's stored items newest first, within the time budget; say exactly what is left."""
    pattern_arg(args)  # validate once, before touching the store
    kind = args.get("kind") or "any"
    if kind != "any" and kind not in GREP_KINDS:
        raise ToolError(f"unknown kind {describe_input(kind)}; use any, spill, pruned or window")
    try:
        cursor = parse_cursor(args.get("cursor"))
    except CursorError as exc:
        raise ToolError(str(exc)) from None
    limit = min(int_arg(args, "max_results", 20, minimum=1), 200)
    context = min(int_arg(args, "context", 1, minimum=0), 10)
    session = session_id()
    if session is None:
        raise ToolError("no session is active; nothing to search")
    if kind == "any":
        stored = [e for e in store.catalog(session) if e.kind in HISTORY_KINDS]
    else:  # a prefix: spill takes spill-view too, pruned the outputs and previews recorded before a prune
        wanted = (BlobKind.PRUNED, BlobKind.OUTPUT, BlobKind.PREVIEW) if kind == BlobKind.PRUNED else (str(kind),)
        stored = [e for e in store.catalog(session) if e.kind.startswith(wanted)]
    entries = [e for e in stored if e.is_utf8]  # binary items (images) have no lines to match
    todo = page(entries, cursor)
    deadline = time.monotonic() + limits.grep_time_budget_s
    results: list[dict[str, Any]] = []
    positions: list[int] = []  # each result's item, as a count of items searched before it
    searched, stopped, incomplete = 0, None, None
    for entry in todo.todo:
        remaining = deadline - time.monotonic()
        if len(results) >= limit:
            stopped = "max_results"
            break
        if remaining <= 0 and searched:  # each call searches at least one item: a cursor always moves
            stopped = "time_budget"
            break
        found, scanned = grep(
            entry.sha256, args, context=context, max_matches=limit - len(results), budget_s=max(remaining, 0.05)
        )
        if found.truncated and found.reason != REASON_MATCH_CAP:
            if searched:  # the next call searches it whole, with a budget of its own
                stopped = "time_budget"
                break
            incomplete = {"handle": store.short_handle(entry.sha256), "scanned_lines": scanned, "reason": found.reason}
        searched += 1
        if found.match_count:
            positions.append(searched - 1)
            results.append(
                {
                    "handle": store.short_handle(entry.sha256),
                    "kind": entry.kind,
                    "tool": entry.tool_name,
                    "matches": found.match_count,
                    "text": found.render(),
                }
            )
        if incomplete is not None:
            stopped = "time_budget"
            break
    shrunk = len(json.dumps(results, ensure_ascii=False)) > limits.fetch_max_chars
    if shrunk:
        kept = _shrink(results, limits.fetch_max_chars)
        if len(kept) < len(results):
            # The items whose results do not fit are not reported as searched: the cursor stops before
            # the first of them, so the next call finds them again (the first result always fits).
            searched, stopped = positions[len(kept)], "reply_size"
            if incomplete is not None and not any(r["handle"] == incomplete["handle"] for r in kept):
                incomplete = None
        results = kept
    left = len(todo.todo) - searched
    reply: dict[str, Any] = {"pattern": args.get("pattern"), "searched": searched}
    if todo.done:
        reply["searched_before"] = todo.done
    reply.update(of=len(entries), remaining=left, results=results)
    if len(stored) > len(entries):
        reply["binary_not_searched"] = len(stored) - len(entries)
    notes = []
    if shrunk:
        notes.append("results cut to stay bounded; fetch a handle with mode=grep for all its matches")
    if incomplete is not None:
        reply["incomplete"] = incomplete
        notes.append(
            f"the search of item {incomplete['handle']} stopped ({incomplete['reason']}) "
            f"after {incomplete['scanned_lines']:,} lines; search the rest of it with "
            f'stowage_fetch(handle="{incomplete["handle"]}", mode="grep") or mode="range"'
        )
    if left:
        last = todo.todo[searched - 1] if searched else None
        next_cursor = str(cursor_after(last)) if last is not None else str(cursor) if cursor else ""
        reply["stopped"] = stopped
        reply["next_cursor"] = next_cursor
        why = {
            "time_budget": f"the {limits.grep_time_budget_s:g} s time bound",
            "reply_size": f"the reply's size bound ({limits.fetch_max_chars:,} characters of results)",
        }.get(str(stopped), f"max_results={limit}")
        notes.append(
            f"stopped by {why} after {todo.done + searched:,} of {len(entries):,} stored items; "
            f"{left:,} older items are not searched yet: call stowage_grep again with the same pattern and "
            f'cursor="{next_cursor}" to search them'
        )
    if notes:
        reply["note"] = "; ".join(notes)
    return reply


def _shrink(results: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    out, spent = [], 0
    per_item = max(200, budget // max(len(results), 1))
    for item in results:
        text = item["text"] if len(item["text"]) <= per_item else item["text"][:per_item] + "…"
        spent += len(text) + 120
        if spent > budget:
            break
        out.append({**item, "text": text})
    return out
