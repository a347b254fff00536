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
from typing import TYPE_CHECKING, Any

from ..context_engine.host_adapter.dispatch import host_call
from ..context_engine.host_adapter.engine_tools import use_auxiliary_embeddings
from ..context_engine.host_adapter.host_contract import CORE_TOOLSET, HERMES_CORE_TOOLS
from . import sessions

if TYPE_CHECKING:
    from ..context_engine.host_adapter.engine import StowageEngineCore

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
    register("llm_request", host_call(shape_llm_request))
    register("llm_execution", host_call(unwrap_bridge_calls))
    use_auxiliary_embeddings(auxiliary_embedding_endpoint)


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

    return core_tool_names(), registry.get_toolset_for_tool, frozenset(registry.get_all_tool_names())


_core_note: list[str] = []  # the note said once when the host's core toolset cannot be read


def core_tool_names() -> frozenset[str]:
    """The tools Hermes counts as core, which tool search never defers: its ``hermes-cli`` toolset, read through
    the public ``toolsets.get_toolset`` (on 0.13.0 to 0.22.2 the same names as its private core list).  Where
    that cannot be read, the contract's own copy (0.19.0's) stands in, with a note in the log once."""
    try:
        from toolsets import get_toolset

        found = get_toolset(CORE_TOOLSET)
        names = found.get("tools") if isinstance(found, dict) else None
        if isinstance(names, (list, tuple, set, frozenset)) and names:
            return frozenset(str(name) for name in names)
        reason = f"toolsets.get_toolset({CORE_TOOLSET!r}) names no tools"
    except Exception as exc:  # noqa: BLE001 - any failure to read the host's table degrades to our own copy
        reason = f"cannot read Hermes's {CORE_TOOLSET} toolset: {type(exc).__name__}: {exc}"
    if not _core_note:
        _core_note.append(reason)
        logger.warning("stowage: %s; tool search keeps Hermes 0.19.0's core tools undeferred instead", reason)
    return HERMES_CORE_TOOLS


def shape_llm_request(request: Any = None, session_id: str | None = None) -> dict[str, Any] | None:
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


def unwrap_bridge_calls(request: Any = None, next_call: Any = None, session_id: str | None = None) -> Any:
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


def _unwrap(engine: "StowageEngineCore", call: Any) -> None:
    function = getattr(call, "function", None)
    if function is None:
        return
    target = engine.bridged_call_target(getattr(function, "name", None) or "", getattr(function, "arguments", None))
    if target is None:
        return  # left as it is: a bridge call the engine refuses is answered by the engine with the reason
    function.name, arguments = target
    function.arguments = json.dumps(arguments, ensure_ascii=False)


def dispatch_with_hermes(engine: "StowageEngineCore", name: str, arguments: dict[str, Any]) -> str:
    """Run a tool through Hermes's normal dispatch (hooks, approvals, spill), the session's scope enabled."""
    from model_tools import handle_function_call

    result: str = handle_function_call(
        name, arguments, session_id=engine.session_id, enabled_tools=engine.scoped_tool_names()
    )
    return result
