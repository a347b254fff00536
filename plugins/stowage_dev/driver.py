"""Drive a real hermes-agent ``AIAgent`` through a JSON scenario (subprocess side).

Run as ``python plugins/stowage_dev/driver.py SCENARIO.json REPORT.json`` with
``HERMES_HOME`` (and the rest of :meth:`HermesHome.env`) already set: plugin
discovery happens once per process when ``run_agent`` imports ``model_tools``,
so the environment must be right *before* that import, which is why every
scenario runs in a fresh process.  Use :mod:`stowage_dev.runner` from tests.

Scenario (JSON object)::

    {
      "agent": {...},            # AIAgent kwargs overriding the defaults below,
                                 # plus "session_db": bool (default true)
      "discover_mcp": false,     # call tools.mcp_tool.discover_mcp_tools() first
      "resume_session": null,    # session id: the first agent resumes it from
                                 # state.db (a previous driver run, same home)
      "probe_attrs": ["..."],    # engine attributes recorded by every probe
      "steps": [
        {"op": "turn", "text": "hello"},
        {"op": "compress", "focus": "tools", "approx_tokens": null, "force": true},
        {"op": "probe", "attrs": ["threshold_tokens"]},
        {"op": "end_session"},                    # agent.shutdown_memory_provider(history)
        {"op": "new_agent", "history": "db"|"memory"|"none",
         "session_id": "same"|"new"|"<id>", "agent": {...}},
        {"op": "set_history", "messages": [...]},
        {"op": "python", "code": "result = agent.context_compressor.name"}
      ]
    }

Every step may carry an ``"id"`` (echoed in the report) and
``"expect_error": true`` (an exception is recorded without failing the run).
The report (JSON) is described in :func:`main`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

# Running by path puts this folder first on sys.path; the host must not see
# the harness modules (or the test plugin folders) as top-level imports.
_HERE = str(Path(__file__).resolve().parent)
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path.pop(0)

BUILTIN_ENGINE_MODULE = "agent.context_compressor"
DEFAULT_PROBE_ATTRS = (
    "context_length",
    "threshold_tokens",
    "threshold_percent",
    "last_prompt_tokens",
    "last_completion_tokens",
    "protect_first_n",
    "protect_last_n",
)


# --------------------------------------------------------------------------
# Capture of what the host tells the user
# --------------------------------------------------------------------------


class EventLog:
    """Collects warnings/status lines/prints/log records, tagged by step."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.step: int | None = None

    def add(self, kind: str, message: Any, **extra: Any) -> None:
        self.events.append({"kind": kind, "message": str(message), "step": self.step, "time": time.time(), **extra})

    def status_callback(self, kind: str, message: Any = "", *args: Any, **kw: Any) -> None:
        """``AIAgent(status_callback=...)``: ``("warn"|"lifecycle", message)``."""
        self.add("status:" + str(kind), message)

    def print_fn(self, *args: Any, **kwargs: Any) -> None:
        """``agent._print_fn``: what ``_vprint``/``_emit_warning`` print."""
        self.add("print", " ".join(str(a) for a in args))

    def since(self, index: int) -> list[dict[str, Any]]:
        return self.events[index:]


class _LogCapture(logging.Handler):
    def __init__(self, log: EventLog) -> None:
        super().__init__(level=logging.WARNING)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.log.add("log", record.getMessage(), logger=record.name, level=record.levelname)
        except Exception:  # pragma: no cover - never break the host
            pass


# --------------------------------------------------------------------------
# Introspection helpers
# --------------------------------------------------------------------------


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Best-effort conversion to JSON-compatible data."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 8:
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, Path):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value), depth + 1)
    return repr(value)


def _error(exc: BaseException) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def engine_identity(engine: Any) -> dict[str, Any]:
    """Class/module/name of a context engine; ``is_builtin`` is True for the
    host's ``agent.context_compressor.ContextCompressor``."""
    if engine is None:
        return {"present": False}
    cls = type(engine)
    try:
        name = engine.name
    except Exception as exc:  # noqa: BLE001
        name = f"<error {exc!r}>"
    return {
        "present": True,
        "class": cls.__name__,
        "module": cls.__module__,
        "qualname": f"{cls.__module__}.{cls.__qualname__}",
        "file": getattr(sys.modules.get(cls.__module__), "__file__", None),
        "name": name,
        "is_builtin": cls.__module__ == BUILTIN_ENGINE_MODULE,
        "id": id(engine),
    }


