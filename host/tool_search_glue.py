"""Request shaping inside Hermes: two middlewares and a dispatcher.

* ``llm_request`` middleware: per request, the session's engine applies
  the lean view to the history (old outputs as stubs) and decides
  whether deferral is on and returns the tool list without the deferred
  schemas (bridges added, pre-selected tools kept) and the history with calls
  to deferred tools shown in bridge form.
* ``llm_execution`` middleware: when the model answers with a
  ``stowage_tool_call`` for a tool in the session's scoped catalog, the call
  is rewritten into a direct call to that tool before Hermes executes it.
  Hermes then runs it exactly as a direct call: ``pre_tool_call`` hooks,
  approvals, guardrails, ``transform_tool_result`` (Stowage's spill) and
  ``post_tool_call`` all see the real tool.  Deferred tools stay callable
  because deferral only edits the request, never ``valid_tool_names``.
  A call outside the scope is left alone and refused by the engine.
* the dispatcher: for a ``stowage_tool_call`` that reaches the engine anyway
  (a response shape the rewrite does not know), run the tool through
  ``model_tools.handle_function_call``, which applies hooks and spill too.

Only the OpenAI chat-completions request shape is shaped; other API modes
pass through unchanged (no deferral).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ..context_engine.session.tool_search_embeddings import set_auxiliary_resolver
from ..tool_search import CALL_NAME, BridgeError
from ..tool_search.session import HOST_BRIDGE_NAMES
from . import sessions

logger = logging.getLogger(__name__)


TOOL_SEARCH_UNAVAILABLE = (
    "tool search is not available on this host (needs 0.17.0): Hermes before 0.17.0 has "
    "no middleware API, so its stowage_tool_* bridges are not offered"
)


def register_tool_search(ctx: Any, engine: Any = None) -> None:
    register = getattr(ctx, "register_middleware", None)
    if not callable(register):
        logger.warning("stowage: %s", TOOL_SEARCH_UNAVAILABLE)
        if engine is not None:
            engine.disable_tool_search(TOOL_SEARCH_UNAVAILABLE)
        return
    register("llm_request", shape_llm_request)
    register("llm_execution", unwrap_bridge_calls)
    set_auxiliary_resolver(auxiliary_embedding_endpoint)


def auxiliary_embedding_endpoint() -> tuple[str, str | None]:
    """Base URL and key of Hermes's auxiliary provider (``auxiliary.compression``, else its auto choice).

    Whether that provider serves ``/embeddings`` is the user's to know; if it
    does not, the first call fails and tool search ranks with BM25 alone.
    """
    try:
        from agent.auxiliary_client import get_text_auxiliary_client

        client, _model = get_text_auxiliary_client("compression")
    except Exception as exc:  # noqa: BLE001 - any resolution failure is "no auxiliary endpoint"
        raise ValueError(f"cannot resolve Hermes's auxiliary provider: {exc}") from None
    base_url = str(getattr(client, "base_url", "") or "").rstrip("/")
    if client is None or not base_url.startswith(("http://", "https://")):
        raise ValueError("Hermes's auxiliary provider has no OpenAI-compatible base URL for embeddings")
    api_key = getattr(client, "api_key", None)
    return base_url, str(api_key) if api_key else None


def _host_tables() -> tuple[frozenset[str], Any, frozenset[str]]:
    """Hermes's core tool names, toolset lookup and registered names."""
    from tools.registry import registry
    from toolsets import _HERMES_CORE_TOOLS

    return frozenset(_HERMES_CORE_TOOLS), registry.get_toolset_for_tool, frozenset(registry.get_all_tool_names())


def shape_llm_request(request: Any = None, session_id: str | None = None, **_: Any) -> dict[str, Any] | None:
    """One pass over each provider request: tool deferral, then the lean view of the history."""
    engine = sessions.engine_for(session_id)
    if engine is None or not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return None
    tools = request.get("tools")
    chat_tools = isinstance(tools, list) and bool(tools) and all(isinstance(t, dict) and "function" in t for t in tools)
    try:
        core, toolset_of, registered = _host_tables() if chat_tools else (frozenset(), lambda _: None, frozenset())
        shaped = engine.shape_request(
            tools if chat_tools and isinstance(tools, list) else [],
            list(request["messages"]),
            core_names=core,
            toolset_of=toolset_of,
            registered=registered,
        )
    except Exception:  # never break a request over tool search or the view
        logger.exception("stowage: could not shape the request; sending it unchanged")
        return None
    new_tools = shaped.tools if chat_tools else tools
    if new_tools == tools and shaped.messages == request["messages"]:
        return None
    shaped_request = {**request, "messages": shaped.messages}
    if chat_tools:
        shaped_request["tools"] = new_tools
    return {"request": shaped_request}


def unwrap_bridge_calls(request: Any = None, next_call: Any = None, session_id: str | None = None, **_: Any) -> Any:
    response = next_call(request)
    engine = sessions.engine_for(session_id)
    if engine is None:
        return response
    try:
        for call in _tool_calls(response):
            _unwrap(engine, call)
    except Exception:  # the engine's dispatcher handles what is left
        logger.exception("stowage: could not unwrap bridged tool calls")
    return response


def _tool_calls(response: Any) -> list[Any]:
    try:
        calls = response.choices[0].message.tool_calls
    except (AttributeError, IndexError, TypeError):
        return []
    return list(calls or [])


def _unwrap(engine: Any, call: Any) -> None:
    function = getattr(call, "function", None)
    if function is None or getattr(function, "name", None) != CALL_NAME:
        return
    try:
        args = json.loads(function.arguments or "{}")
        name, arguments = engine.state.tool_search.resolve_call(args, count_refusal=False)
    except (ValueError, BridgeError):
        return  # left as a bridge call: the engine answers with the reason
    function.name = name
    function.arguments = json.dumps(arguments, ensure_ascii=False)
    engine.state.tool_search.record_bridged_call()


def dispatch_with_hermes(engine: Any, name: str, arguments: dict[str, Any]) -> str:
    """Run a tool through Hermes's normal dispatch (hooks, approvals, spill)."""
    from model_tools import handle_function_call

    if name in HOST_BRIDGE_NAMES:
        return json.dumps({"error": f"'{name}' is Hermes's own bridge; call it directly"})
    return handle_function_call(
        name, arguments, session_id=engine.session_id, enabled_tools=sorted(engine.state.tool_search.scoped_names())
    )
