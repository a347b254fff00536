"""The ``stowage replay`` HTML report as a user sees it: headless Chromium at a laptop's 1366x768.

Twelve sessions (some with long ids) are replayed through the real command;
the page is laid out by the browser and measured: nothing wider than the
window or overflowing its table cell, every bar of the saving chart with a
visible session label and value beside it, a chart as tall as its rows, and
plain column names with units.  The screenshot is kept under
``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stowage.command import main
from stowage_dev.browser import Browser, chromium_path
from stowage_dev.transcripts import make_transcript

pytestmark = pytest.mark.e2e
pytest.importorskip("agent.context_compressor")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

LAYOUT = """(() => {
  const view = document.documentElement.clientWidth;
  const overflow = [];
  for (const cell of document.querySelectorAll('td, th')) {
    if (cell.scrollWidth > cell.clientWidth + 1) overflow.push(cell.textContent.slice(0, 60));
  }
  const tables = [...document.querySelectorAll('table')].map(t => {
    const r = t.getBoundingClientRect(); return {id: t.id, right: r.right};
  });
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height,
                                                                  right: r.right, bottom: r.bottom}; };
  const chart = document.querySelector('svg.saving-chart');
  return {
    view, pageWidth: document.documentElement.scrollWidth, overflow, tables,
    chart: chart ? box(chart) : null,
    bars: [...document.querySelectorAll('.saving-bar')].map(box),
    labels: [...document.querySelectorAll('.saving-label')].map(e => ({...box(e), text: e.textContent})),
    values: [...document.querySelectorAll('.saving-value')].map(e => ({...box(e), text: e.textContent})),
    headers: [...document.querySelectorAll('#sessions th')].map(e => e.textContent),
    text: document.body.innerText,
    // where each session id wraps: the character before each line break
    idBreaks: [...document.querySelectorAll('#sessions td.id')].flatMap(cell => {
      const text = cell.firstChild ? cell.textContent : '', out = [];
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      let last = null, prev = '';
      while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest('.note')) continue;
        for (let i = 0; i < node.length; i++) {
          const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (!rect) continue;
          if (last !== null && rect.y > last + 2) out.push({id: text.slice(0, 60), after: prev});
          last = rect.y; prev = node.data[i];
        }
      }
      return out;
    }),
    plotTicks: [...document.querySelectorAll('.plot svg')].map(svg => svg.querySelectorAll('[data-tick]').length),
  };
})()"""


def write_sessions(path: Path, count: int) -> list[str]:
    ids = []
    with path.open("w", encoding="utf-8") as handle:
        for number in range(count):
            ident = (
                f"t{number}" if number % 3 else f"20261125_1200{number:02d}_a-rather-long-gateway-session-id-{number}"
            )
            ids.append(ident)
            messages = [
                {"role": "system", "content": "You are a coding agent."},
                *make_transcript(8, seed=number, output_chars=9000 + 1500 * number),
            ]
            handle.write(json.dumps({"id": ident, "messages": messages}) + "\n")
    return ids


def test_the_report_reads_well_at_laptop_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if chromium_path() is None:
        if os.environ.get("STOWAGE_REQUIRE_CHROMIUM"):
            pytest.fail("chromium is not installed (Debian: apt-get install chromium)")
        pytest.skip("chromium is not installed: the report's layout is not checked here (CI checks it)")
    ids = write_sessions(tmp_path / "sessions.jsonl", 12)
    html = tmp_path / "report.html"
    code = main(
        [
            "replay",
            "--from",
            str(tmp_path / "sessions.jsonl"),
            "--window",
            "32000",
            "--html",
            str(html),
            "--quiet",
            "--json",
            "--hermes-home",
            str(tmp_path / "home"),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["sessions_replayed"] == len(ids)

    for width in (1200, 1366):  # two common laptop widths
        check_layout(html, width, ids)


def check_layout(html: Path, width: int, ids: list[str]) -> None:
    shot = ARTIFACTS / f"stowage-replay-report-{width}.png"
    with Browser(size=(width, 768)) as browser:
        browser.open(html.as_uri(), "document.querySelector('#sessions tr td')")
        layout = browser.evaluate(LAYOUT)
        browser.screenshot(shot)
    print(f"replay report screenshot: {shot}")
    assert shot.is_file() and shot.stat().st_size > 20_000
    # a long session id wraps between its parts, never inside one
    assert all(b["after"] in "-_.:/" for b in layout["idBreaks"]), layout["idBreaks"]
    # each tokens-per-request plot has a y axis of at least three round values
    assert layout["plotTicks"] and min(layout["plotTicks"]) >= 3, layout["plotTicks"]

    # nothing wider than the window, nothing spilling out of its cell or table
    assert layout["pageWidth"] <= layout["view"], "the page scrolls sideways"
    assert not layout["overflow"], f"cells whose content overflows: {layout['overflow']}"
    assert all(t["right"] <= layout["view"] for t in layout["tables"]), layout["tables"]
    # the saving chart: a labelled row per session, the value beside each bar, as tall as its rows
    bars, labels, values, chart = layout["bars"], layout["labels"], layout["values"], layout["chart"]
    assert len(bars) == len(labels) == len(values) == len(ids)
    for bar, label, value in zip(bars, labels, values, strict=True):
        assert label["w"] > 5 and label["h"] >= 10 and label["right"] <= bar["x"] + 1, (label, bar)
        assert value["text"].endswith(("less", "more")) and value["w"] > 20 and value["x"] >= bar["right"] - 1
        assert abs((label["y"] + label["h"] / 2) - (bar["y"] + bar["h"] / 2)) < 6, "a label is not beside its bar"
        assert chart["x"] <= label["x"] and value["right"] <= chart["right"] + 1
    assert all(a["bottom"] <= b["y"] + 1 for a, b in zip(labels, labels[1:], strict=False)), "session labels overlap"
    assert chart["h"] <= 22 * len(ids) + 60, "the chart has more empty space than rows"
    widest = max(b["w"] for b in bars)
    assert widest >= 0.4 * (chart["w"] - 360), "the scale leaves the bars small"
    shown = {label["text"].rstrip("\u2026") for label in labels}
    assert all(any(i.startswith(s) for s in shown) for i in ids)
    # plain column names with units
    headers = " | ".join(layout["headers"])
    assert "b/s" not in layout["text"] and "billed tokens, built-in" in headers
    assert "cost, Stowage (input-token units)" in headers and "peak request tokens, built-in / Stowage" in headers
