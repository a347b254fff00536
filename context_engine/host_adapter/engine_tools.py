"""The engine's own tools, as the host offers and calls them: one list, one dispatch.

Two rooms own tools: the store session (``stowage_fetch`` / ``stowage_grep``)
and tool search (its bridges, offered only where the host can run them).
The host sees one engine; this module is where its calls split.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ...tool_search import BRIDGE_NAMES
from ..config.settings import Settings
from ..records.host_contract import HostFacts
from ..session.state import SessionState

# (tool name, arguments) -> the tool's result text, run through the host (bridged calls)
Dispatch = Callable[[str, dict[str, Any]], str]


def tool_schemas(state: SessionState, settings: Settings, host: HostFacts) -> list[dict[str, Any]]:
    """The store's read-back tools, and the tool-search bridges unless search is off or this host cannot run it."""
    schemas = state.store.tool_schemas()
    if state.tool_search.mode != "off" and host.tool_search_unavailable is None:
        schemas += state.tool_search.bridge_schemas(settings.tool_search.search_limit)
    return schemas


def handle_tool_call(state: SessionState, name: str, args: dict[str, Any], dispatch: Dispatch) -> str:
    """A bridge goes to tool search (which runs the underlying tool through ``dispatch``), the rest to the store."""
    if name in BRIDGE_NAMES:
        return state.tool_search.handle(name, args, dispatch)
    return state.store.handle_tool(name, args)


def cannot_dispatch(name: str, arguments: dict[str, Any]) -> str:
    """The answer where no host dispatch is attached (the host-free engine, tests)."""
    return json.dumps({"error": f"this host cannot run {name} through the bridge; call it directly"})
