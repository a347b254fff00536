"""The Stowage tab's details, in the real Hermes 0.19.0 dashboard rendered by Debian's headless Chromium.

At three window widths (1200, 1366 and 1920 px) a real session's tab must
show: the chart as wide as its card; the spill dot at the request that first
sent the spilled output's preview (counted on the requests the model server
received); the search field's whole placeholder; the arguments of a stored
output, not their first word; and a blob viewer that says what part of the
blob it shows and offers "previous" / "next" only where there is such a page.
The screenshots are kept under ``test-artifacts/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from stowage_dev.browser import Browser
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .dashboard_served import ARTIFACTS, CHROMIUM, dashboard_served, get
from .stowage_session import script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

WIDTHS = (1200, 1366, 1920)
SMALL_CHARS = 2_000  # 34 lines: a blob the viewer shows whole
HUGE_CHARS = 60_000  # 1,017 lines: spilled, and paged 60 lines at a time
PAGE = 60


@pytest.fixture
def served(fake_llm: FakeLLMServer, make_home, tmp_path: Path):
    """A session with a small output (stubbed into the store later), big ones, and one spill; the dashboard up."""
    config = {
        "stowage": {
            "spill": {"threshold_tokens": 10_000},
            "view": {"hot_tokens": 1000, "step_tokens": 6000, "pin_turns": 4},
        }
    }
    home = stowage_home(make_home, route="copy", config=config)
    script_warm_up(fake_llm, 6)
    fake_llm.on(
        Match.user_turn("SMALL"),
        Reply.tool(ToolCall("harness_big_output", {"chars": SMALL_CHARS, "token": "SMALL"}, id="call_small")),
    )
    fake_llm.on(Match.after_tool_result("call_small"), Reply.say("small output read"))
    fake_llm.on(
        Match.user_turn("HUGE"),
        Reply.tool(ToolCall("harness_big_output", {"chars": HUGE_CHARS, "token": "HUGE"}, id="call_huge")),
    )
    fake_llm.on(Match.after_tool_result("call_huge"), Reply.say("huge output inspected"))
    scenario = warm_up(Scenario().turn("SMALL output please"), 3, secret_turn=None).turn("HUGE output please")
    for i in range(3, 6):
        scenario.turn(f"WARM-{i} please inspect the big output")
    run_scenario(home, scenario, check=True)
    sent = fake_llm.main_requests()  # before any page load: the requests of that one session
    with dashboard_served(home, tmp_path / "dashboard.log") as base:
        yield base, sent


DETAILS = r"""(() => {
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const panel = document.querySelector('[data-stowage-session]');
  const svg = document.querySelector('[data-stowage-plot="timeline"]');
  const ctx = document.createElement('canvas').getContext('2d');
  const fields = [...document.querySelectorAll('[data-filter]')].map(input => {
    const st = getComputedStyle(input);
    ctx.font = st.font;
    const room = input.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    return {key: input.dataset.filter, placeholder: input.placeholder, text: ctx.measureText(input.placeholder).width, room};
  });
  const table = document.querySelector('[data-stowage-blobs]');
  const heads = [...table.querySelectorAll('thead th')].map(th => ({name: th.textContent, w: th.getBoundingClientRect().width}));
  const args = [...table.querySelectorAll('td[data-column="arguments"]')].map(td => ({
    handle: td.closest('tr').dataset.handle, text: td.textContent, scroll: td.scrollWidth, client: td.clientWidth}));
  return {
    viewport: innerWidth, pageWidth: document.documentElement.scrollWidth,
    panel: box(panel), svg: box(svg),
    spills: [...svg.querySelectorAll('[data-event="spill"]')].map(c => ({handle: c.dataset.handle, request: Number(c.dataset.request),
                                                                        title: c.textContent})),
    fields, heads, args, table: box(table),
  };
})()"""  # noqa: E501 - JavaScript run in the page, one statement a line


def _until(browser: Browser, expression: str, what: str) -> None:
    for _ in range(120):
        if browser.evaluate(f"Boolean({expression})"):
            return
        time.sleep(0.25)
    raise AssertionError(f"the page never showed {what}: {browser.evaluate('document.body.innerText.slice(-1500)')}")


def _click(browser: Browser, selector: str, text: str) -> None:
    found = browser.evaluate(
        f"(() => {{ const b = [...document.querySelectorAll({selector!r})].find(e => e.textContent === {text!r});"
        " if (!b) return false; b.click(); return true; })()"
    )
    assert found, f"no {text!r} button in {selector}"


def _excerpt(browser: Browser) -> dict[str, Any]:
    return browser.evaluate(
        "(() => { const e = document.querySelector('[data-stowage-excerpt]');"
        " return e && {handle: e.dataset.stowageExcerpt,"
        " text: e.querySelector('[data-excerpt-text]').textContent,"
        " buttons: [...e.querySelectorAll('button')].map(b => b.textContent)}; })()"
    )


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_the_tab_details_at_three_widths(served) -> None:
    base, sent = served
    api = f"{base}/api/plugins/stowage"
    code, listing = get(f"{api}/sessions")
    (session,) = listing["sessions"]
    code, detail = get(f"{api}/sessions/{session['session_id']}")
    requests = detail["status"]["requests"]
    assert len(requests) == len(sent), "the status counts other requests than the model server received"
    code, blobs = get(f"{api}/blobs?session={session['session_id']}")
    (huge,) = [b for b in blobs["blobs"] if b["kind"] == "spill"]
    listed = [(b["handle"], b["tool"], b["kind"], b["lines"], b["args"]) for b in blobs["blobs"]]
    small = [b for b in blobs["blobs"] if b["kind"] != "spill" and 1 < b["lines"] <= PAGE]
    assert small, listed
    small_handle = small[0]["handle"]
    # the request that first carried the spill's preview, counted on what the model server received
    first_sent = next(i for i, r in enumerate(sent, 1) if r.contains(huge["handle"]))
    print(f"spill {huge['handle']} first sent in request {first_sent} of {len(sent)}; blobs {listed}")

    ready = (
        "document.querySelector('[data-stowage-blobs] tbody tr') && "
        "document.querySelector('[data-stowage-plot=\"timeline\"]')"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        with Browser(size=(width, 900)) as browser:
            browser.open(f"{base}/stowage", ready)
            seen = browser.evaluate(DETAILS)
            shot = browser.screenshot(ARTIFACTS / f"stowage-dashboard-details-{width}.png")
            print(f"{width} px: {shot}; chart {seen['svg']['w']:.0f} of {seen['panel']['w']:.0f} px; {seen['heads']}")
            assert seen["pageWidth"] <= seen["viewport"], f"the page scrolls sideways at {width} px"
            # the chart takes its card's width
            assert seen["svg"]["w"] >= seen["panel"]["w"] - 2, (width, seen["svg"], seen["panel"])
            # the spill dot sits at the request that first sent the output
            (dot,) = seen["spills"]
            assert dot["handle"] == huge["handle"] and dot["request"] == first_sent, (width, dot, first_sent)
            assert f"request {first_sent}" in dot["title"]
            # every filter shows its whole placeholder
            assert [f["key"] for f in seen["fields"]] == ["session", "tool", "q"], seen["fields"]
            for field in seen["fields"]:
                assert field["text"] <= field["room"], (width, field)
            # the arguments are shown whole, in the widest column
            (args,) = [a for a in seen["args"] if a["handle"] == huge["handle"]]
            assert args["text"] == huge["args"] and args["scroll"] <= args["client"], (width, args)
            widths = {head["name"]: head["w"] for head in seen["heads"]}
            assert widths["arguments"] == max(widths.values()), (width, widths)

            # the blob viewer: a short blob is shown whole, with no page buttons
            _click(browser, f'[data-handle="{small_handle}"] button', "read")
            _until(browser, f"document.querySelector('[data-stowage-excerpt=\"{small_handle}\"]')", "the small blob")
            opened = _excerpt(browser)
            assert re.search(rf"{small[0]['lines']} lines, [\d.]+ (B|KB), shown whole$", opened["text"]), opened
            assert opened["buttons"] == [], opened
            # a long one: lines 1-60 of N, "next" only; then lines 61-120 with both
            _click(browser, f'[data-handle="{huge["handle"]}"] button', "read")
            _until(browser, f"document.querySelector('[data-stowage-excerpt=\"{huge['handle']}\"]')", "the spill")
            opened = _excerpt(browser)
            total = f"{huge['lines']:,}"
            assert opened["text"].endswith(f"lines 1\u2013{PAGE} of {total}"), opened
            assert opened["buttons"] == ["next"], opened
            if width == 1366:
                browser.screenshot(ARTIFACTS / "stowage-dashboard-details-viewer-first-page.png")
            _click(browser, "[data-stowage-excerpt] button", "next")
            _until(
                browser,
                f"document.querySelector('[data-excerpt-text]').textContent.includes('lines {PAGE + 1}\u2013')",
                "the second page",
            )
            opened = _excerpt(browser)
            assert opened["text"].endswith(f"lines {PAGE + 1}\u2013{2 * PAGE} of {total}"), opened
            assert opened["buttons"] == ["previous", "next"], opened
