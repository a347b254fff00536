"""Engines for the offline replay, built as Hermes 0.19.0 builds them.

* :func:`builtin_target`: Hermes's own ``ContextCompressor`` with the host's
  defaults for a model without per-model overrides (``agent/agent_init.py``:
  ``compression.threshold`` 0.50, which the compressor raises to 0.75 below a
  512K window; ``target_ratio`` 0.20; ``protect_last_n`` 20;
  ``protect_first_n`` 3; no summary-model override; no abort on summary
  failure).  Its summary call (``agent.context_compressor.call_llm``) is
  routed to the replay's stand-in summarizer.
* :func:`StowageHost`: Stowage loaded the way the host loads a plugin:
  ``register(ctx)`` on a recording context reads ``$HERMES_HOME/config.yaml``
  (where the replay writes the ``stowage:`` settings under test), and the
  recorded registrations are used as the host would use them: each session's
  engine is a deep copy of the registered singleton, ``update_model`` then
  ``on_session_start`` (which binds the session for the hooks), the
  engine's tool schemas added to the request tools, every ``llm_request``
  middleware in registration order, the ``transform_tool_result`` hooks, and
  the ``on_session_end`` plugin hooks at the end of each user turn.

Call :func:`prepare_hermes_home` before anything imports Hermes: plugin
discovery and ``get_hermes_home`` read ``HERMES_HOME`` at import time.
"""

from __future__ import annotations

import copy
import itertools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from .offline import ReplayTarget, StandInSummarizer

DEFAULT_WINDOW = 128_000
# The replay's temporary homes run the engines it builds itself; selecting Stowage there keeps the plugin's
# "loaded but not selected" notice (meant for a user's own Hermes) off the replay's terminal.
REPLAY_CONFIG: dict[str, Any] = {"context": {"engine": "stowage"}}
MODEL = "replay-model"
BUILTIN_DEFAULTS = {"threshold_percent": 0.50, "summary_target_ratio": 0.20, "protect_last_n": 20, "protect_first_n": 3}

# Used when Hermes's own tool list cannot be built: the core tools a coding
# session offers, with short schemas (documented stand-in, same for both engines).
FALLBACK_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {arg: {"type": "string", "description": arg} for arg in args},
                "required": list(args[:1]),
            },
        },
    }
    for name, description, args in (
        ("terminal", "Run a shell command and return its output.", ("command", "workdir", "timeout")),
        ("read_file", "Read a text file with line numbers.", ("path", "offset", "limit")),
        ("write_file", "Write a whole file.", ("path", "content")),
        ("patch", "Replace a unique string in a file.", ("path", "old_string", "new_string")),
        ("search_files", "Search file contents or names.", ("pattern", "path", "target")),
        ("todo", "Manage the task list.", ("todos",)),
        ("memory", "Save or recall durable facts.", ("action", "content")),
        ("clarify", "Ask the user a question.", ("question",)),
    )
]


def scratch_dir() -> str | None:
    """A RAM-backed temp folder when the system has one (the replay's store is thrown away: no disk syncs)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def prepare_hermes_home(path: str | Path | None = None) -> Path:
    """A throw-away ``HERMES_HOME`` (set in the environment) unless one is given."""
    home = Path(path) if path else Path(tempfile.mkdtemp(prefix="stowage-replay-home-", dir=scratch_dir()))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    if not config.exists():  # the replay's own home selects Stowage: no "loaded but not selected" notice
        config.write_text(yaml.safe_dump(REPLAY_CONFIG), encoding="utf-8")
    os.environ["HERMES_HOME"] = str(home)
    return home


_TOOLS_CACHE: list[dict[str, Any]] | None = None


def hermes_tool_schemas() -> tuple[list[dict[str, Any]], str]:
    """Hermes's default tool list (``model_tools.get_tool_definitions``), or the fixed fallback set."""
    global _TOOLS_CACHE
    if _TOOLS_CACHE is None:
        try:
            import logging

            from model_tools import get_tool_definitions

            previous = logging.root.manager.disable
            logging.disable(logging.WARNING)  # the host warns about every toolset it cannot enable offline
            try:
                _TOOLS_CACHE = list(get_tool_definitions(quiet_mode=True) or [])
            finally:
                logging.disable(previous)
        except Exception:  # noqa: BLE001 - any failure: the documented fixed set
            _TOOLS_CACHE = []
    if _TOOLS_CACHE:
        return _TOOLS_CACHE, "hermes core tools (model_tools.get_tool_definitions)"
    return FALLBACK_TOOLS, "fixed fallback set (hermes tool list unavailable)"


