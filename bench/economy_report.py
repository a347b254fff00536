"""What bench_economy prints: the engines side by side, needed-while-hidden, the curve and the targets."""

from __future__ import annotations

import math
from statistics import median
from typing import Any, Mapping, Sequence

from economy_signals import table

from stowage.command.replay.offline import PRICE_MODELS
from stowage.command.replay.offline.cache_markers import BREAKPOINTS_MODEL
from stowage.command.replay.offline.totals import ratio

HIDDEN_SUM_KEYS = ("outputs", "outputs_hidden", "outputs_hidden_stubbed", "outputs_used_later", "needed_while_hidden")
EXAMPLES_PER_ENGINE = 4
COST = f"cost_{PRICE_MODELS[0].name}"  # reads 0.1x, writes 1.25x
CLAUDE_COST = f"cost_{BREAKPOINTS_MODEL}"  # the same prices, read only at the markers Hermes lays on Claude routes


def add_hidden(totals: dict[str, dict[str, Any]], session_id: str, rows: Mapping[str, Mapping[str, Any]]) -> None:
    """Sum one session's needed-while-hidden figures into ``totals`` (label -> figures)."""
    for label, row in rows.items():
        total = totals.setdefault(label, {**{k: 0 for k in HIDDEN_SUM_KEYS}, "gaps": [], "examples": [], "cases": []})
        for key in HIDDEN_SUM_KEYS:
            total[key] += int(row.get(key, 0) or 0)
        total["gaps"].extend(row.get("needed_gaps") or [])
        total["cases"].extend(case for case in row.get("needed_cases") or [] if "primary" in case)
        room = EXAMPLES_PER_ENGINE - len(total["examples"])
        for example in (row.get("needed_examples") or [])[: max(0, room)]:
            total["examples"].append({**example, "session": session_id})


def print_why_hidden(label: str, hidden: Mapping[str, Any]) -> None:
    """How each output ``label`` hid and the agent needed was hidden, and which signal would have kept it."""
    cases = hidden.get("cases") or []
    print()
    print(f"{label}: why the {len(cases)} outputs needed while hidden were hidden (economy_signals.py)")
    for row in table(cases):
        print(f"  {row}")


def share(hidden: Mapping[str, Any]) -> float:
    return hidden["needed_while_hidden"] / max(1, hidden["outputs"])


def figure(total: Mapping[str, Any], key: str) -> float:
    if key == WRITES_PER_REQUEST:  # main-request prompt tokens not read from the cache, per request
        return (float(total["prompt_tokens"]) - float(total["cached_tokens"])) / max(1.0, float(total["requests"]))
    return float(total["cost"].get(key[5:], 0.0)) if key.startswith("cost_") else float(total[key])


WRITES_PER_REQUEST = "cache_writes_per_request"


def _ratio_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


ROWS = (
    ("billed prompt tokens (main + summary input)", "billed_tokens", "{:,.0f}"),
    ("  main request prompt tokens", "prompt_tokens", "{:,.0f}"),
    ("  summary request input tokens", "summary_input_tokens", "{:,.0f}"),
    *((f"cache-aware cost, {m.name}", f"cost_{m.name}", "{:,.0f}") for m in PRICE_MODELS),
    (f"cache-aware cost, {BREAKPOINTS_MODEL}", CLAUDE_COST, "{:,.0f}"),
    ("summary calls", "summary_calls", "{:,.0f}"),
    ("compactions (boundaries)", "compactions", "{:,.0f}"),
    ("compaction CPU seconds (inside compress)", "compaction_cpu_s", "{:,.2f}"),
    ("peak request tokens", "peak_request_tokens", "{:,.0f}"),
    ("requests over the window", "over_window_requests", "{:,.0f}"),
    ("requests", "requests", "{:,.0f}"),
    ("cache breaks right after a compaction", "cache_breaks_after_compaction", "{:,.0f}"),
    ("cache breaks otherwise (prefix rewritten)", "cache_breaks_other", "{:,.0f}"),
    ("cache writes per request (uncached tokens)", WRITES_PER_REQUEST, "{:,.0f}"),
    ("tool results replaced by hooks (spill)", "hook_replaced_results", "{:,.0f}"),
    ("summary calls prepared ahead (in the count)", "summaries_prepared", "{:,.0f}"),
    ("  ... used by a compaction", "summaries_prepared_used", "{:,.0f}"),
    ("replay wall seconds (engine + driver)", "wall_s", "{:,.1f}"),
)