def probe_engine(engine: Any, attrs: list[str]) -> dict[str, Any]:
    """Identity + ``compression_count`` + ``get_status()`` + named attributes (a dotted name walks: ``state.x``)."""
    out = engine_identity(engine)
    if engine is None:
        return out
    out["compression_count"] = _jsonable(getattr(engine, "compression_count", None))
    try:
        out["status"] = _jsonable(engine.get_status())
    except Exception as exc:  # noqa: BLE001
        out["status"] = {"error": repr(exc)}
    values: dict[str, Any] = {}
    for attr in attrs:
        try:
            value = engine
            for name in attr.split("."):
                value = getattr(value, name)
            values[attr] = _jsonable(value)
        except Exception as exc:  # noqa: BLE001
            values[attr] = f"<missing: {type(exc).__name__}>"
    out["attrs"] = values
    return out


def plugin_state() -> dict[str, Any]:
    """What ``hermes_cli.plugins`` discovered/loaded in this process."""
    try:
        from hermes_cli import plugins as hp

        manager = hp.get_plugin_manager()
        listed = manager.list_plugins()
        for item in listed:
            loaded = manager._plugins.get(item["key"])
            module = getattr(loaded, "module", None)
            item["module"] = getattr(module, "__name__", None)
            item["module_file"] = getattr(module, "__file__", None)
            item["path"] = getattr(getattr(loaded, "manifest", None), "path", None)
            item["tool_names"] = list(getattr(loaded, "tools_registered", []) or [])
            item["hook_names"] = list(getattr(loaded, "hooks_registered", []) or [])
            item["middleware_kinds"] = list(getattr(loaded, "middleware_registered", []) or [])
        engine = hp.get_plugin_context_engine()
        return {
            "plugins": _jsonable([p for p in listed if p.get("source") != "bundled" or p.get("enabled")]),
            "context_engine": engine_identity(engine) if engine is not None else None,
        }
    except Exception as exc:  # noqa: BLE001
        return {"error": _error(exc)}


def agent_summary(agent: Any) -> dict[str, Any]:
    tools = []
    for tool in getattr(agent, "tools", None) or []:
        fn = tool.get("function", {}) if isinstance(tool, dict) else {}
        if fn.get("name"):
            tools.append(fn["name"])
    return {
        "session_id": getattr(agent, "session_id", None),
        "model": getattr(agent, "model", None),
        "provider": getattr(agent, "provider", None),
        "base_url": getattr(agent, "base_url", None),
        "compression_enabled": getattr(agent, "compression_enabled", None),
        "tools": tools,
        "context_engine_tool_names": sorted(getattr(agent, "_context_engine_tool_names", None) or []),
        "engine": engine_identity(getattr(agent, "context_compressor", None)),
    }


# --------------------------------------------------------------------------
# Scenario runner
# --------------------------------------------------------------------------