# -- the built-in compressor ---------------------------------------------------------
_ROUTES: dict[str, Callable[[str], str]] = {}
_ROUTE_IDS = itertools.count()


class _StubResponse:
    """The shape of an OpenAI chat completion the compressor reads."""

    def __init__(self, text: str) -> None:
        message = type("Message", (), {"content": text, "role": "assistant"})()
        self.choices = [type("Choice", (), {"message": message, "finish_reason": "stop"})()]


def _routed_call_llm(*_: Any, **kwargs: Any) -> Any:
    runtime = kwargs.get("main_runtime") or {}
    summarize = _ROUTES.get(str(runtime.get("api_key") or ""))
    if summarize is None:
        raise RuntimeError("replay: no stand-in summarizer routed for this compressor")
    prompt = "\n\n".join(str(m.get("content") or "") for m in kwargs.get("messages") or [] if isinstance(m, dict))
    return _StubResponse(summarize(prompt))


def _install_builtin_route() -> Any:
    import agent.context_compressor as builtin

    if builtin.call_llm is not _routed_call_llm:
        builtin.call_llm = _routed_call_llm
    return builtin


def is_summary_text(text: str) -> bool:
    """The host's test of a compaction summary (``_is_real_user_message``)."""
    from agent.context_compressor import ContextCompressor

    return bool(ContextCompressor._is_context_summary_content(text))


def builtin_target(
    summarizer: StandInSummarizer,
    session_id: str,
    *,
    window: int = DEFAULT_WINDOW,
    tools: list[dict[str, Any]] | None = None,
    **overrides: Any,
) -> ReplayTarget:
    """Hermes's built-in compressor for one session, summary calls answered by ``summarizer``."""
    builtin = _install_builtin_route()
    route = f"replay-route-{next(_ROUTE_IDS)}"
    _ROUTES[route] = summarizer
    options = {**BUILTIN_DEFAULTS, **overrides}
    engine = builtin.ContextCompressor(
        model=MODEL,
        summary_model_override=None,
        quiet_mode=True,
        base_url="http://127.0.0.1:9/v1",
        api_key=route,
        config_context_length=window,
        provider="custom",
        api_mode="chat_completions",
        abort_on_summary_failure=False,
        max_tokens=None,
        **options,
    )
    engine.on_session_start(
        session_id,
        hermes_home=os.environ.get("HERMES_HOME", ""),
        platform="cli",
        model=MODEL,
        context_length=window,
        conversation_id=None,
    )

    def close() -> None:
        engine.on_session_end(session_id, [])
        _ROUTES.pop(route, None)

    return ReplayTarget(
        label="built-in",
        engine=engine,
        session_id=session_id,
        tools=list(tools or []),
        summarizer=summarizer,
        is_summary_text=is_summary_text,
        model=MODEL,
        close=close,
    )


# -- Stowage -------------------------------------------------------------------------------
class _RecordingContext:
    """What ``register(ctx)`` hands over, kept in registration order (the host's order)."""

    def __init__(self) -> None:
        self.engines: list[Any] = []
        self.hooks: dict[str, list[Callable[..., Any]]] = {}
        self.middleware: dict[str, list[Callable[..., Any]]] = {}
        self.commands: list[Any] = []

    def register_context_engine(self, engine: Any) -> None:
        self.engines.append(engine)

    def register_hook(self, name: str, callback: Callable[..., Any]) -> None:
        self.hooks.setdefault(name, []).append(callback)

    def register_middleware(self, kind: str, callback: Callable[..., Any], *_: Any, **__: Any) -> None:
        self.middleware.setdefault(kind, []).append(callback)

    def register_command(self, *args: Any, **kwargs: Any) -> None:
        self.commands.append((args, kwargs))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("register_"):
            return lambda *a, **k: None  # registrations the replay does not use (tools, CLI commands...)
        raise AttributeError(name)


