"""The ``stowage replay`` report as one self-contained HTML page (inline CSS and SVG, no script, no network).

Rendered from the report dictionary of :mod:`.report` only, so the page
and ``--json`` show the same figures.  Plots: for each session, tokens per
request for both engines with a marker at each compaction; and the saving per
session.  Every text from a session (ids, titles, problems) is escaped.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from html import escape
from typing import Any

from .report import config_lines, recorded_with_stowage_text, saving_text

BUILTIN_COLOUR, STOWAGE_COLOUR = "#c0392b", "#1f6fb2"
MAX_SESSION_PLOTS = 40
MAX_SAVING_BARS = 60

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;padding:0 16px;
color:#222;max-width:1150px;box-sizing:border-box}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0;max-width:100%}th,td{padding:3px 6px;
border-bottom:1px solid #eee;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f4f4f4;font-weight:600;vertical-align:bottom}td{white-space:nowrap}td.id{white-space:normal;
overflow-wrap:normal;word-break:normal;min-width:120px;max-width:220px}td.pair{white-space:normal}
td.pair span{white-space:nowrap}td.text{white-space:normal;text-align:left;max-width:520px}
svg{max-width:100%;height:auto}
.note{color:#555;font-size:13px}.warn{color:#a04000}.plots{display:flex;flex-wrap:wrap;gap:12px}
.plot{border:1px solid #e2e2e2;padding:6px}.plot h3{font-size:12px;margin:0 0 4px;font-weight:600}
pre{background:#f6f6f6;padding:8px;font-size:13px}.legend span{margin-right:14px}
.b{color:#c0392b}.s{color:#1f6fb2}
"""


def _n(value: Any, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _when(ts: Any) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    try:
        return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):  # a recorded start time no calendar holds
        return ""


def _polyline(points: list[list[int]], sx: float, sy: float, x0: float, y0: float) -> str:
    return " ".join(f"{x0 + i * sx:.1f},{y0 - t * sy:.1f}" for i, t in points)


def session_plot(session: dict[str, Any], window: int, width: int = 540, height: int = 230) -> str:
    """Tokens per request for both engines, the window line, round y ticks and a mark at each compaction."""
    series = session.get("series") or {}
    b, s = series.get("built-in") or {}, series.get("stowage") or {}
    requests = max(b.get("requests", 0), s.get("requests", 0), 1)
    highest = max([window] + [t for _, t in (b.get("tokens") or [])] + [t for _, t in (s.get("tokens") or [])])
    ticks = _ticks(highest)
    top = ticks[-1]
    left, right, upper, lower = 44, 8, 8, 22
    x0, y0 = left, height - lower
    sx = (width - left - right) / max(1, requests - 1)
    sy = (height - upper - lower) / max(1, top)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="tokens per request">',
        f'<rect x="{x0}" y="{upper}" width="{width - left - right}" height="{y0 - upper}" fill="#fafafa"/>',
        f'<line x1="{x0}" y1="{y0 - window * sy:.1f}" x2="{width - right}" y2="{y0 - window * sy:.1f}" '
        f'stroke="#888" stroke-dasharray="4 3"/>',
        f'<text x="{x0 + 2}" y="{y0 - window * sy + 10:.1f}" font-size="9" fill="#666">window {window // 1000}k</text>',
        *(
            f'<line x1="{x0 - 3}" y1="{y0 - v * sy:.1f}" x2="{width - right}" y2="{y0 - v * sy:.1f}" stroke="#e6e6e6"/>'
            f'<text class="y-tick" data-tick="{v}" x="{x0 - 5}" y="{y0 - v * sy + 4:.1f}" font-size="11" '
            f'text-anchor="end" fill="#555">{_tick_label(v)}</text>'
            for v in ticks
        ),
        f'<text x="{x0}" y="{height - 6}" font-size="9" fill="#666">request 1</text>',
        f'<text x="{width - right - 60}" y="{height - 6}" font-size="9" fill="#666">request {requests}</text>',
    ]
    for data, colour, label in ((b, BUILTIN_COLOUR, "built-in"), (s, STOWAGE_COLOUR, "stowage")):
        points = data.get("tokens") or []
        if points:
            parts.append(
                f'<polyline class="series-{label}" fill="none" stroke="{colour}" stroke-width="1.4" '
                f'points="{_polyline(points, sx, sy, x0, y0)}"/>'
            )
        for index in data.get("compactions") or []:
            x = x0 + min(index, requests - 1) * sx
            parts.append(
                f'<path class="compaction-{label}" d="M{x:.1f} {y0} l-4 8 h8 z" fill="{colour}">'
                f"<title>{label} compaction before request {index + 1}</title></path>"
            )
    parts.append("</svg>")
    return "".join(parts)


