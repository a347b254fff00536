"""What each engine bills on long real agent sessions: Stowage against Hermes's built-in compressor.

Replays the shared mini-swe-agent trajectories (``../shared/data/agent-trajectories.jsonl.gz``),
chained into long sessions at a 128k window, through Hermes's built-in
``ContextCompressor`` and through Stowage in the same run, driven as Hermes
0.19.0 drives a context engine (``stowage.context_engine.replay.driver``):
both compaction gates, usage after every call, the ``-1`` sentinel after a
compaction, and every request billed as the provider receives it, after every
``llm_request`` middleware Stowage registers.  No model is called: summaries
come from a fixed-text stand-in, and each summary prompt is billed as input.

    python bench/bench_economy.py [--limit N] [--chain K] [--thresholds 0.25,0.3,...]
                                  [--set stowage.key=value ...] [--jobs N] [--json]

Prints, per engine and as Stowage/built-in ratios: billed prompt tokens (main
requests + summary inputs), prompt-cache-aware cost under two price models,
summary calls, compactions, compaction CPU, peak request size and requests
over the window, number of requests; then the curve: Stowage at several
``compaction.threshold`` values, so the default can be chosen from data.
Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "agent-trajectories.jsonl.gz"
DEFAULT_THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.5, 0.75)
BUILTIN = "built-in"
STOWAGE = "stowage"

from stowage.host.replay_host import (StowageHost, builtin_target, cleanup_home, hermes_tool_schemas,  # noqa: E402
                                 parse_setting, prepare_hermes_home)
from stowage.context_engine.replay import (DEFAULT_CHAIN, PRICE_MODELS, DataMissing, HostDriver,  # noqa: E402
                                           StandInSummarizer, TokenMeter, chain_sessions, read_transcripts)
from stowage.context_engine.replay.billing import tools_text  # noqa: E402
from stowage.context_engine.replay.totals import add_session, ratio, with_ratios  # noqa: E402


# -- configurations ----------------------------------------------------------------------
def configurations(overrides: dict[str, Any], thresholds: list[float],
                   curve_key: str = "compaction.threshold") -> list[tuple[str, dict[str, Any] | None]]:
    """(label, stowage settings or None for the built-in), in run order."""
    configs: list[tuple[str, dict[str, Any] | None]] = [(BUILTIN, None), (STOWAGE, dict(overrides))]
    for threshold in thresholds:
        configs.append((f"stowage@{threshold:g}", {**overrides, curve_key: threshold}))
    return configs


def working_budget_key(settings: dict[str, dict[str, Any]], threshold_percent: float) -> str:
    """The setting that sets Stowage's compaction threshold (its working budget) with these settings.

    ``compaction.threshold`` unless another share-of-window setting holds the
    engine's effective ``threshold_percent`` instead (a feature that moves the
    budget elsewhere, e.g. while it is enabled).
    """
    if settings.get("compaction", {}).get("threshold") == threshold_percent:
        return "compaction.threshold"
    matches = [f"{section}.{key}" for section, values in settings.items() for key, value in values.items()
               if isinstance(value, float) and not isinstance(value, bool) and value == threshold_percent]
    return matches[0] if len(matches) == 1 else "compaction.threshold"


# -- worker --------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(base_home: str, configs: list[tuple[str, dict[str, Any] | None]], window: int,
                 tools: list[dict[str, Any]]) -> None:
    home = Path(base_home) / f"worker-{os.getpid()}"
    prepare_hermes_home(home)
    hosts = {label: StowageHost(settings, home=home, window=window, tools=tools, label=label)
             for label, settings in configs if settings is not None}
    meter = TokenMeter()
    _WORKER.update(configs=configs, hosts=hosts, meter=meter, driver=HostDriver(meter, window=window),
                   tools=tools, window=window)


def _replay_session(session: Any) -> dict[str, Any]:
    meter: TokenMeter = _WORKER["meter"]
    driver: HostDriver = _WORKER["driver"]
    rows: dict[str, Any] = {}
    for label, settings in _WORKER["configs"]:
        summarizer = StandInSummarizer(meter.count_text)
        if settings is None:
            target = builtin_target(summarizer, session.id, window=_WORKER["window"], tools=_WORKER["tools"])
        else:
            target = _WORKER["hosts"][label].target(summarizer, session.id)
        started = time.perf_counter()
        result = driver.replay(session.messages, target)  # closes the target
        row = result.as_dict()
        row["wall_s"] = time.perf_counter() - started
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


# -- printing ----------------------------------------------------------------------------------
def _fmt_ratio(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.2f}x"


def print_report(report: dict[str, Any]) -> None:
    totals = report["totals"]
    base, stow = totals[BUILTIN], totals[STOWAGE]
    print(f"bench_economy: {report['sessions']} chained sessions ({report['transcripts']} trajectories, "
          f"{report['chain']} per session) at a {report['window']:,}-token window")
    print(f"summaries: {report['summarizer']}; tokens: tiktoken o200k_base, same counter for both engines")
    print(f"request tools: {report['tools_source']}, {report['tools_tokens']:,} tokens "
          f"(+ the engine's own schemas for Stowage)")
    print(f"stowage settings overrides: {report['overrides'] or '(none: shipped defaults)'}; "
          f"effective compaction threshold (working budget) {report['stowage_threshold']:g} of the window")
    print(f"cached prefix = longest common prefix (tools, then whole messages) with the previous main request; "
          f"price models: " + ", ".join(f"{m.name} (read {m.read}x, write {m.write}x)" for m in PRICE_MODELS))
    print()
    rows = [
        ("billed prompt tokens (main + summary input)", "billed_tokens", "{:,.0f}"),
        ("  main request prompt tokens", "prompt_tokens", "{:,.0f}"),
        ("  summary request input tokens", "summary_input_tokens", "{:,.0f}"),
        *[(f"cache-aware cost, {m.name}", f"cost_{m.name}", "{:,.0f}") for m in PRICE_MODELS],
        ("summary calls", "summary_calls", "{:,.0f}"),
        ("compactions (boundaries)", "compactions", "{:,.0f}"),
        ("compaction CPU seconds (inside compress)", "compaction_cpu_s", "{:,.2f}"),
        ("peak request tokens", "peak_request_tokens", "{:,.0f}"),
        ("requests", "requests", "{:,.0f}"),
    ]
    print(f"{'':44} {'built-in':>14} {'stowage':>14} {'stowage/built-in':>17}")
    for title, key, fmt in rows:
        if key.startswith("cost_"):
            b, s = base["cost"][key[5:]], stow["cost"][key[5:]]
        else:
            b, s = base[key], stow[key]
        print(f"{title:44} {fmt.format(b):>14} {fmt.format(s):>14} {_fmt_ratio(ratio(s, b)):>17}")
    print(f"{'requests over the window':44} {base['over_window_requests']:>14,} {stow['over_window_requests']:>14,}")
    print(f"{'cached share of main prompt tokens':44} {base['cached_tokens'] / max(1, base['prompt_tokens']):>14.1%} "
          f"{stow['cached_tokens'] / max(1, stow['prompt_tokens']):>14.1%}")
    print(f"{'requests changed by middleware':44} {base['middleware_changed']:>14,} {stow['middleware_changed']:>14,}"
          f"   (middleware errors: {stow['middleware_errors']})")
    print(f"{'cache breaks right after a compaction':44} {base['cache_breaks_after_compaction']:>14,} "
          f"{stow['cache_breaks_after_compaction']:>14,}")
    print(f"{'cache breaks otherwise (prefix rewritten)':44} {base['cache_breaks_other']:>14,} "
          f"{stow['cache_breaks_other']:>14,}   (tokens re-written: {base['rewritten_tokens_other']:,} / "
          f"{stow['rewritten_tokens_other']:,})")
    print(f"{'tool results replaced by hooks (spill)':44} {base['hook_replaced_results']:>14,} "
          f"{stow['hook_replaced_results']:>14,}")
    print(f"{'summary calls prepared ahead (in the count)':44} {base['summaries_prepared']:>14,} "
          f"{stow['summaries_prepared']:>14,}   (used by a compaction: {stow['summaries_prepared_used']:,}, "
          f"wasted: {stow['summaries_prepared_wasted']:,})")
    print(f"{'replay wall seconds (engine + driver)':44} {base['wall_s']:>14.1f} {stow['wall_s']:>14.1f}")
    curve = [label for label in totals if label.startswith("stowage@")]
    if curve:
        cost_name = PRICE_MODELS[0].name
        print()
        print(f"curve: Stowage at several {report['curve_key']} values (ratios to the built-in; "
              f"cost under {cost_name}; budget = the engine's effective threshold share)")
        print(f"{'value':>10} {'budget':>7} {'billed':>8} {'cost':>8} {'summaries':>10} {'compactions':>12} "
              f"{'peak':>8} {'over window':>12}")
        for label in curve:
            total = totals[label]
            r = total["ratio_to_baseline"]
            print(f"{label.split('@', 1)[1]:>10} {report['working_budgets'][label]:>7.2f} {_fmt_ratio(r['billed_tokens']):>8} "
                  f"{_fmt_ratio(r[f'cost_{cost_name}']):>8} {_fmt_ratio(r['summary_calls']):>10} "
                  f"{total['compactions']:>12,} {total['peak_request_tokens']:>8,} {total['over_window_requests']:>12,}"
                  f"{'   (current setting: the stowage run above)' if label in report['curve_default'] else ''}")
    print()
    print(f"total wall time {report['wall_s']:.1f} s with {report['jobs']} worker(s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="JSONL(.gz) of OpenAI-format transcripts")
    parser.add_argument("--limit", type=int, default=None, help="use the first N trajectories")
    parser.add_argument("--chain", type=int, default=DEFAULT_CHAIN, help="trajectories per chained session")
    parser.add_argument("--window", type=int, default=128_000, help="context window in tokens")
    parser.add_argument("--thresholds", default=",".join(f"{t:g}" for t in DEFAULT_THRESHOLDS),
                        help="compaction.threshold values of the curve (comma-separated; empty: no curve)")
    parser.add_argument("--curve-key", default="",
                        help="the Stowage setting the curve varies (default: the one holding the engine's effective "
                             "compaction threshold, normally compaction.threshold)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a Stowage setting for every Stowage run, e.g. view.enabled=false (repeatable)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("--per-session", action="store_true", help="with --json: include every session's rows")
    args = parser.parse_args(argv)

    data = Path(args.data)
    if not data.is_file():
        print(f"bench_economy: skipped: the trajectory data is not at {data} "
              "(it lives in ../shared/data/ beside the checkout; see that folder's README)")
        return 0
    overrides = dict(parse_setting(item) for item in args.settings)
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    started = time.perf_counter()
    base_home = prepare_hermes_home()
    try:
        tools, tools_source = hermes_tool_schemas()
        try:
            probe = StowageHost(overrides, home=base_home / "probe", window=args.window, tools=tools)
        except ValueError as exc:  # StowageConfigError: a bad --set, reported like a bad config.yaml
            print(f"bench_economy: bad Stowage setting: {exc}", file=sys.stderr)
            return 2
        settings = _settings_snapshot(probe)
        threshold_percent = float(getattr(probe.singleton, "threshold_percent", 0) or 0)
        curve_key = args.curve_key or working_budget_key(settings, threshold_percent)
        current = settings.get(curve_key.split(".")[0], {}).get(curve_key.split(".", 1)[-1])
        aliases = {f"stowage@{t:g}": STOWAGE for t in thresholds if t == current}  # the default itself: reuse its run
        configs = [c for c in configurations(overrides, thresholds, curve_key) if c[0] not in aliases]
        budgets = {label: float(getattr(StowageHost(cfg, home=base_home / "probe", window=args.window).singleton,
                                        "threshold_percent", 0) or 0)
                   for label, cfg in configs if cfg is not None}
        meter = TokenMeter()
        tools_tokens = meter.tools_tokens(tools_text(tools))
        try:
            sessions = chain_sessions(read_transcripts(data, limit=args.limit), chain=args.chain)
            totals: dict[str, dict[str, Any]] = {}
            per_session = []
            transcripts = 0
            for session in run_sessions(sessions, args.jobs, (str(base_home), configs, args.window, tools)):
                add_session(totals, session["rows"])
                transcripts += len(session["parts"])
                if args.per_session:
                    per_session.append(session)
                if not args.json:
                    stow, base = session["rows"][STOWAGE], session["rows"][BUILTIN]
                    print(f"  {session['session']}: {len(session['parts'])} trajectories, {session['messages']} "
                          f"messages; billed stowage/built-in {stow['billed_tokens'] / max(1, base['billed_tokens']):.2f}x, "
                          f"summaries {stow['summary_calls']}/{base['summary_calls']}", file=sys.stderr, flush=True)
        except DataMissing as exc:
            print(f"bench_economy: skipped: {exc}")
            return 0
        if not totals:
            print("bench_economy: no sessions replayed (empty data?)")
            return 1
        curve_labels = [f"stowage@{t:g}" for t in thresholds]
        for alias, source in aliases.items():
            totals[alias] = totals[source]
            budgets[alias] = budgets[source]
        totals = {label: totals[label] for label in [BUILTIN, STOWAGE, *curve_labels] if label in totals}
        report = {
            "data": str(data), "transcripts": transcripts, "chain": args.chain, "sessions": totals[BUILTIN]["sessions"],
            "window": args.window, "summarizer": StandInSummarizer.NAME, "tools_source": tools_source,
            "tools_tokens": tools_tokens, "overrides": overrides,
            "stowage_threshold": threshold_percent, "stowage_settings": settings, "curve_key": curve_key,
            "working_budgets": budgets, "curve_default": sorted(aliases),
            "price_models": [vars(m) for m in PRICE_MODELS], "jobs": args.jobs,
            "totals": with_ratios(totals, BUILTIN), "wall_s": time.perf_counter() - started,
        }
        if args.per_session:
            report["per_session"] = per_session
        if args.json:
            print(json.dumps(report, indent=2, default=str))
        else:
            print_report(report)
        return 0
    finally:
        cleanup_home(base_home)


if __name__ == "__main__":
    raise SystemExit(main())
