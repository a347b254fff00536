"""``register(ctx)``: what Stowage adds to Hermes.

One plugin registers the context engine together with its hooks, so it must
be loaded through the general plugin system (pip entry point or user plugin
folder), not ``plugins/context_engine/<name>/`` where hooks are no-ops.
"""

from __future__ import annotations

import logging
from typing import Any

from ..context_engine.host_adapter.dispatch import host_call
from . import sessions
from .chat_note import say, spill_note
from .hermes_engine import StowageContextEngine
from .host_config import load_user_settings
from .host_support import check_host
from .notice import announce_if_degraded, announce_if_not_selected
from .tool_search_glue import register_tool_search

logger = logging.getLogger(__name__)


def register_plugin(ctx: Any) -> None:
    """The engine, its hooks and middleware (the commands are :func:`commands.register_commands`'s)."""
    settings, error = load_user_settings()
    if error is not None:
        logger.error("%s", error)
    engine = StowageContextEngine(settings, config_error=error)
    engine.host.support = check_host().as_status()
    ctx.register_context_engine(engine)
    register_hook = getattr(ctx, "register_hook", None)
    if callable(register_hook):
        # Hermes fires the on_session_end *plugin hook* at the end of every
        # run_conversation, i.e. once per user turn: the governor's turn clock.
        register_hook("on_session_end", host_call(_on_turn_end))
        # once per turn with the live history: where the next summary is prepared ahead
        register_hook("post_llm_call", host_call(_prepare_ahead))
        # before each request with the live history: where a long turn's summary is prepared in time
        register_hook("pre_api_request", host_call(_prepare_during_turn))
        register_hook("transform_tool_result", host_call(_spill_large_result))
        # the host never ends a delegate_task subagent's engine session; this hook says the subagent is done
        register_hook("subagent_stop", host_call(_end_subagent))
    register_tool_search(ctx, engine)
    announce_if_not_selected()
    announce_if_degraded()


def _on_turn_end(session_id: str | None = None) -> None:
    engine = sessions.engine_for(session_id)
    if engine is not None:
        engine.end_turn_from_plugin_hook()


def _end_subagent(parent_session_id: str | None = None, child_session_id: str | None = None) -> None:
    """End a finished delegate_task subagent's session, which the host never ends: on a shared engine its guest,
    through the parent's engine, else its own engine copy.  0.17.0+ name the child; 0.13.0 fires this on the
    parent's thread once its subagents are done, naming none: those are the parent's delegated agents."""
    parent = sessions.engine_for(parent_session_id)
    if child_session_id:
        children = [child_session_id]
    elif parent is not None:
        children = [sid for agent, sid in parent.sharing.live_guest_agents() if _delegated_by(agent, parent_session_id)]
    else:
        return
    for child_id in children:
        if child_id == parent_session_id:
            continue  # never the parent's own session
        if parent is not None:
            parent.on_session_end(child_id, [])
        child = sessions.engine_for(child_id)
        if child is not None and child is not parent:
            child.on_session_end(child_id, [])


def _delegated_by(agent: Any, parent_session_id: str | None) -> bool:
    """A delegate_task subagent of that session (Hermes marks them with a delegation depth and the parent's id)."""
    depth = getattr(agent, "_delegate_depth", 0)
    return isinstance(depth, int) and depth > 0 and getattr(agent, "_parent_session_id", None) == parent_session_id


def _prepare_ahead(session_id: str | None = None, conversation_history: Any = None) -> None:
    engine = sessions.engine_for(session_id)
    if engine is not None:
        engine.prepare_ahead(conversation_history)


def _prepare_during_turn(
    session_id: str | None = None, conversation_history: Any = None, approx_input_tokens: Any = None
) -> None:
    engine = sessions.engine_for(session_id)
    if engine is None:
        return
    try:
        engine.prepare_during_turn(conversation_history, approx_input_tokens)
    except Exception:  # an observer hook must never break the request
        logger.exception("stowage: preparing the next summary failed; the compaction will call the model")


def _spill_large_result(
    tool_name: str = "", args: Any = None, result: Any = None, session_id: str | None = None
) -> str | None:
    """What the engine puts in place of a tool result: a preview and a handle for an oversized one, a re-read's
    earlier output where the request showed it as a stub (None: keep the result)."""
    engine = sessions.engine_for(session_id)
    if engine is None:
        return None  # Stowage is not the engine of this session: nobody could fetch the handle
    try:
        replacement = engine.tool_result_replacement(tool_name, args, result)
    except Exception:  # a spill bug must never lose a tool result
        logger.exception("stowage: spill failed for %s; passing the result through", tool_name)
        return None
    spilled = replacement.spilled
    if spilled is not None:
        say(spill_note(tool_name, spilled.chars, spilled.tokens, spilled.handle))
    return replacement.text
