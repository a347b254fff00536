"""The engine's own tools, as the host offers and calls them: one list, one dispatch.

Two rooms own tools: the store session (``stowage_fetch`` / ``stowage_grep``)
and tool search (its bridges, offered only where the host can run them).
The host sees one engine; this module is where its calls split, and where a
bridge call the host's middleware meets is resolved to its tool.  Tool
search also asks one thing of the host: its auxiliary provider's embedding
endpoint (:func:`use_auxiliary_embeddings`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ...tool_search import BRIDGE_NAMES, CALL_NAME, BridgeError
from ...tool_search.session import HOST_BRIDGE_NAMES
from ..config.settings import Settings
from ..records.host_facts import HostFacts
from ..session.state import SessionState
from ..session.tool_search_embeddings import AuxiliaryResolver, set_auxiliary_resolver

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
        return state.tool_search.handle(name, args, _without_host_bridges(dispatch))
    return state.store.handle_tool(name, args)


def _without_host_bridges(dispatch: Dispatch) -> Dispatch:
    """``dispatch``, refusing the host's own bridge tools (Hermes's tool search): never run one through ours."""

    def run(name: str, arguments: dict[str, Any]) -> str:
        if name in HOST_BRIDGE_NAMES:
            return json.dumps({"error": f"'{name}' is Hermes's own bridge; call it directly"})
        return dispatch(name, arguments)

    return run


def bridged_call_target(state: SessionState, name: str, arguments: str | None) -> tuple[str, dict[str, Any]] | None:
    """The (tool, arguments) a ``stowage_tool_call`` in a model's answer resolves to, counted as bridged; None
    for another tool's call, arguments that are not JSON, or a call the session's scope refuses (not counted as a
    refusal here: the engine's handling of the call left in place answers and counts it)."""
    if name != CALL_NAME:
        return None
    try:
        target = state.tool_search.resolve_call(json.loads(arguments or "{}"), count_refusal=False)
    except (ValueError, BridgeError):
        return None
    state.tool_search.record_bridged_call()
    return target


def use_auxiliary_embeddings(resolver: AuxiliaryResolver | None) -> None:
    """Where tool search's ``auxiliary`` embeddings go: the host's auxiliary provider (process-wide)."""
    set_auxiliary_resolver(resolver)


def cannot_dispatch(name: str, arguments: dict[str, Any]) -> str:
    """The answer where no host dispatch is attached (the host-free engine, tests)."""
    return json.dumps({"error": f"this host cannot run {name} through the bridge; call it directly"})
