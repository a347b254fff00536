"""The figures of a ``stowage replay`` run: one dictionary for ``--json``, the HTML page and the terminal.

Per session and in total, for both engines: prompt tokens billed (main
requests, summary inputs), the prompt-cache-aware cost under the chosen price
model (in input-token units: a plain input token costs 1), compactions and
summary calls, the peak request against the window, outputs spilled and
recoverable, and the settings used.  Everything the HTML page shows comes
from this dictionary, so ``--json`` carries the same figures.
"""

from __future__ import annotations

from typing import Any, Sequence

from .options import SWEEP_GRID

ENGINE_KEYS = (
    "requests",
    "prompt_tokens",
    "cached_tokens",
    "summary_calls",
    "summary_input_tokens",
    "billed_tokens",
    "cost",
    "peak_request_tokens",
    "over_window_requests",
    "compactions",
    "compress_calls",
    "user_turns",
    "spilled_outputs",
    "recoverable_outputs",
    "cache_breaks_after_compaction",
    "cache_breaks_other",
)
SUM_KEYS = tuple(k for k in ENGINE_KEYS if k != "peak_request_tokens")
TOOL_SEARCH_NOTE = (
    "not measured: state.db and transcript files do not record the tool schemas a session was "
    "offered, and Stowage's tool search defers only MCP and plugin tools; the replay offers "
    "Hermes's core tool list to both engines, which tool search never defers"
)
MEANING = (
    "Figures are about context size, cost and compaction events on your recorded sessions, replayed "
    "offline: no model is called, summaries come from a stand-in, and the recorded replies are replayed "
    "as they were (a real run with Stowage would have seen different requests and may have answered "
    "differently). Costs are in input-token units: a plain input token costs 1, a cached one the read "
    "price, a newly cached one the write price."
)


def _engine_row(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row.get(key, 0) for key in ENGINE_KEYS}


def _saving(builtin: float, stowage: float) -> float | None:
    return None if not builtin else 1.0 - stowage / builtin


def _total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {key: 0 for key in ENGINE_KEYS}
    for row in rows:
        for key in SUM_KEYS:
            total[key] += row.get(key, 0) or 0
        total["peak_request_tokens"] = max(total["peak_request_tokens"], row.get("peak_request_tokens", 0))
    return total


def config_lines(settings: dict[str, Any]) -> str:
    """The ``stowage:`` block of ``config.yaml`` for flat ``section.key`` settings."""
    sections: dict[str, list[tuple[str, Any]]] = {}
    for path, value in sorted(settings.items()):
        section, key = path.split(".", 1)
        sections.setdefault(section, []).append((key, value))
    lines = ["stowage:"]
    for section, items in sections.items():
        lines.append(f"  {section}:")
        lines.extend(f"    {key}: {str(value).lower() if isinstance(value, bool) else value}" for key, value in items)
    return "\n".join(lines)


def _sweep(sessions: Sequence[dict[str, Any]], engines: Any, window: int) -> dict[str, Any] | None:
    labels = [label for label, _ in engines.configs if label.startswith("sweep ")]
    if not labels:
        return None
    settings = dict(engines.configs)
    points = []
    for label in [*labels, "stowage"]:
        total = _total([s["rows"][label] for s in sessions if label in s["rows"]])
        points.append(
            {
                "label": label,
                "settings": {
                    k: settings[label].get(k) for k in ("view.compact_at", "view.hot_tokens", "view.step_tokens")
                },
                "cost": total["cost"],
                "billed_tokens": total["billed_tokens"],
                "summary_calls": total["summary_calls"],
                "compactions": total["compactions"],
                "peak_request_tokens": total["peak_request_tokens"],
                "over_window_requests": total["over_window_requests"],
            }
        )
    current = points.pop()
    current["label"] = "current (the stowage run)"
    for key in current["settings"]:
        current["settings"][key] = engines.effective.get(key, current["settings"][key])
    fitting = [p for p in points if p["over_window_requests"] == 0]
    best = min(fitting, key=lambda p: (p["cost"], p["label"])) if fitting else None
    return {
        "grid": {k: list(v) for k, v in SWEEP_GRID.items()},
        "points": points,
        "current": current,
        "best": best,
        "window": window,
        "config": config_lines(best["settings"]) if best else None,
        "verdict": (
            f"cheapest with no request over the {window:,}-token window: {best['label']}"
            f" (cost {best['cost']:,.0f} vs {current['cost']:,.0f} with the current settings; "
            f"{best['summary_calls']} summary calls vs {current['summary_calls']}: each is a real model "
            "call the stand-in does not price, and a summary loses detail)"
            if best
            else "every setting tried sent a request over the window"
        ),
    }


