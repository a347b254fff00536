"""Find the engine of a session from process-global plugin hooks.

Hermes hooks receive a ``session_id`` but no agent or engine, and each agent
owns a deep copy of the registered engine.  Engines announce themselves here
in ``on_session_start``; weak references keep finished agents collectable.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..context_engine.host_adapter.engine import StowageEngineCore

_lock = threading.Lock()
_engines: dict[str, "weakref.ReferenceType[StowageEngineCore]"] = {}


def bind(session_id: str | None, engine: "StowageEngineCore") -> None:
    if not session_id:
        return
    with _lock:
        _engines[session_id] = weakref.ref(engine)


def unbind(session_id: str | None, engine: "StowageEngineCore") -> None:
    with _lock:
        ref = _engines.get(session_id or "")
        if ref is not None and ref() in (engine, None):
            del _engines[session_id or ""]


def engine_for(session_id: str | None) -> "StowageEngineCore | None":
    with _lock:
        ref = _engines.get(session_id or "")
    return ref() if ref is not None else None


def live_session_ids() -> list[str]:
    with _lock:
        return [sid for sid, ref in _engines.items() if ref() is not None]
