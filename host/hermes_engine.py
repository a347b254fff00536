"""The engine as Hermes sees it: ``ContextEngine`` plus Stowage's core.

Everything the host calls is implemented in the host-agnostic
``StowageEngineCore``; this class only adds the Hermes base class (the host
checks ``isinstance(engine, ContextEngine)``), the auxiliary-LLM summary call,
the session registry for hooks, and the start-time config check.
"""

from __future__ import annotations

from typing import Any

from agent.context_engine import ContextEngine

from ..context_engine.config.settings import Settings, StowageConfigError
from ..context_engine.host_adapter.engine import StowageEngineCore
from ..context_engine.host_adapter.summary_call import TIMEOUT_KEY
from . import sessions
from .aux_summary import summarize_with_aux
from .calling_agent import calling_agent, calling_history
from .host_config import hermes_home
from .tool_search_glue import dispatch_with_hermes


def _summarize_with_deadline(prompt: str, runtime: dict[str, Any]) -> str:
    """The aux summary call with the timeout the engine passed in the runtime (what is left of the
    compaction's deadline; None keeps Hermes's own), never sent on to the host as part of the runtime."""
    host_runtime = {key: value for key, value in runtime.items() if key != TIMEOUT_KEY}
    return summarize_with_aux(prompt, host_runtime, timeout=runtime.get(TIMEOUT_KEY))


class StowageContextEngine(StowageEngineCore, ContextEngine):
    """Stowage, registered with Hermes under the name ``stowage``."""

    def __init__(self, settings: Settings | None = None, *, config_error: StowageConfigError | None = None) -> None:
        super().__init__(settings)
        self.summary_model = _summarize_with_deadline
        self.config_error = config_error
        self.sharing.identify = calling_agent  # one engine object for every agent (0.13-0.17): tell them apart
        self.live_history = calling_history  # the loop's history at a pressure check: the request is counted
        if config_error is None:
            self.attach_store_home(hermes_home())

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: Any = "",
        provider: str = "",
        api_mode: str = "",
        **kwargs: Any,
    ) -> None:
        # The first call happens while Hermes builds the agent: a bad stowage:
        # block stops the agent with our message instead of running silently
        # with defaults (or silently falling back to the built-in compressor).
        if self.config_error is not None:
            raise self.config_error
        super().update_model(
            model, context_length, base_url=base_url, api_key=api_key, provider=provider, api_mode=api_mode, **kwargs
        )

    def dispatch_underlying(self, name: str, arguments: dict[str, Any]) -> str:
        return dispatch_with_hermes(self, name, arguments)

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        previous = self.session_id
        super().on_session_start(session_id, **kwargs)
        if self.session_id != session_id:
            return  # another agent's session on a shared engine: its guest engine bound itself
        if previous and previous != session_id:
            sessions.unbind(previous, self)
        sessions.bind(session_id, self)

    def on_session_reset(self, **kwargs: Any) -> None:
        """``/new``, ``/reset`` and ``/resume``: the host resets the engine after it moved the agent to the
        session that follows (a new id, or the resumed one), and before 0.20 never starts that session on the
        engine.  So the reset takes the calling agent's session id: a new one starts afresh, a resumed one where
        its earlier runs left it.  Only an engine of its own agent: a guest on a shared engine (0.13-0.17) may
        be the background review agent, which carries its parent's id."""
        super().on_session_reset(**kwargs)
        moved_to = getattr(calling_agent(), "session_id", None)
        if self.sharing.engine_here(self) is not self or not isinstance(moved_to, str) or not moved_to:
            return
        if self.session_id and moved_to != self.session_id:
            self.on_session_start(moved_to)

    def end_own_session(self) -> None:
        """Only an ended session is unbound: a child ending under its parent's id leaves the parent's hooks."""
        super().end_own_session()
        sessions.unbind(self.session_id, self)