def print_engines(
    labels: Sequence[str], totals: Mapping[str, Mapping[str, Any]], stowage: str, baselines: Sequence[str]
) -> None:
    width = 17
    print(
        f"{'':46}"
        + "".join(f"{label:>{width}}" for label in labels)
        + "".join(f"{'stowage/' + b.split()[-1]:>{width}}" for b in baselines)
    )
    for title, key, fmt in ROWS:
        values = [figure(totals[label], key) for label in labels]
        ratios = [ratio(figure(totals[stowage], key), figure(totals[b], key)) for b in baselines]
        print(
            f"{title:46}"
            + "".join(f"{fmt.format(v):>{width}}" for v in values)
            + "".join(f"{_ratio_text(r):>{width}}" for r in ratios)
        )


def wait_figures(total: Mapping[str, Any]) -> dict[str, float]:
    """The wait table's figures of one engine's totals (timed replay: per-compaction simulated seconds)."""
    waits = sorted(float(w) for w in total.get("compaction_waits") or [])
    prepared = list(total.get("compaction_prepared") or [])
    calls = float(total["summary_calls"])
    wasted = float(total.get("summaries_prepared_wasted", 0) or 0)
    return {
        "compactions": float(len(waits)),
        "p50": percentile(waits, 0.5),
        "p90": percentile(waits, 0.9),
        "max": waits[-1] if waits else 0.0,
        "total": sum(waits),
        "prepared_share": sum(map(bool, prepared)) / len(prepared) if prepared else 0.0,
        "wasted": wasted,
        "wasted_share": wasted / calls if calls else 0.0,
        "wasted_tokens": float(total.get("summaries_prepared_wasted_tokens", 0) or 0),
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile of sorted ``values`` (0 when empty)."""
    if not values:
        return 0.0
    rank = max(1, math.ceil(q * len(values) - 1e-9))
    return float(values[min(len(values), rank) - 1])


def print_waits(labels: Sequence[str], totals: Mapping[str, Mapping[str, Any]], timing: str) -> None:
    print()
    print(
        f"the wait (simulated clock: {timing}; tool runs take no time): seconds each compaction's compress() "
        "blocked the turn"
    )
    width = 17
    print(f"{'':46}" + "".join(f"{label:>{width}}" for label in labels))
    figures = {label: wait_figures(totals[label]) for label in labels}
    for title, key, fmt in (
        ("compactions (boundaries)", "compactions", "{:,.0f}"),
        ("wait per compaction p50 (s)", "p50", "{:,.1f}"),
        ("wait per compaction p90 (s)", "p90", "{:,.1f}"),
        ("wait per compaction max (s)", "max", "{:,.1f}"),
        ("wait, all compactions (s)", "total", "{:,.0f}"),
        ("compactions using a prepared summary", "prepared_share", "{:.1%}"),
        ("wasted summary calls (prepared, unused)", "wasted", "{:,.0f}"),
        ("  ... share of all summary calls", "wasted_share", "{:.1%}"),
        ("  ... their input tokens", "wasted_tokens", "{:,.0f}"),
    ):
        print(f"{title:46}" + "".join(f"{fmt.format(figures[label][key]):>{width}}" for label in labels))


def print_served(label: str, total: Mapping[str, Any], rows_shown: int = 40) -> None:
    """Diagnostics (``--diagnose``): why compactions went unprepared or waited, and why prepared calls were wasted."""
    served = list(total.get("compaction_served") or [])
    print()
    print(f"how {label}'s compactions were served (--diagnose): outcome / why, count")
    tally: dict[str, int] = {}
    for row in served:
        waited = " (waited)" if row["outcome"] == "used" and row["wait_s"] > 0 else ""
        key = f"{row['outcome']}{waited}" + (f" / {row['why']}" if row["why"] else "")
        tally[key] = tally.get(key, 0) + 1
    for key, count in sorted(tally.items(), key=lambda kv: -kv[1]):
        print(f"  {count:>4}  {key}")
    wasted: dict[str, int] = {}
    for reason in total.get("summaries_wasted_reasons") or []:
        wasted[reason] = wasted.get(reason, 0) + 1
    print("wasted prepared calls: why, count")
    for key, count in sorted(wasted.items(), key=lambda kv: -kv[1]):
        print(f"  {count:>4}  {key}")
    slow = [row for row in served if row["wait_s"] > 0 or row["outcome"] != "used"]
    print(f"compactions that waited or used no prepared summary (first {rows_shown}):")
    for row in slow[:rows_shown]:
        print(
            f"  {row['session']} #{row['nth']} turn {row['turn']} request {row['request']} "
            f"at {row['approx_tokens']}: {row['outcome']}, waited {row['wait_s']:g} s; {row['why']}"
        )


def wait_targets(figures: Mapping[str, float]) -> list[tuple[str, float, str, bool]]:
    """Issue 34's targets on Stowage's wait figures: (what, measured, limit text, met)."""
    return [
        ("p90 wait per compaction (s)", figures["p90"], "<= 1.0 s", figures["p90"] <= 1.0),
        ("compactions using a prepared summary", figures["prepared_share"], ">= 90%", figures["prepared_share"] >= 0.9),
        ("wasted summary calls, share of all", figures["wasted_share"], "<= 10%", figures["wasted_share"] <= 0.1),
    ]


def print_wait_targets(checks: Sequence[tuple[str, float, str, bool]]) -> None:
    print()
    print("issue 34 targets (the wait, Stowage):")
    for what, value, limit, met in checks:
        shown = f"{value:.1f} s" if limit.endswith(" s") else f"{value:.1%}"
        print(f"  {what:52} {shown:>9}  {limit:>10}  {'met' if met else 'NOT met'}")


def print_hidden(labels: Sequence[str], hidden: Mapping[str, Mapping[str, Any]]) -> None:
    print()
    print(
        "needed while hidden: outputs the request did not carry verbatim (stubbed, pruned, compacted away, or folded\n"
        "into a collapse line) whose distinctive token (identifier or path of 6+ chars, or code line of 12+, "
        "first seen\n"
        "in that output within its own trajectory, rare: in fewer than 5% of the replayed trajectories, "
        "absent from the\n"
        "rest of the request) the assistant message answering that request used"
    )
    width = 17
    print(f"{'':46}" + "".join(f"{label:>{width}}" for label in labels))
    for title, key in (
        ("tool outputs", "outputs"),
        ("hidden in some request", "outputs_hidden"),
        ("  ... stubbed or pruned (message kept)", "outputs_hidden_stubbed"),
        ("used by a later assistant message", "outputs_used_later"),
        ("needed while hidden", "needed_while_hidden"),
    ):
        print(f"{title:46}" + "".join(f"{hidden[label][key]:>{width},}" for label in labels))
    print(f"{'  ... share of all outputs':46}" + "".join(f"{share(hidden[label]):>{width}.2%}" for label in labels))
    print(
        f"{'  ... share of outputs used later':46}"
        + "".join(
            f"{hidden[e]['needed_while_hidden'] / max(1, hidden[e]['outputs_used_later']):>{width}.1%}" for e in labels
        )
    )
    print(
        f"{'  ... median requests hidden before the use':46}"
        + "".join(f"{(median(hidden[e]['gaps']) if hidden[e]['gaps'] else 0):>{width}g}" for e in labels)
    )
    for label in labels:
        for example in hidden[label]["examples"]:
            print(
                f"  e.g. {label}: {example['session']} request {example['request']}: a {example['tool'] or 'tool'} "
                f"output {example['how']} for {example['hidden_for_requests']} requests; the answer used "
                f"{example['quoted']!r}"
            )


def print_curve(
    curve: Sequence[tuple[str, str]],
    totals: Mapping[str, Mapping[str, Any]],
    hidden: Mapping[str, Mapping[str, Any]],
    base: str,
    budgets: Mapping[str, float],
) -> None:
    if not curve:
        return
    print()
    print(
        f"curve: Stowage with one setting changed (ratios to {base}; cost {COST[5:]}; needed = needed while hidden, "
        "share of outputs)"
    )
    print(
        f"{'setting':>28} {'budget':>7} {'billed':>8} {'cost':>8} {'summaries':>10} {'(calls)':>8} "
        f"{'needed':>8} {'peak':>8} {'over':>5}"
    )
    for label, note in curve:
        total = totals[label]
        print(
            f"{label:>28} {budgets.get(label, 0):>7.2f} "
            f"{_ratio_text(ratio(figure(total, 'billed_tokens'), figure(totals[base], 'billed_tokens'))):>8} "
            f"{_ratio_text(ratio(figure(total, COST), figure(totals[base], COST))):>8} "
            f"{_ratio_text(ratio(total['summary_calls'], totals[base]['summary_calls'])):>10} "
            f"{total['summary_calls']:>8,} {share(hidden[label]):>8.2%} {total['peak_request_tokens']:>8,} "
            f"{total['over_window_requests']:>5,}{note}"
        )


def targets(
    totals: Mapping[str, Mapping[str, Any]],
    hidden: Mapping[str, Mapping[str, Any]],
    stowage: str,
    newest: str | None,
    oldest: str,
) -> list[tuple[str, float, str, bool]]:
    """Issue 42's targets (issue 22's, tightened): (what, measured, limit text, met)."""
    checks: list[tuple[str, float, str, bool]] = []

    def r(key: str, base: str) -> float:
        value, reference = figure(totals[stowage], key), figure(totals[base], key)
        if reference == 0:
            return 1.0 if value == 0 else float("inf")
        return value / reference

    def against(base: str, billed: float, cost: float) -> list[tuple[str, float, str, bool]]:
        """The ratio limits against one engine, and its needed-while-hidden share as a ceiling."""
        ratios = (
            (f"billed prompt tokens vs {base}", r("billed_tokens", base), billed),
            (f"cache-aware cost vs {base}", r(COST, base), cost),
            (f"summary calls vs {base}", r("summary_calls", base), 1.0),
        )
        ceiling, mine = share(hidden[base]), share(hidden[stowage])
        return [(what, value, f"<= {limit:.2f}x", value <= limit) for what, value, limit in ratios] + [
            (f"needed while hidden vs {base}'s share", mine, f"<= {ceiling:.2%}", mine <= ceiling)
        ]

    if newest is not None:
        checks += against(newest, billed=0.50, cost=0.60)
        mine = share(hidden[stowage])
        checks.append(("needed while hidden, share of outputs", mine, "<= 1.00%", mine <= 0.01))
    checks += against(oldest, billed=1.0, cost=1.0)
    return checks


def print_targets(checks: Sequence[tuple[str, float, str, bool]]) -> None:
    print()
    print("issue 42 targets (shipped settings unless --set was given):")
    for what, value, limit, met in checks:
        shown = f"{value:.2%}" if limit.endswith("%") else f"{value:.2f}x"
        print(f"  {what:52} {shown:>9}  {limit:>10}  {'met' if met else 'NOT met'}")


SUITE = (
    ("half A (defaults chosen here)", ["--dataset", "agent", "--half", "A"]),
    ("half B (held out)", ["--dataset", "agent", "--half", "B"]),
    ("404 set (its Gemini part overlaps the 204)", ["--dataset", "swe404"]),
)


def run_suite(main: Any, argv: list[str]) -> int:
    """``bench_economy --suite``: each dataset's report in full, then Stowage against the newest built-in on all."""
    import contextlib
    import io
    import json

    wants_json = "--json" in argv
    base = [a for a in argv if a != "--json"]
    reports = []
    for title, dataset in SUITE:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([*base, *dataset, "--json"])
        text = out.getvalue()
        if code != 0 or not text.lstrip().startswith("{"):
            print(f"bench_economy --suite: {title}: {text.strip() or f'exit {code}'}")
            return code or 1
        report = json.loads(text)
        reports.append((title, report))
        if not wants_json:
            print(f"== {title}: {report['data']} ==")
            engines, totals, hidden = report["engines"], report["totals"], report["hidden"]
            print_engines(engines, totals, engines[-1], [e for e in engines if e != engines[-1]])
            print_waits(engines, totals, report["timing"])
            print_hidden(engines, hidden)
            print_why_hidden(engines[-1], hidden[engines[-1]])
            print()
    if wants_json:
        print(json.dumps([{"dataset": title, **report} for title, report in reports], indent=2, default=str))
        return 0
    print_suite(reports)
    return 0