def build_report(
    sessions: Sequence[dict[str, Any]],
    skipped: Sequence[dict[str, str]],
    *,
    options: Any,
    source: str,
    engines: Any,
    interrupted: bool,
    wall_s: float,
) -> dict[str, Any]:
    out_sessions = []
    for s in sessions:
        rows = s["rows"]
        builtin, stowage = _engine_row(rows["built-in"]), _engine_row(rows["stowage"])
        out_sessions.append(
            {
                "session": s["session"],
                "title": s.get("title") or "",
                "started_at": s.get("started_at"),
                "recorded": s["recorded"],
                "recorded_rows": s.get("recorded_rows", 0),
                "host_compactions": s.get("host_compactions"),
                "problems": list(s.get("problems") or []),
                "stowage_recorded": s.get("stowage_recorded") or {"ran_stowage": False},
                "engines": {"built-in": builtin, "stowage": stowage},
                "saving": {
                    "billed_tokens": _saving(builtin["billed_tokens"], stowage["billed_tokens"]),
                    "cost": _saving(builtin["cost"], stowage["cost"]),
                },
                "series": s.get("series", {}),
            }
        )
    totals = {
        "built-in": _total([s["engines"]["built-in"] for s in out_sessions]),
        "stowage": _total([s["engines"]["stowage"] for s in out_sessions]),
    }
    recorded = {
        key: sum(s["recorded"][key] for s in out_sessions)
        for key in ("messages", "user", "assistant", "tool", "tool_calls")
    }
    price = options.price
    traces = [s["stowage_recorded"] for s in out_sessions if s["stowage_recorded"].get("ran_stowage")]
    recorded_with_stowage = {
        "sessions": [s["session"] for s in out_sessions if s["stowage_recorded"].get("ran_stowage")],
        "rebuilt": sum(t.get("rebuilt", 0) for t in traces),
        "not_rebuilt": sum(t.get("not_rebuilt", 0) for t in traces),
    }
    return {
        "ok": True,
        "partial": interrupted,
        "interrupted": interrupted,
        "source": source,
        "sessions_replayed": len(out_sessions),
        "sessions_skipped": len(skipped),
        "skipped": list(skipped),
        "window": options.window,
        "price_model": {
            "name": price.name,
            "cache_read": price.read,
            "cache_write": price.write,
            "unit": "input-token units (a plain input token costs 1)",
        },
        "summarizer": engines.StandInSummarizer.NAME,
        "tools": {"source": engines.tools_source, "count": len(engines.tools)},
        "tool_search_deferred_tokens": None,
        "tool_search_note": TOOL_SEARCH_NOTE,
        "settings": {
            "built-in": engines.builtin_settings,
            "stowage": engines.effective,
            "stowage_overrides": dict(options.settings),
        },
        "recorded": recorded,
        "recorded_with_stowage": recorded_with_stowage,
        "totals": totals,
        "saving": {
            "billed_tokens": _saving(totals["built-in"]["billed_tokens"], totals["stowage"]["billed_tokens"]),
            "cost": _saving(totals["built-in"]["cost"], totals["stowage"]["cost"]),
        },
        "sweep": _sweep(sessions, engines, options.window),
        "meaning": MEANING,
        "wall_s": round(wall_s, 2),
        "sessions": out_sessions,
    }


def saving_text(value: float | None) -> str:
    """``0.4`` -> ``40% less``; a negative saving is a cost."""
    if value is None:
        return "n/a"
    return f"{value:.0%} less" if value >= 0 else f"{-value:.0%} more"


def recorded_with_stowage_text(report: dict[str, Any]) -> str:
    """One sentence on the sessions that already ran Stowage, or "" when none did."""
    seen = report.get("recorded_with_stowage") or {}
    names = seen.get("sessions") or []
    if not names:
        return ""
    found = seen["rebuilt"] + seen["not_rebuilt"]
    return (
        f"{len(names)} session(s) were recorded with Stowage running ({', '.join(names[:5])}"
        f"{', ...' if len(names) > 5 else ''}): {seen['rebuilt']} of {found} output(s) the recording holds as "
        f"Stowage previews or stubs rebuilt from your store, {seen['not_rebuilt']} could not be (replayed as "
        "recorded, shortened); the outputs spilled and recoverable below are the replay's, counted the same way"
    )


def text_summary(report: dict[str, Any], html_path: str | None) -> str:
    """The terminal's short version of the report."""
    b, s = report["totals"]["built-in"], report["totals"]["stowage"]
    lines = [
        f"stowage replay: {report['sessions_replayed']} session(s) replayed, {report['sessions_skipped']} "
        f"skipped; {report['source']}",
        f"window {report['window']:,} tokens; price {report['price_model']['name']} (cache read "
        f"{report['price_model']['cache_read']:g}x, write {report['price_model']['cache_write']:g}x); "
        f"summaries: {report['summarizer']}",
    ]
    if report["interrupted"]:
        lines.append("INTERRUPTED (Ctrl-C): partial report of the sessions finished before the stop")
    rows = [
        ("billed prompt tokens", "billed_tokens"),
        ("cache-aware cost (input-token units)", "cost"),
        ("compactions", "compactions"),
        ("summary calls", "summary_calls"),
        ("peak request tokens", "peak_request_tokens"),
        ("requests over the window", "over_window_requests"),
        ("outputs spilled / recoverable", None),
    ]
    lines.append(f"{'':38} {'built-in':>14} {'stowage':>14}")
    for title, key in rows:
        if key is None:
            lines.append(f"{title:38} {'-':>14} {s['spilled_outputs']:>7,} / {s['recoverable_outputs']:<6,}")
            continue
        lines.append(f"{title:38} {b[key]:>14,.0f} {s[key]:>14,.0f}")
    stowage_note = recorded_with_stowage_text(report)
    if stowage_note:
        lines.append(stowage_note)
    saving = report["saving"]
    lines.append(
        f"saving with stowage: billed tokens {saving_text(saving['billed_tokens'])}, cost {saving_text(saving['cost'])}"
    )
    for item in report["skipped"]:
        lines.append(f"skipped {item['session']}: {item['reason']}")
    for session in report["sessions"]:
        for problem in session["problems"]:
            lines.append(f"note {session['session']}: {problem}")
    if report["sweep"]:
        lines.append(report["sweep"]["verdict"])
        if report["sweep"]["config"]:
            lines.append("paste into config.yaml:\n" + report["sweep"]["config"])
    if html_path:
        lines.append(f"report: {html_path}")
    return "\n".join(lines)
