"""Stowage tab of the Hermes web dashboard: backend routes, mounted by Hermes at ``/api/plugins/stowage/``.

Hermes 0.19.0 imports this file on its own (not as part of the ``stowage``
package) when Stowage is installed as a user plugin and enabled, and puts
every ``/api/plugins/...`` request behind the dashboard's session-token auth
and its enabled/disabled gate: these routes add no other way in.  They read
only the store of the Hermes home the dashboard was started with (no route
takes a path or a profile), and answer bad input with a clear 4xx.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

from fastapi import APIRouter, HTTPException, Query

router = APIRouter()

_PACKAGE = "stowage_dashboard_core"
MAX_LINES = 400
MAX_TEXT_BYTES = 64 * 1024  # of text per blob read, however long its lines (stowage_fetch bounds its replies too)


def _core() -> ModuleType:
    """The Stowage package this dashboard folder belongs to, imported under a private name."""
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    # Not resolved: a linked install (install_user_plugin.py --link) links this folder on its own, and
    # only the plugin folder holds the package's other parts (context_engine, command, ...).
    # (stowage dashboard enable links this folder from a pip install: the resolved path leads to the package)
    candidates = [
        Path(__file__).absolute().parent.parent,
        Path(__file__).resolve().parent.parent,
        _hermes_home() / "plugins" / "stowage",
    ]
    folder = next((c for c in candidates if (c / "__init__.py").is_file() and (c / "context_engine").is_dir()), None)
    if folder is None:
        raise RuntimeError(f"cannot find the Stowage package next to {Path(__file__).parent}")
    spec = importlib.util.spec_from_file_location(
        _PACKAGE, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the Stowage package from {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = module
    spec.loader.exec_module(module)
    return module


def _sub(name: str) -> Any:
    _core()
    return importlib.import_module(f"{_PACKAGE}.{name}")


def _hermes_home() -> Path:
    """The home the dashboard process was launched with (never a per-request profile)."""
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:  # noqa: BLE001 - the documented default
        return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


class _Env:
    def __enter__(self) -> Any:
        self.env = _sub("command.env").Env.resolve(_hermes_home(), None)
        return self.env

    def __exit__(self, *exc: object) -> None:
        self.env.close()


def _store(env: Any) -> Any:
    if not env.store_exists():
        raise HTTPException(404, f"no Stowage store at {env.store_root} yet: nothing has been stored")
    return env.open_store()


def _handle_error(exc: Exception) -> HTTPException:
    return HTTPException(
        404 if type(exc).__name__ in ("UnknownHandleError", "EvictedBlobError", "ForeignHandleError") else 400, str(exc)
    )


def _statuses(env: Any, limit: int = 50) -> list[Any]:
    """The newest sessions' ``SessionStatus`` records (the status files the engine writes)."""
    return _sub("context_engine.records.status_file").read_session_statuses(env.store_root, limit=limit)


def _summary(status: Any) -> dict[str, Any]:
    live = _sub("command.live")  # the figures `stowage status` and /stowage print, from the same function
    return {
        "session_id": status.session_id,
        "updated_at": status.updated_at,
        "compactions": status.compression_count,
        "tokens_saved": live.saved_tokens(status),
        "saved": live.saved_text(status),
        "requests": len(status.requests),
        "spills": status.store.spills,
        "runs": status.runs,  # a resumed session: its runs so far (every figure covers them all)
    }


@router.get("/sessions")
def sessions() -> dict[str, Any]:
    """The newest sessions' figures (from the status files the engine writes at each turn's end)."""
    with _Env() as env:
        return {
            "hermes_home": str(env.hermes_home),
            "store": str(env.store_root),
            "sessions": [_summary(s) for s in _statuses(env)],
        }