SAVING_ROW = 22  # px per session in the saving chart


def _saving_extent(values: list[float]) -> tuple[float, float]:
    """The chart's range (low <= 0 <= high), rounded out to 10% steps so the largest bar fills its side."""
    step = 0.1
    low = math.floor(round(min([0.0, *values]) / step, 6)) * step
    high = math.ceil(round(max([0.0, *values]) / step, 6)) * step
    return low, (high if high > low else low + step)


def savings_plot(sessions: list[dict[str, Any]], width: int = 1000) -> str:
    """One labelled bar per session: the share of the built-in's cost Stowage saved (left of zero: it cost more).

    A row per session (its id on the left, the value on the right), so the chart is as tall as the data and
    the scale is the data's own range, not a fixed -100%..+100% frame."""
    rows = [(s["session"], s["saving"]["cost"]) for s in sessions]
    if not rows:
        return ""
    values = [max(-1.0, min(1.0, v)) for _, v in rows if v is not None]
    low, high = _saving_extent(values)
    label_w, value_w, top, bottom = 250, 110, 8, 26
    area = width - label_w - value_w
    zero = label_w + area * (-low) / (high - low)
    height = top + SAVING_ROW * len(rows) + bottom

    def x_of(value: float) -> float:
        return label_w + area * (value - low) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="cost saving per session" class="saving-chart">',
        f'<line x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" y2="{height - bottom + 4}" stroke="#888"/>',
    ]
    for tick in sorted({low, 0.0, high}):
        parts.append(
            f'<text class="saving-tick" x="{x_of(tick):.1f}" y="{height - 8}" font-size="11" fill="#555" '
            f'text-anchor="middle">{"0" if tick == 0 else saving_text(tick)}</text>'
        )
    for index, (name, value) in enumerate(rows):
        y = top + index * SAVING_ROW
        label = name if len(name) <= 34 else name[:33] + "\u2026"
        parts.append(
            f'<g class="saving-row"><title>{escape(name)}: {saving_text(value)} cost</title>'
            f'<text class="saving-label" x="{label_w - 8}" y="{y + 15}" font-size="12" fill="#222" '
            f'text-anchor="end">{escape(label)}</text>'
        )
        if value is not None:
            v = max(-1.0, min(1.0, value))
            x0, x1 = sorted((zero, x_of(v)))
            colour = STOWAGE_COLOUR if v >= 0 else BUILTIN_COLOUR
            parts.append(
                f'<rect class="saving-bar" x="{x0:.1f}" y="{y + 3}" width="{max(1.0, x1 - x0):.1f}" '
                f'height="{SAVING_ROW - 6}" fill="{colour}"/>'
            )
        parts.append(
            f'<text class="saving-value" x="{width - value_w + 8}" y="{y + 15}" font-size="12" '
            f'fill="#222">{saving_text(value)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _engine_table(report: dict[str, Any]) -> str:
    b, s = report["totals"]["built-in"], report["totals"]["stowage"]
    rows = [
        ("prompt tokens billed (main requests + summary inputs)", "billed_tokens", 0),
        ("&nbsp;&nbsp;main request prompt tokens", "prompt_tokens", 0),
        ("&nbsp;&nbsp;of which read from the prompt cache", "cached_tokens", 0),
        ("&nbsp;&nbsp;summary request input tokens", "summary_input_tokens", 0),
        ("cache-aware cost (input-token units)", "cost", 0),
        ("compactions", "compactions", 0),
        ("summary calls", "summary_calls", 0),
        ("peak request tokens", "peak_request_tokens", 0),
        ("requests over the window", "over_window_requests", 0),
        ("requests", "requests", 0),
        ("tool outputs spilled to the store", "spilled_outputs", 0),
        ("&nbsp;&nbsp;recoverable from the store", "recoverable_outputs", 0),
    ]
    body = "".join(f"<tr><td>{title}</td><td>{_n(b[key])}</td><td>{_n(s[key])}</td></tr>" for title, key, _ in rows)
    return (
        f'<table id="totals"><tr><th></th><th class="b">built-in</th><th class="s">stowage</th></tr>{body}'
        f"<tr><td class=text>tool-schema tokens tool search would defer</td><td class=text colspan=2>"
        f"{escape(report['tool_search_note'])}</td></tr></table>"
    )


def breakable_id(session_id: str) -> str:
    """The id, escaped, with line-break chances only after its separators: a long id wraps between parts."""
    return "".join(escape(ch) + ("<wbr>" if ch in "-_.:/" else "") for ch in str(session_id))


def _pair(built_in: Any, stowage: Any) -> str:
    """``a / b`` that may wrap at the slash, never inside a number."""
    return f"<span>{_n(built_in)} /</span> <span>{_n(stowage)}</span>"


def _ticks(top: int, most: int = 5) -> list[int]:
    """Round values from 0 to at least ``top`` (1, 2 or 5 times a power of ten apart), at most ``most`` of them."""
    top = max(1, top)
    power = 10 ** max(0, len(str(top)) - 1)
    for step in (power // 10 or 1, power // 5 or 1, power // 2 or 1, power, 2 * power, 5 * power, 10 * power):
        count = -(-top // step) + 1
        if count <= most:
            return [i * step for i in range(count)]
    return [0, top]  # pragma: no cover - 10 * power always fits


def _tick_label(value: int) -> str:
    return (
        f"{value // 1000}k"
        if value >= 1000 and value % 1000 == 0
        else f"{value / 1000:g}k"
        if value >= 1000
        else str(value)
    )


def _sessions_table(report: dict[str, Any]) -> str:
    head = (
        "<tr><th>session</th><th>started (UTC)</th><th>messages</th>"
        "<th>billed tokens, built-in</th><th>billed tokens, Stowage</th>"
        "<th>cost, built-in (input-token units)</th><th>cost, Stowage (input-token units)</th>"
        "<th>cost saving</th><th>compactions, built-in / Stowage (Hermes recorded)</th>"
        "<th>summary calls, built-in / Stowage</th><th>peak request tokens, built-in / Stowage</th>"
        "<th>outputs spilled by Stowage (recoverable)</th></tr>"
    )
    rows = []
    for s in report["sessions"]:
        b, w = s["engines"]["built-in"], s["engines"]["stowage"]
        recorded = "" if s["host_compactions"] is None else f" ({s['host_compactions']})"
        seen = s.get("stowage_recorded") or {}
        ran = (
            f"<br><span class=note>ran Stowage: {seen.get('rebuilt', 0)} of "
            f"{seen.get('rebuilt', 0) + seen.get('not_rebuilt', 0)} outputs rebuilt</span>"
            if seen.get("ran_stowage")
            else ""
        )
        rows.append(
            f"<tr><td class=id>{breakable_id(s['session'])}{ran}</td><td>{_when(s['started_at'])}</td>"
            f"<td>{_n(s['recorded']['messages'])}</td><td>{_n(b['billed_tokens'])}</td>"
            f"<td>{_n(w['billed_tokens'])}</td><td>{_n(b['cost'])}</td><td>{_n(w['cost'])}</td>"
            f"<td>{saving_text(s['saving']['cost'])}</td>"
            f"<td class=pair>{_pair(b['compactions'], w['compactions'])}{recorded}</td>"
            f"<td class=pair>{_pair(b['summary_calls'], w['summary_calls'])}</td>"
            f"<td class=pair>{_pair(b['peak_request_tokens'], w['peak_request_tokens'])}</td>"
            f"<td>{w['spilled_outputs']} ({w['recoverable_outputs']})</td></tr>"
        )
    return f'<table id="sessions">{head}{"".join(rows)}</table>'


def _settings(report: dict[str, Any]) -> str:
    st = report["settings"]
    builtin = ", ".join(f"{k} {v}" for k, v in st["built-in"].items())
    overrides = st["stowage_overrides"]
    return (
        f"<p class=note>Built-in compressor: Hermes 0.19.0 defaults ({escape(builtin)}).<br>"
        f"Stowage: {'shipped defaults' if not overrides else 'overrides ' + escape(str(overrides))}; "
        f"effective:</p><pre>{escape(config_lines(st['stowage']))}</pre>"
    )


def _sweep(report: dict[str, Any]) -> str:
    sweep = report.get("sweep")
    if not sweep:
        return ""
    rows = "".join(
        f"<tr><td>{escape(p['label'])}</td><td>{_n(p['cost'])}</td><td>{_n(p['billed_tokens'])}</td>"
        f"<td>{p['summary_calls']}</td><td>{_n(p['peak_request_tokens'])}</td><td>{p['over_window_requests']}</td></tr>"
        for p in [sweep["current"], *sweep["points"]]
    )
    paste = (
        f"<p>Paste into <code>config.yaml</code>:</p><pre>{escape(sweep['config'])}</pre>" if sweep["config"] else ""
    )
    return (
        f"<h2>Tuning sweep</h2><p>{escape(sweep['verdict'])}</p>{paste}<table id=sweep><tr><th>setting</th>"
        f"<th>cost (input-token units)</th><th>billed tokens</th><th>summary calls</th><th>peak request tokens</th>"
        f"<th>requests over the window</th></tr>{rows}</table>"
    )


def render(report: dict[str, Any]) -> str:
    window = report["window"]
    sessions = report["sessions"]
    shown = sorted(sessions, key=lambda s: -s["engines"]["built-in"]["billed_tokens"])[:MAX_SESSION_PLOTS]
    plots = "".join(
        f'<div class="plot"><h3>{escape(s["session"][:60])}</h3>{session_plot(s, window)}</div>' for s in shown
    )
    shown_savings = sessions[:MAX_SAVING_BARS]
    more_savings = (
        f"<p class=note>The first {len(shown_savings)} of {len(sessions)} sessions are charted; the "
        "table lists all.</p>"
        if len(sessions) > len(shown_savings)
        else ""
    )
    more = (
        f"<p class=note>The {len(shown)} largest of {len(sessions)} sessions are plotted; the table lists all.</p>"
        if len(sessions) > len(shown)
        else ""
    )
    skipped = "".join(f"<li>{escape(k['session'])}: {escape(k['reason'])}</li>" for k in report["skipped"])
    problems = "".join(f"<li>{escape(s['session'])}: {escape(p)}</li>" for s in sessions for p in s["problems"])
    partial = (
        "<p class=warn><b>Partial report:</b> the replay was interrupted; only the sessions finished before "
        "the stop are counted.</p>"
        if report["interrupted"]
        else ""
    )
    saving = report["saving"]
    price = report["price_model"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Stowage replay report</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head><body>
<h1>What Stowage would have done on your sessions</h1>{partial}
<p><b>{report["sessions_replayed"]}</b> session(s) replayed ({report["sessions_skipped"]} skipped) from
{escape(report["source"])}. With Stowage: billed prompt tokens <b>{saving_text(saving["billed_tokens"])}</b>,
cache-aware cost <b>{saving_text(saving["cost"])}</b> than Hermes's built-in compressor.</p>
{f"<p class=warn>{escape(recorded_with_stowage_text(report))}.</p>" if recorded_with_stowage_text(report) else ""}
<p class=note>Window {window:,} tokens. Price model {escape(price["name"])}: cache read {price["cache_read"]:g}x,
cache write {price["cache_write"]:g}x the input price. Summaries: <b>{escape(report["summarizer"])}</b>.
Request tools: {escape(report["tools"]["source"])} ({report["tools"]["count"]} tools).</p>
<p class=note>{escape(report["meaning"])}</p>
<h2>Totals</h2>{_engine_table(report)}
<h2>Cost saving per session</h2><p class=note>Share of the built-in compressor's cache-aware cost that Stowage
saved on each session (a bar left of 0: Stowage cost more).</p>{savings_plot(shown_savings)}{more_savings}
<h2>Tokens per request</h2><p class="legend"><span class=b>&#9632; built-in</span><span class=s>&#9632; stowage</span>
<span>&#9650; compaction</span><span>- - window</span></p><div class="plots">{plots}</div>{more}
<h2>Sessions</h2>{_sessions_table(report)}
{f"<h2>Skipped</h2><ul>{skipped}</ul>" if skipped else ""}
{f"<h2>Notes on the recorded messages</h2><ul>{problems}</ul>" if problems else ""}
<h2>Settings used</h2>{_settings(report)}{_sweep(report)}
<p class=note>Replay wall time {report["wall_s"]:.1f} s.</p>
</body></html>
"""