def print_suite(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """One row per dataset: Stowage against the newest built-in of that run (issue 42's targets)."""
    print("Stowage against the newest built-in of each run (targets: billed <= 0.50x, cost <= 0.60x, summary calls")
    print("<= 1.0x, needed while hidden <= the built-in's share, wait p90 0 s)")
    print(
        f"  {'dataset':48} {'billed':>7} {'cost':>7} {'claude':>7} {'summ.':>7} {'writes/req':>11} "
        f"{'hidden':>15} {'built-in hidden':>15} {'wait p90':>9}"
    )
    for title, report in reports:
        engines, totals, hidden = report["engines"], report["totals"], report["hidden"]
        stowage, newest = engines[-1], engines[-2]
        mine, theirs = totals[stowage], totals[newest]
        writes = ratio(figure(mine, WRITES_PER_REQUEST), figure(theirs, WRITES_PER_REQUEST))
        waits = report.get("waits", {}).get(stowage) or wait_figures(mine)
        print(
            f"  {title:48} {_ratio_text(ratio(mine['billed_tokens'], theirs['billed_tokens'])):>7} "
            f"{_ratio_text(ratio(figure(mine, COST), figure(theirs, COST))):>7} "
            f"{_ratio_text(ratio(figure(mine, CLAUDE_COST), figure(theirs, CLAUDE_COST))):>7} "
            f"{_ratio_text(ratio(mine['summary_calls'], theirs['summary_calls'])):>7} {_ratio_text(writes):>11} "
            f"{hidden[stowage]['needed_while_hidden']:>6} {share(hidden[stowage]):>7.2%} "
            f"{hidden[newest]['needed_while_hidden']:>6} {share(hidden[newest]):>7.2%} "
            f"{waits.get('p90', 0.0):>7.1f} s"
        )
    print(f"  (the newest built-in: {reports[0][1]['engines'][-2] if reports else '-'}; claude: the same prices read")
    print("   only at the cache markers Hermes lays on Claude routes, found within 20 blocks back)")