def nest_settings(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"compaction.threshold": 0.5}`` -> ``{"compaction": {"threshold": 0.5}}`` (the ``stowage:`` block)."""
    nested: dict[str, Any] = {}
    for path, value in flat.items():
        node = nested
        parts = str(path).split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return nested


def parse_setting(text: str) -> tuple[str, Any]:
    """``view.enabled=false`` -> ``("view.enabled", False)`` (values read as YAML, like config.yaml)."""
    if "=" not in text:
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw)


class StowageHost:
    """Stowage registered once for a set of settings; one engine copy per replayed session."""

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        *,
        home: str | Path | None = None,
        window: int = DEFAULT_WINDOW,
        tools: list[dict[str, Any]] | None = None,
        label: str = "stowage",
    ) -> None:
        self.settings = dict(settings or {})
        self.home = Path(home or os.environ.get("HERMES_HOME") or prepare_hermes_home())
        self.window = window
        self.tools = list(tools or [])
        self.label = label
        self.context = self._register()
        if not self.context.engines:
            raise RuntimeError("stowage registered no context engine")
        self.singleton = self.context.engines[0]
        if getattr(self.singleton, "config_error", None) is not None:
            raise self.singleton.config_error

    def _register(self) -> _RecordingContext:
        """``register(ctx)`` with ``HERMES_HOME`` pointing at this host's home, where the settings are written."""
        config: dict[str, Any] = dict(REPLAY_CONFIG)
        if self.settings:
            config["stowage"] = nest_settings(self.settings)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        from ...host.registration import register_plugin

        context = _RecordingContext()
        previous = os.environ.get("HERMES_HOME")
        os.environ["HERMES_HOME"] = str(self.home)
        try:
            register_plugin(context)
        finally:
            if previous is None:
                os.environ.pop("HERMES_HOME", None)
            else:
                os.environ["HERMES_HOME"] = previous
        return context

    def target(self, summarizer: StandInSummarizer, session_id: str) -> ReplayTarget:
        engine = copy.deepcopy(self.singleton)  # agent_init: a plugin engine is a deep copy of the singleton
        engine.summary_model = lambda prompt, runtime, timeout=None: summarizer(prompt)
        engine.update_model(
            model=MODEL,
            context_length=self.window,
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-replay",
            provider="custom",
            api_mode="chat_completions",
        )
        schemas = engine.get_tool_schemas() if callable(getattr(engine, "get_tool_schemas", None)) else []
        tools = self.tools + [{"type": "function", "function": s} for s in schemas]
        engine.on_session_start(
            session_id,
            hermes_home=str(self.home),
            platform="cli",
            model=MODEL,
            context_length=self.window,
            conversation_id=None,
        )
        hooks = self.context.hooks

        def close() -> None:
            engine.on_session_end(session_id, [])

        return ReplayTarget(
            label=self.label,
            engine=engine,
            session_id=session_id,
            tools=tools,
            middlewares=tuple(self.context.middleware.get("llm_request", [])),
            tool_result_hooks=tuple(hooks.get("transform_tool_result", [])),
            turn_end_hooks=tuple(hooks.get("on_session_end", [])),
            history_hooks=tuple(hooks.get("post_llm_call", [])),
            request_hooks=tuple(hooks.get("pre_api_request", [])),
            summarizer=summarizer,
            is_summary_text=is_summary_text,
            model=MODEL,
            close=close,
        )


def cleanup_home(home: str | Path) -> None:
    shutil.rmtree(home, ignore_errors=True)
