"""``stowage blobs rm`` and ``stowage purge``: delete stored outputs, leaving tombstones.

Spilled and pruned outputs may hold secrets, so an operator must be able to
remove them.  Each removed blob leaves a tombstone (reason ``manual``, with
the command in its detail): a later ``stowage_fetch`` of its handle explains
what it held, who removed it and how to get it again.  Nothing is deleted on
bad input: every handle is resolved before anything is removed, and a purge
asks first (or takes ``--yes``).  Without a terminal to ask on, it refuses.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from ..blobstore import BlobStore, HandleError, Tombstone
from ..blobstore.retention import live_protected
from ..context_engine.records.session_files import STATUS_FOLDER, SUMMARY_FOLDER, forget_session
from .env import INDEX_NAME, CliError, Env, Outcome
from .formatting import human_size

DAY = 86_400.0
EXIT_USAGE = 2


def _ask_terminal(question: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        return False
    try:
        sys.stderr.write(question + " [y/N] ")
        sys.stderr.flush()
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    except (OSError, ValueError):
        return False


ask_terminal = _ask_terminal  # for the other commands that confirm (uninstall)


def can_ask() -> bool:
    return bool(sys.stdin) and sys.stdin.isatty()


def _removed_rows(store: BlobStore, tombs: list[Tombstone]) -> list[dict[str, Any]]:
    """What `blobs rm` and `purge` removed, one row a blob, for the text and for --json."""
    return [
        {
            "handle": store.short_handle(t.sha256),
            "sha256": t.sha256,
            "size": t.size,
            "tool_name": t.tool_name,
            "session_id": t.session_id,
        }
        for t in tombs
    ]


def rm(env: Env, handles: list[str]) -> Outcome:
    """Remove the named blobs; an unknown, evicted or ambiguous handle removes nothing."""
    env.require_valid_config("remove blobs")
    store = env.open_store()
    shas: list[str] = []
    for handle in handles:
        shas.append(store.resolve(handle))  # HandleError (exit 2) before anything is removed
    sizes = {sha: store.stat(sha).size for sha in shas}
    tombs = store.evict_many(shas, detail="removed with `stowage blobs rm`")
    removed = _removed_rows(store, tombs)
    total = sum(sizes.values())
    lines = [
        f"removed {store.short_handle(t.sha256)} ({human_size(t.size)}, {t.tool_name or 'unknown tool'})" for t in tombs
    ]
    lines.append(f"{len(removed)} blob(s), {human_size(total)} removed; each handle now answers with a tombstone")
    return Outcome({"removed": removed, "bytes": total}, "\n".join(lines))


def _session_state(env: Env, session_id: str) -> dict[str, Any] | None:
    store = env.open_store()
    with store.index.read() as tx:
        row = tx.session_row(session_id)
        held = tx.held_by(session_id)
        shared = {sha for sha in held if any(reader != session_id for reader in tx.readers(sha))}
    if row is None and not held:
        return None
    idle = env.policy.session_idle_seconds
    live = bool(row is not None and row[0] and row[1] >= store.clock() - idle)
    return {"live": live, "shas": [sha for sha in held if sha not in shared], "shared": len(shared)}


def _older_than(env: Env, days: float) -> tuple[list[str], list[str]]:
    """Blobs stored more than ``days`` ago: (removable, spared because a live session uses them)."""
    store = env.open_store()
    now = store.clock()
    with store.index.read() as tx:
        shas = tx.created_before(now - days * DAY)
        protected = live_protected(tx, env.policy, now)
    return [s for s in shas if s not in protected], [s for s in shas if s in protected]


def what_remains(env: Env) -> str:
    """What a purge by age leaves in the store folder, and why, and what deletes it too."""
    root = env.store_root

    def files(folder: str) -> int:
        try:
            return sum(1 for p in (root / folder).iterdir() if p.is_file())
        except OSError:
            return 0

    return (
        f"kept in {root}: {INDEX_NAME} (the index: its tombstones tell a removed handle's reader what happened), "
        f"{files(STATUS_FOLDER)} session status file(s) and {files(SUMMARY_FOLDER)} summary log(s) "
        "(figures and compaction summaries of past sessions; `stowage purge --session ID` removes one session's). "
        "To delete the whole store: `stowage uninstall --purge` while no Hermes runs (it deletes only what Stowage "
        "wrote in the folder)"
    )


def purge(
    env: Env,
    *,
    session: str | None,
    older_than: float | None,
    yes: bool,
    force: bool,
    ask: Callable[[str], bool] = _ask_terminal,
    interactive: Callable[[], bool] = can_ask,
) -> Outcome:
    """Remove one session's outputs, or everything stored more than N days ago."""
    if (session is None) == (older_than is None):
        raise CliError("purge needs exactly one of --session ID or --older-than DAYS", EXIT_USAGE, "usage")
    if older_than is not None and not older_than >= 0:
        raise CliError("--older-than takes a number of days, 0 or more", EXIT_USAGE, "usage")
    env.require_valid_config("purge")
    store = env.open_store()
    spared: list[str] = []
    shared = 0
    if session is not None:
        state = _session_state(env, session)
        if state is None:
            raise CliError(
                f"unknown session {session!r}: the store holds nothing it produced "
                "(`stowage status` lists recent sessions)",
                EXIT_USAGE,
                "unknown_session",
            )
        if state["live"] and not force:
            raise CliError(
                f"session {session!r} is live: its agent may still fetch these outputs. Purge it after "
                "it ends, or add --force",
                1,
                "live_session",
            )
        shas, shared, what = state["shas"], state["shared"], f"session {session!r}"
        detail = f"purged with `stowage purge --session {session}`"
    else:
        assert older_than is not None
        shas, spared = _older_than(env, older_than)
        if force:
            shas, spared = shas + spared, []
        what = f"stored more than {older_than:g} day(s) ago"
        detail = f"purged with `stowage purge --older-than {older_than:g}`"
    total = 0
    for sha in shas:
        try:
            total += store.stat(sha).size
        except HandleError:
            continue
    summary = f"{len(shas)} blob(s) ({human_size(total)}) {what}"
    if shared:
        summary += f"; {shared} blob(s) another session also holds stay for it"
    if (shas or shared) and not yes:
        if not interactive():
            raise CliError(
                f"would remove {summary}; refusing without --yes (stdin is not a terminal to ask on)",
                1,
                "needs_confirmation",
            )
        if not ask(f"Remove {summary}? Tombstones stay."):
            return Outcome(
                {"removed": [], "bytes": 0, "cancelled": True, "spared_live": len(spared)},
                "cancelled: nothing removed",
                1,
            )
    kept: tuple[str, ...] = ()
    if session is not None:  # the store decides: never another session's bytes
        report = store.purge_session(session, detail)
        tombs, kept = list(report.evicted), report.kept_shared
        total = sum(t.size for t in tombs)
    else:
        tombs = store.evict_many(shas, detail=detail) if shas else []
    if session is not None:
        try:  # the status file and the summaries (they quote the session), old-style shared files included
            forget_session(env.store_root, session)
        except OSError:
            pass
    removed = _removed_rows(store, tombs)
    text = f"removed {len(removed)} blob(s), {human_size(total)}, {what}; their handles now answer with tombstones"
    if spared:
        text += f"\n{len(spared)} blob(s) of live sessions spared (add --force to remove them too)"
    if older_than is not None:
        text += "\n" + what_remains(env)
    if kept:
        text += (
            f"\n{len(kept)} blob(s) kept because another session holds the same content; "
            f"session {session!r} can no longer read them"
        )
    return Outcome(
        {
            "removed": removed,
            "bytes": total,
            "cancelled": False,
            "spared_live": len(spared),
            "kept_shared": len(kept),
            "at": time.time(),
        },
        text,
    )