@router.get("/sessions/{session_id}")
def session(session_id: str) -> dict[str, Any]:
    """One session's timeline: tokens per request (full history and sent), compactions, spills, totals."""
    with _Env() as env:
        for status in _statuses(env, limit=1000):
            if status.session_id == session_id:
                live = _sub("command.live")
                lines = live.session_rows(status)
                return {
                    "session_id": session_id,
                    "status": status.as_dict(),
                    "tokens_saved": live.saved_tokens(status),
                    "saved": live.saved_text(status),
                    "totals": [[label, value] for label, value in live.saved_figures(status)],
                    "rows": [[label, str(value)] for label, value in lines],
                }
    raise HTTPException(404, f"unknown session {session_id!r}: no status file in this Hermes home's store")


def _blob_rows(store: Any, session: str | None, limit: int) -> Iterator[dict[str, Any]]:
    for info in store.list_blobs(session_id=session or None, limit=limit):
        origins = info.provenance
        first = origins[0] if origins else None
        yield {
            "handle": info.handle,
            "size": info.size,
            "lines": info.line_count,
            "content_type": info.content_type,
            "created_at": info.created_at,
            "tool": first.tool_name if first else "",
            "args": first.tool_args if first else "",
            "session_id": first.session_id if first else None,
            "kind": first.kind if first else "",
            "fetches": info.fetch_count,
        }


@router.get("/blobs")
def blobs(
    session: str | None = Query(None, max_length=200),
    tool: str | None = Query(None, max_length=200),
    q: str | None = Query(None, max_length=200),
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    """Stored blobs, most recently used first, by session and tool, or matching ``q`` (tool, arguments, handle)."""
    with _Env() as env:
        store = _store(env)
        rows = []
        needle = (q or "").lower()
        for row in _blob_rows(store, session, 5000 if (tool or needle) else limit):
            if tool and row["tool"] != tool:
                continue
            if needle and needle not in f"{row['tool']} {row['args']} {row['handle']} {row['kind']}".lower():
                continue
            rows.append(row)
            if len(rows) >= limit:
                break
        return {"blobs": rows}


@router.get("/blobs/{handle}")
def read_blob(
    handle: str,
    start: int = Query(1, ge=1),
    count: int = Query(60, ge=1, le=MAX_LINES),
    offset: int = Query(0, ge=0, le=1 << 53),
) -> dict[str, Any]:
    """Lines ``start`` .. ``start + count - 1`` of a blob (from character ``offset`` of the first), with metadata.

    Bounded in bytes as ``stowage_fetch`` is: a long line is cut at
    ``MAX_TEXT_BYTES`` with a marker, and ``next_start``/``next_offset`` say
    where the following read continues.
    """
    with _Env() as env:
        store = _store(env)
        try:
            sha = store.resolve(handle)
            info = store.stat(sha)
        except Exception as exc:  # noqa: BLE001 - HandleError family: a clear 4xx
            raise _handle_error(exc) from None
        if not info.is_utf8:
            return {"handle": info.handle, "size": info.size, "lines": info.line_count, "binary": True, "text": ""}
        if start > max(info.line_count, 1):
            raise HTTPException(400, f"start={start} is past the end: the blob has {info.line_count} lines")
        window = store.read_window(sha, start, count, offset=offset, max_bytes=MAX_TEXT_BYTES)
        text = window.text
        if window.cut:
            text += (
                f"\n… cut at {MAX_TEXT_BYTES:,} bytes; continue with start={window.next_start}"
                f"&offset={window.next_offset} …"
            )
        return {
            "handle": info.handle,
            "size": info.size,
            "lines": info.line_count,
            "binary": False,
            "start": start,
            "offset": offset,
            "end": window.end,
            "text": text,
            "cut": window.cut,
            "next_start": window.next_start,
            "next_offset": window.next_offset,
        }


@router.delete("/blobs/{handle}")
def delete_blob(handle: str) -> dict[str, Any]:
    """Remove one blob, leaving a tombstone that ``stowage_fetch`` explains."""
    with _Env() as env:
        store = _store(env)
        try:
            sha = store.resolve(handle)
        except Exception as exc:  # noqa: BLE001 - HandleError family: a clear 4xx
            raise _handle_error(exc) from None
        tombs = store.evict_many([sha], detail="removed from the Hermes dashboard's Stowage tab")
        return {"removed": [t.sha256 for t in tombs]}