class Runner:
    """Holds the live agent, the history and the report while steps run."""

    def __init__(self, scenario: dict[str, Any], report: dict[str, Any], log: EventLog) -> None:
        self.scenario = scenario
        self.report = report
        self.log = log
        self.agent: Any = None
        self.agents: list[Any] = []
        self.history: list[dict[str, Any]] = []
        self.session_db: Any = None
        self.state: dict[str, Any] = {}  # scratch space for "python" steps
        self.probe_attrs = list(DEFAULT_PROBE_ATTRS) + list(scenario.get("probe_attrs", []))

    # -- agent construction ----------------------------------------------------
    def agent_kwargs(self, overrides: dict[str, Any]) -> dict[str, Any]:
        from hermes_cli.config import load_config

        model_cfg = load_config().get("model") or {}
        if not isinstance(model_cfg, dict):
            model_cfg = {}
        kwargs: dict[str, Any] = {
            "base_url": model_cfg.get("base_url"),
            "api_key": model_cfg.get("api_key") or "sk-fake",
            "provider": model_cfg.get("provider") or "custom",
            "model": model_cfg.get("default") or "fake-model",
            "quiet_mode": True,
            "skip_context_files": True,
            "skip_memory": True,
            "max_iterations": 8,
            "tool_delay": 0.0,
            "platform": "cli",
        }
        merged = {**self.scenario.get("agent", {}), **overrides}
        use_db = merged.pop("session_db", True)
        kwargs.update(merged)
        if use_db:
            if self.session_db is None:
                from hermes_state import SessionDB

                self.session_db = SessionDB()
            kwargs["session_db"] = self.session_db
        kwargs["status_callback"] = self.log.status_callback
        return kwargs

    def new_agent(self, overrides: dict[str, Any] | None = None) -> Any:
        from run_agent import AIAgent

        started = time.perf_counter()
        agent = AIAgent(**self.agent_kwargs(overrides or {}))
        agent._print_fn = self.log.print_fn
        self.report["timings"].setdefault("agent_init_s", []).append(round(time.perf_counter() - started, 3))
        self.agent = agent
        self.agents.append(agent)
        self.report["agents"].append(agent_summary(agent))
        return agent

    # -- steps -------------------------------------------------------------------
    def run(self) -> None:
        if self.scenario.get("discover_mcp"):
            from tools.mcp_tool import discover_mcp_tools

            started = time.perf_counter()
            discover_mcp_tools()
            self.report["timings"]["discover_mcp_s"] = round(time.perf_counter() - started, 3)
        self.log.step = -1
        resume = self.scenario.get("resume_session")
        self.new_agent({"session_id": resume} if resume else {})
        if resume:
            self.history = self.load_history_from_db()
        self.report["engine"] = engine_identity(self.agent.context_compressor)
        self.report["plugin_state"] = plugin_state()
        for index, step in enumerate(self.scenario.get("steps", [])):
            if not self.run_step(index, step):
                break
        self.report["final_messages"] = _jsonable(self.history)
        self.report["final_engine"] = probe_engine(getattr(self.agent, "context_compressor", None), self.probe_attrs)

    def run_step(self, index: int, step: dict[str, Any]) -> bool:
        op = step.get("op")
        handler: Callable[[dict[str, Any]], dict[str, Any]] | None = getattr(self, f"op_{op}", None)
        self.log.step = index
        first_event = len(self.log.events)
        record: dict[str, Any] = {"index": index, "op": op, "id": step.get("id"), "ok": True, "started_at": time.time()}
        started = time.perf_counter()
        try:
            if handler is None:
                raise ValueError(f"unknown step op {op!r}")
            record.update(handler(step))
        except Exception as exc:  # noqa: BLE001 - reported to the test
            record["ok"] = False
            record["error"] = _error(exc)
        record["duration_s"] = round(time.perf_counter() - started, 3)
        record["ended_at"] = time.time()
        record["messages"] = _jsonable(self.history)
        record["engine"] = probe_engine(
            getattr(self.agent, "context_compressor", None), self.probe_attrs + list(step.get("attrs", []))
        )
        record["events"] = self.log.since(first_event)
        self.report["steps"].append(record)
        if not record["ok"] and not step.get("expect_error"):
            self.report["ok"] = False
            self.report["error"] = record["error"]
            return bool(step.get("continue_on_error"))
        return True

    def op_turn(self, step: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.scenario.get("cli_task_id"):
            # the hermes CLI passes its session id as task_id: per-task host
            # state (read dedup, loop guards) then persists across turns
            kwargs["task_id"] = self.agent.session_id
        result = self.agent.run_conversation(step["text"], conversation_history=list(self.history), **kwargs)
        messages = result.get("messages")
        if isinstance(messages, list):
            self.history = messages
        return {
            "final_response": result.get("final_response"),
            "result": _jsonable({k: v for k, v in result.items() if k != "messages"}),
        }

    def op_compress(self, step: dict[str, Any]) -> dict[str, Any]:
        """What the CLI's ``/compress [focus]`` does (cli.py ~9840-9880)."""
        from agent.model_metadata import estimate_request_tokens_rough

        approx = step.get("approx_tokens")
        if approx is None:
            approx = estimate_request_tokens_rough(
                self.history,
                system_prompt=getattr(self.agent, "_cached_system_prompt", "") or "",
                tools=getattr(self.agent, "tools", None) or None,
            )
        before = len(self.history)
        compressed, system_prompt = self.agent._compress_context(
            list(self.history),
            None,
            approx_tokens=approx,
            focus_topic=step.get("focus") or None,
            force=bool(step.get("force", True)),
        )
        self.history = list(compressed)
        return {
            "approx_tokens": approx,
            "messages_before": before,
            "messages_after": len(self.history),
            "system_prompt_len": len(system_prompt or ""),
            "session_id": getattr(self.agent, "session_id", None),
        }

    def op_probe(self, step: dict[str, Any]) -> dict[str, Any]:
        return {"agent": agent_summary(self.agent), "plugin_state": plugin_state()}

    def op_end_session(self, step: dict[str, Any]) -> dict[str, Any]:
        self.agent.shutdown_memory_provider(list(self.history))
        return {"session_id": getattr(self.agent, "session_id", None)}

    def op_new_agent(self, step: dict[str, Any]) -> dict[str, Any]:
        """A second agent, as after a restart: ``session_id`` is ``"same"``
        (default; like ``hermes --resume``), ``"new"`` or an explicit id;
        ``history`` is ``"db"`` (reload from state.db like the CLI resume),
        ``"memory"`` (keep the driver's list) or ``"none"``."""
        previous = self.agent
        overrides = dict(step.get("agent", {}))
        sid = step.get("session_id", "same")
        if sid == "same":
            overrides.setdefault("session_id", getattr(previous, "session_id", None))
        elif sid != "new":
            overrides.setdefault("session_id", sid)
        mode = step.get("history", "db")
        self.new_agent(overrides)
        if mode == "db":
            self.history = self.load_history_from_db()
        elif mode == "none":
            self.history = []
        return {"agent": agent_summary(self.agent), "history_len": len(self.history)}

    def load_history_from_db(self) -> list[dict[str, Any]]:
        """The live agent's session transcript from state.db, as ``hermes
        --resume`` restores it (cli_agent_setup_mixin._init_agent)."""
        if self.session_db is None:
            raise RuntimeError("loading history from state.db needs session_db")
        session_id = self.agent.session_id
        resolved = self.session_db.resolve_resume_session_id(session_id) or session_id
        restored = self.session_db.get_messages_as_conversation(resolved, repair_alternation=True)
        return [m for m in restored or [] if m.get("role") != "session_meta"]

    def op_set_history(self, step: dict[str, Any]) -> dict[str, Any]:
        self.history = list(step.get("messages", []))
        return {"history_len": len(self.history)}

    def op_python(self, step: dict[str, Any]) -> dict[str, Any]:
        """Escape hatch: exec ``code`` with ``agent``, ``engine``, ``history``,
        ``runner``, ``state``; whatever it assigns to ``result`` is reported
        and ``history`` may be rebound."""
        namespace: dict[str, Any] = {
            "agent": self.agent,
            "engine": getattr(self.agent, "context_compressor", None),
            "history": self.history,
            "runner": self,
            "state": self.state,
            "result": None,
        }
        exec(compile(step["code"], f"<scenario step {step.get('id') or ''}>", "exec"), namespace)
        if isinstance(namespace.get("history"), list):
            self.history = namespace["history"]
        return {"result": _jsonable(namespace.get("result"))}


def main(argv: list[str]) -> int:
    """Run the scenario; write the report; exit 0 if ``report["ok"]``.

    Report keys: ``ok``, ``error`` ({type, message, traceback}), ``timings``
    (``import_run_agent_s``, ``agent_init_s`` list, ``total_s``), ``env``,
    ``engine`` (identity of the first agent's engine), ``plugin_state``
    (``plugins`` as listed by the plugin manager with ``source``/``enabled``/
    ``error``/``module``, and the registered ``context_engine``), ``agents``
    (one summary per agent: session id, tool names, engine identity),
    ``steps`` (per step: ``ok``, ``error``, ``final_response``, ``messages``
    after it, ``engine`` probe, ``events`` emitted during it), ``events``
    (all: ``status:warn``, ``status:lifecycle``, ``print``, ``log``),
    ``final_messages``, ``final_engine`` and ``stdout`` (captured prints).
    """
    if len(argv) != 3:
        print("usage: driver.py SCENARIO.json REPORT.json", file=sys.stderr)
        return 2
    scenario = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    report_path = Path(argv[2])
    log = EventLog()
    report: dict[str, Any] = {
        "ok": True,
        "error": None,
        "timings": {},
        "env": {
            "hermes_home": os.environ.get("HERMES_HOME"),
            "python": sys.executable,
            "pid": os.getpid(),
            "cwd": os.getcwd(),
        },
        "engine": None,
        "plugin_state": None,
        "agents": [],
        "steps": [],
        "events": log.events,
        "final_messages": [],
    }
    capture = _LogCapture(log)
    logging.getLogger().addHandler(capture)
    stdout = io.StringIO()
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(stdout):
            t0 = time.perf_counter()
            import run_agent  # noqa: F401 - triggers plugin discovery

            report["timings"]["import_run_agent_s"] = round(time.perf_counter() - t0, 3)
            if capture not in logging.getLogger().handlers:
                logging.getLogger().addHandler(capture)
            Runner(scenario, report, log).run()
    except BaseException as exc:  # noqa: BLE001 - everything goes to the report
        report["ok"] = False
        report["error"] = _error(exc)
        if report["plugin_state"] is None and "hermes_cli.plugins" in sys.modules:
            report["plugin_state"] = plugin_state()
    finally:
        report["timings"]["total_s"] = round(time.perf_counter() - started, 3)
        report["stdout"] = stdout.getvalue()
        report_path.write_text(json.dumps(report, indent=1, default=repr), encoding="utf-8")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.environ.get("STOWAGE_HARNESS_CLEAN_EXIT") == "1":
        sys.exit(code)  # run atexit handlers, join non-daemon threads
    # Default: skip interpreter teardown (host background threads such as
    # MCP loops can delay a normal exit); the report is already written.
    os._exit(code)
