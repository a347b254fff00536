"""The Stowage tab in the real Hermes 0.19.0 web dashboard, rendered by a real headless Chromium.

Stowage is installed as a user plugin (the route the dashboard scans), a real
session fills the store, then ``hermes dashboard`` serves the tab and Debian's
``chromium`` renders it at a laptop's window size: the timeline plot and the
store browser must show that session's data, laid out for reading (rows one
line high, the totals one row of labelled figures, nothing overflowing its
table, both series visible, a y axis with round ticks).  The screenshots are kept under ``test-artifacts/``.  The same
session's saved-token figure is the same in the API, ``/stowage`` and
``stowage status``, spills included.  Loading the page (Hermes's embedded
chat builds an agent at each load) leaves the store's sessions, the status
files and ``stowage status`` exactly as they were; a real session after that
is recorded at its first request.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from stowage.context_engine.config.schema import KEYS_BY_PATH
from stowage_dev.browser import Browser, count_color
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .dashboard_served import ARTIFACTS, CHROMIUM, dashboard_served
from .dashboard_served import get as _get
from .stowage_session import script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

STOWAGE = Path(sys.executable).with_name("stowage")


@pytest.fixture(params=["copy", "symlink"])
def dashboard(request, fake_llm: FakeLLMServer, make_home, tmp_path: Path):
    # The lean view stubs older outputs (full history and sent diverge); one huge output is spilled.
    config = {
        "stowage": {
            "spill": {"threshold_tokens": 10_000},
            "view": {"hot_tokens": 1000, "step_tokens": 6000, "pin_turns": 4},
        }
    }
    home = stowage_home(make_home, route=request.param, config=config)
    script_warm_up(fake_llm, 6)
    fake_llm.on(
        Match.user_turn("HUGE"),
        Reply.tool(ToolCall("harness_big_output", {"chars": 60_000, "token": "HUGE"}, id="call_huge")),
    )
    fake_llm.on(Match.after_tool_result("call_huge"), Reply.say("huge output inspected"))
    scenario = (
        warm_up(Scenario(), 6, secret_turn=None)
        .turn("HUGE output please")
        .python(
            "from hermes_cli.plugins import get_plugin_command_handler\n"
            "result = get_plugin_command_handler('stowage')('')",
            id="slash",
        )
    )  # /stowage, dispatched the way the CLI does
    slash = run_scenario(home, scenario, check=True).step("slash")["result"]
    with dashboard_served(home, tmp_path / "dashboard.log") as base:
        yield home, base, request.param, slash


LAYOUT = r"""(() => {
  const tab = document.querySelector('[data-stowage-session]').closest('div[data-stowage-session]').parentElement;
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height,
                                                                  right: r.right, bottom: r.bottom}; };
  // the vertical centres of everything a row shows: text runs and elements without element children
  function lines(row) {
    const centres = [], heights = [];
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      if (!walker.currentNode.textContent.trim()) continue;
      const range = document.createRange(); range.selectNodeContents(walker.currentNode);
      for (const r of range.getClientRects()) { if (r.height) { centres.push(r.y + r.height / 2); heights.push(r.height); } }
    }
    for (const b of row.querySelectorAll('button')) { const r = b.getBoundingClientRect(); centres.push(r.y + r.height / 2); heights.push(r.height); }
    return {spread: Math.max(...centres) - Math.min(...centres), lineHeight: Math.min(...heights), height: row.getBoundingClientRect().height};
  }
  function overflow(table) {
    const t = table.getBoundingClientRect(), out = [];
    for (const e of table.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (r.width && (r.left < t.left - 1 || r.right > t.right + 1))
        out.push(`${e.tagName}.${e.className} "${(e.textContent || '').slice(0, 40)}" x ${r.left}..${r.right} of ${t.left}..${t.right}`);
    }
    for (const b of table.querySelectorAll('button')) {
      const r = b.getBoundingClientRect(), c = b.closest('td').getBoundingClientRect();
      if (r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1 || r.bottom > c.bottom + 1) out.push('button ' + b.textContent);
    }
    return out;
  }
  const blobs = document.querySelector('[data-stowage-blobs]'), figures = document.querySelector('[data-stowage-rows]');
  const svg = document.querySelector('[data-stowage-plot="timeline"]');
  const series = {};
  for (const line of svg.querySelectorAll('[data-series]')) {
    const st = getComputedStyle(line);
    series[line.dataset.series] = {stroke: st.stroke, width: parseFloat(st.strokeWidth), dash: st.strokeDasharray,
                                   visible: st.visibility !== 'hidden' && st.display !== 'none' && parseFloat(st.opacity) > 0.5};
  }
  const tickLabels = [...svg.querySelectorAll('[data-tick]')].map(t => ({value: Number(t.dataset.tick), text: t.textContent, ...box(t)}));
  return {
    viewport: innerWidth, pageWidth: document.documentElement.scrollWidth,
    blobRows: [...blobs.querySelectorAll('tbody tr')].map(r => ({row: r.textContent.slice(0, 60), ...lines(r)})),
    figureRows: [...figures.querySelectorAll('tr')].map(r => ({label: r.cells[0].textContent, ...lines(r.cells[0])})),
    legend: lines(document.querySelector('[data-stowage-legend]')),
    overflow: [...overflow(blobs), ...overflow(figures)],
    tablesInCard: [blobs, figures].every(t => t.getBoundingClientRect().right <= tab.getBoundingClientRect().right + 1),
    series, ticks: tickLabels, svg: box(svg),
    totals: [...document.querySelectorAll('[data-stowage-totals] [data-figure]')]
      .map(e => [e.dataset.figure, e.lastChild.textContent]),
    totalsLine: lines(document.querySelector('[data-stowage-totals]')),
    totalsTitle: document.querySelector('[data-stowage-totals]').title,
    saved: Number(document.querySelector('[data-stowage-totals]').dataset.tokensSaved),
    text: document.body.innerText,
    buttons: [...document.querySelectorAll('[data-session-button]')].map(b => {
      const st = getComputedStyle(b);
      return {id: b.dataset.sessionButton, selected: b.dataset.selected, pressed: b.getAttribute('aria-pressed'),
              weight: st.fontWeight, outline: st.outlineStyle, text: b.textContent};
    }),
    shown: (document.querySelector('[data-stowage-session]') || {dataset: {}}).dataset.stowageSession,
  };
})()"""  # noqa: E501 - JavaScript run in the page, one statement a line


def _saved(text: str) -> int:
    found = re.search(r"([\d,]+) tokens saved over", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


def _rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return r, g, b


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_the_tab_renders_the_plot_and_the_store_browser(dashboard, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    home, base, route, slash = dashboard
    api = f"{base}/api/plugins/stowage"

    # the dashboard's own auth guards the tab's API
    assert _get(f"{api}/sessions", token=None)[0] == 401
    assert _get(f"{api}/sessions", token="wrong-token")[0] == 401
    code, listing = _get(f"{api}/sessions")
    assert code == 200 and listing["store"] == str(home.path / "stowage")
    (session,) = listing["sessions"]
    assert session["requests"] >= 14 and session["spills"] == 1 and session["tokens_saved"] > 0
    code, blobs = _get(f"{api}/blobs?session={session['session_id']}")
    spilled = [b for b in blobs["blobs"] if b["kind"] == "spill" and b["tool"] == "harness_big_output"]
    code, detail = _get(f"{api}/sessions/{session['session_id']}")
    requests = detail["status"]["requests"]
    assert code == 200 and len(requests) == session["requests"] and requests[-1]["sent"] < requests[-1]["full"]
    assert code == 200 and spilled
    code, excerpt = _get(f"{api}/blobs/{spilled[0]['handle']}?start=1&count=5")
    assert code == 200 and excerpt["text"] and excerpt["lines"] >= 1
    assert _get(f"{api}/blobs/{'0' * 16}")[0] == 404 and _get(f"{api}/blobs/..%2Fconfig.yaml")[0] in (400, 404)
    assert _get(f"{api}/sessions/someone-else")[0] == 404

    # one "saved" figure, spills included: the API, /stowage in the session and `stowage status` agree
    view = detail["status"]["view"]
    saved = session["tokens_saved"]
    assert (
        saved
        == detail["tokens_saved"]
        == view["tokens_saved"]
        == view["view_tokens_saved"] + view["spill_tokens_saved"]
    )
    assert view["spill_tokens_saved"] > 0 and view["view_tokens_saved"] > 0
    assert view["unshaped_tokens"] - view["sent_tokens"] == saved
    assert _saved(slash) == saved, slash
    cli_env = {k: v for k, v in home.env().items() if k != "PYTHONPATH"}  # the pip-installed CLI, any route
    shown = subprocess.run(
        [str(STOWAGE), "status"], env=cli_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert shown.returncode == 0 and _saved(shown.stdout) == saved, shown.stdout + shown.stderr
    assert detail["saved"] in shown.stdout and detail["saved"] in slash
    trigger_key = f"view.compact_at {KEYS_BY_PATH['view.compact_at'].default} of the"
    assert trigger_key in shown.stdout  # the key behind the trigger

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"stowage-dashboard-tab-{route}.png"
    plot = ARTIFACTS / f"stowage-dashboard-timeline-{route}.png"

    def store_state() -> tuple[str, dict[str, Any], list[str], list[tuple[Any, ...]]]:
        """What `stowage status` prints and reports, the status files, and the store's sessions table."""
        shown = [
            subprocess.run(
                [str(STOWAGE), *json_flag, "status"],
                env=cli_env,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            ).stdout
            for json_flag in ([], ["--json"])
        ]
        root = home.path / "stowage"
        index = sqlite3.connect(f"file:{root / 'index.sqlite3'}?mode=ro", uri=True)
        try:
            table = index.execute("SELECT id, first_seen, last_seen, live FROM sessions ORDER BY id").fetchall()
        finally:
            index.close()
        files = sorted(p.name for p in (root / "session-status").iterdir())
        return shown[0], json.loads(shown[1])["store"], files, table

    def agents_built() -> int:
        """Agents Hermes's dashboard gateway built (it fires on_session_reset once one is ready)."""
        return sum(1 for e in home.probe_events() if e["hook"] == "on_session_reset")

    before = store_state()
    built_before = agents_built()
    # a session that never sent a request (an agent built and dropped): newer, but not what the tab opens on
    empty = home.path / "stowage" / "session-status" / "zz-empty-newer.json"
    empty.write_text(json.dumps({"session_id": "zz-empty-newer", "updated_at": time.time() + 60}), encoding="utf-8")
    layouts = {}
    page_loads = 0
    ready = (
        "document.querySelector('[data-stowage-blobs] tbody tr') && "
        "document.querySelector('[data-stowage-plot=\"timeline\"]')"
    )
    for width in (1200, 1366):  # two common laptop widths
        with Browser(size=(width, 768)) as browser:
            browser.open(f"{base}/stowage", ready)
            page_loads += 1
            layouts[width] = browser.evaluate(LAYOUT)
            if width == 1366:
                browser.screenshot(shot)
                svg = layouts[width]["svg"]
                browser.screenshot(plot, clip={"x": svg["x"], "y": svg["y"], "width": svg["w"], "height": svg["h"]})
    print(f"dashboard screenshots: {shot} {plot}")
    with Browser(size=(1366, 768)) as browser:  # the tab reloaded, and Hermes's own start page
        for url in (f"{base}/stowage", f"{base}/stowage", f"{base}/"):
            browser.open(url, ready if url.endswith("/stowage") else "document.readyState === 'complete'")
            page_loads += 1
    empty.unlink()
    for width, seen in layouts.items():
        # it opens on the newest session with requests, and the selected one is marked apart from the others
        assert seen["shown"] == session["session_id"], (width, seen["shown"])
        marked = {b["id"]: b for b in seen["buttons"]}
        chosen, other = marked[session["session_id"]], marked["zz-empty-newer"]
        assert chosen["selected"] == "true" and chosen["pressed"] == "true" and chosen["text"].startswith("\u2713 ")
        assert other["selected"] == "false" and not other["text"].startswith("\u2713")
        assert chosen["outline"] != other["outline"] and chosen["weight"] != other["weight"], seen["buttons"]
        assert seen["pageWidth"] <= seen["viewport"], f"the page scrolls sideways at {width} px"
    layout = layouts[1366]

    # Hermes's page opens its embedded chat at every load (tui_gateway session.create), which builds an agent and so
    # starts a Stowage session; once those agents are built, the store and `stowage status` are as before
    deadline, built, changed = time.monotonic() + 120, 0, time.monotonic()
    while built < page_loads and time.monotonic() < deadline and time.monotonic() - changed < 15:
        time.sleep(0.5)
        if agents_built() - built_before != built:
            built, changed = agents_built() - built_before, time.monotonic()
    time.sleep(2)  # the last build's engine is started before the event; let its session settle
    print(f"page loads: {page_loads}, agents the dashboard built for them: {built}")
    assert built >= 1, "the page loads started no Hermes session: this test would prove nothing"
    after = store_state()
    assert after[1] == before[1] and after[2] == before[2] and after[3] == before[3], (before[1:], after[1:])
    assert after[0] == before[0], f"`stowage status` changed:\n{before[0]}\n---\n{after[0]}"
    assert re.search(r"sessions\s+1 \(1 live, 0 ended\)$", after[0], re.M), after[0]
    code, listing_after = _get(f"{api}/sessions")
    assert [s["session_id"] for s in listing_after["sessions"]] == [session["session_id"]], listing_after

    # a real session after the page loads is recorded at its first request, and the tab and status list it
    fake_llm.on(Match.user_turn("AFTER THE PAGE LOADS"), Reply.say("a real session"))
    ran = run_scenario(home, Scenario().turn("AFTER THE PAGE LOADS", id="later").end_session(id="end"), check=True)
    assert ran.step("later")["final_response"] == "a real session"
    later_id = ran.step("end")["session_id"]
    later_state = store_state()
    assert later_state[1]["sessions"] == {"total": 2, "live": 1, "ended": 1}, later_state[1]
    assert [row[0] for row in later_state[3]] == sorted([session["session_id"], later_id])
    assert f"session {later_id}" in later_state[0].split("recent sessions", 1)[1], later_state[0]
    code, listing_later = _get(f"{api}/sessions")
    assert later_id in [s["session_id"] for s in listing_later["sessions"]], listing_later

    # the data is there
    assert (
        layout["saved"] == saved and layout["totals"] == detail["totals"] and layout["totalsTitle"] == detail["saved"]
    )
    assert layout["totals"][0] == ["tokens saved", f"{saved:,}"] and ["spills", "1"] in layout["totals"]
    assert spilled[0]["handle"] in layout["text"] and "harness_big_output" in layout["text"]
    # laid out for reading at 1366x768
    assert layout["pageWidth"] <= layout["viewport"], "the page scrolls sideways"
    assert not layout["overflow"] and layout["tablesInCard"], layout["overflow"]
    assert layout["blobRows"], "the store browser shows no row"
    for row in [*layout["blobRows"], *layout["figureRows"], layout["legend"], layout["totalsLine"]]:
        assert row["spread"] < row["lineHeight"] / 2, f"a row wraps onto a second line: {row}"
    # both series drawn, with strokes a reader tells apart, and both visible in the picture
    full, sent = layout["series"]["full"], layout["series"]["sent"]
    assert full["visible"] and sent["visible"] and full["width"] >= 1.5 and sent["width"] >= 1.5
    assert full["stroke"] != sent["stroke"] and full["dash"] != sent["dash"]
    scale = 1  # CSS px = image px (deviceScaleFactor 1)
    box = (0, 0, int(svg["w"] * scale), int(svg["h"] * scale))
    for name, line in (("full", full), ("sent", sent)):
        pixels = count_color(plot, box, _rgb(line["stroke"]), tolerance=24)
        assert pixels >= 150, f"the {name} series is hardly visible ({pixels} pixels of {line['stroke']})"
    # a y axis with at least three round values, ascending upwards, readable and not overlapping
    ticks = sorted(layout["ticks"], key=lambda t: t["value"])
    assert len(ticks) >= 3 and len({t["value"] for t in ticks}) == len(ticks) and ticks[0]["value"] == 0
    assert ticks[-1]["value"] >= max(max(r["full"], r["sent"]) for r in requests)
    assert all(a["y"] > b["y"] for a, b in zip(ticks, ticks[1:], strict=False)), "higher values must sit higher"
    assert all(a["y"] >= b["bottom"] for a, b in zip(ticks, ticks[1:], strict=False)), "tick labels overlap"
    assert all(t["h"] >= 10 for t in ticks), "tick labels too small to read"

    # deleting from the tab's API leaves a tombstone
    code, removed = _get(f"{api}/blobs/{spilled[0]['handle']}", method="DELETE")
    assert code == 200 and len(removed["removed"]) == 1
    code, gone = _get(f"{api}/blobs/{spilled[0]['handle']}")
    assert code == 404 and "an operator removed it" in gone["detail"]
