"""``stowage replay`` on a state.db written by real hermes-agent 0.19.0 sessions (scripted local model).

The sessions are real: a built-in-engine session whose big tool outputs
cross the 96k threshold of the 128k window (Hermes compacts it in place) and a
short one with a tool call.  The replay must count the recorded messages as a
direct SQL count does, reproduce the compactions Hermes made in the built-in
leg, write an HTML report that headless Chromium renders (the screenshot is
kept in the test's temp dir, its path printed), print the same figures with
``--json``, and leave every file of the user's Hermes home unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from stowage.command import main
from stowage_dev.browser import Browser, chromium_path
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import Scenario, run_scenario
from stowage_dev.state_db import checksums

from .recorded_sessions import record_big_outputs

pytestmark = pytest.mark.e2e

OUTPUTS_PER_TURN = 8  # ~34k tokens a turn: each crossing of the 96k threshold has a wide margin
BIG_TURNS = 6


def direct_counts(db: Path) -> dict[str, dict[str, int]]:
    """Per session, straight from SQL: distinct user texts and distinct tool-call ids among the rows the session
    wrote (live or archived by a compaction; a compaction re-inserts copies, hence DISTINCT; every user text and
    call id of these scenarios is unique)."""
    copy = Path(tempfile.mkdtemp(prefix="direct-count-")) / "state.db"  # even a read-only open touches -shm
    for suffix in ("", "-wal"):
        if db.with_name(db.name + suffix).is_file():
            shutil.copyfile(db.with_name(db.name + suffix), copy.with_name(copy.name + suffix))
    conn = sqlite3.connect(copy)
    try:
        out: dict[str, dict[str, int]] = {}
        for (sid,) in conn.execute("SELECT id FROM sessions"):
            where = "session_id = ? AND (active = 1 OR compacted = 1)"
            (users,) = conn.execute(
                f"SELECT COUNT(DISTINCT content) FROM messages WHERE {where} AND role = 'user'", (sid,)
            ).fetchone()
            (tools,) = conn.execute(
                f"SELECT COUNT(DISTINCT tool_call_id) FROM messages WHERE {where} AND role = 'tool'", (sid,)
            ).fetchone()
            out[sid] = {"user": users, "tool": tools}
        return out
    finally:
        conn.close()
        shutil.rmtree(copy.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def recorded_home(shared_llm: FakeLLMServer, shared_home) -> tuple[HermesHome, int]:
    """A Hermes home whose state.db holds two real sessions; returns it and Hermes's compaction count.

    Recorded once for the module: the replays only read it (each test checks the home is unchanged)."""
    home = shared_home()
    shared_llm.on(Match.summary_request(), Reply.say("## Goal\nSUMMARY-REPLAY the big outputs"), times=None)
    result = record_big_outputs(shared_llm, home, warm_ups=5, big_turns=BIG_TURNS, outputs_per_turn=OUTPUTS_PER_TURN)
    compactions = result.step(f"big{BIG_TURNS - 1}")["engine"]["compression_count"]

    shared_llm.on(Match.user_turn("ECHO"), Reply.tool(ToolCall("harness_echo", {"text": "hi"}, id="call_echo")))
    run_scenario(home, Scenario().turn("ECHO this").turn("thanks").end_session(), check=True)
    return home, compactions


def run_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def screenshot(html: Path, out_dir: Path) -> Path:
    """The report as it first shows, through the harness's browser (one set of Chromium flags for every page test)."""
    with Browser(size=(1200, 1600)) as browser:
        browser.open(html.as_uri(), ready="document.readyState === 'complete'")
        return browser.screenshot(out_dir / "replay-report.png", full_page=False)


def test_replay_of_real_sessions(
    recorded_home: tuple[HermesHome, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home, hermes_compactions = recorded_home
    assert hermes_compactions >= 1, "the recorded built-in session must have compacted"
    before = checksums(home.path)
    html = tmp_path / "report.html"

    code, out, err = run_cli("replay", "--hermes-home", str(home.path), "--html", str(html), "--json", capsys=capsys)
    assert code == 0, err
    report = json.loads(out)
    assert checksums(home.path) == before  # the user's state.db, config and store untouched

    # totals match a direct count of the recorded messages
    direct = direct_counts(home.path / "state.db")
    assert report["sessions_replayed"] == len(direct) == 2
    for session in report["sessions"]:
        counted = direct[session["session"]]
        assert {k: session["recorded"][k] for k in counted} == counted
    assert report["recorded"]["tool"] == sum(c["tool"] for c in direct.values())
    assert report["recorded"]["user"] == sum(c["user"] for c in direct.values()) == 5 + BIG_TURNS + 2
    # and the scenario's own count: per turn one answer, plus one tool-call message per tool turn
    assert report["recorded"]["assistant"] == 5 + 2 * BIG_TURNS + 3
    assert report["recorded"]["tool"] == BIG_TURNS * OUTPUTS_PER_TURN + 1

    # the built-in leg reproduces the compactions Hermes made
    big = max(report["sessions"], key=lambda s: s["recorded"]["tool"])
    assert big["host_compactions"] == hermes_compactions
    assert big["engines"]["built-in"]["compactions"] == hermes_compactions
    assert big["engines"]["built-in"]["summary_calls"] == hermes_compactions
    totals = report["totals"]
    for engine in ("built-in", "stowage"):
        assert totals[engine]["billed_tokens"] == sum(s["engines"][engine]["billed_tokens"] for s in report["sessions"])
        assert totals[engine]["requests"] > 0
    assert "stand-in summarizer" in report["summarizer"]
    assert report["tool_search_deferred_tokens"] is None and "not measured" in report["tool_search_note"]

    # the HTML report: self-contained, with both plots, and the same figures
    text = html.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert text.count("<svg") == 1 + len(report["sessions"]) and "series-built-in" in text
    assert "compaction-built-in" in text and "saving-bar" in text
    assert f"{totals['built-in']['billed_tokens']:,}" in text and f"{totals['stowage']['billed_tokens']:,}" in text
    assert "stand-in summarizer" in text

    # it opens in headless Chromium: a non-trivial, non-blank screenshot
    if chromium_path() is None:
        if os.environ.get("STOWAGE_REQUIRE_CHROMIUM"):
            pytest.fail("chromium is not installed (Debian: apt-get install chromium; .ci/run installs it as root)")
        pytest.skip("chromium is not installed: the report's rendering is not checked here (CI checks it)")
    png = screenshot(html, tmp_path)
    print(f"replay report screenshot: {png}")
    assert png.is_file() and png.stat().st_size > 20_000
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(set(data[100:20_000])) > 50
    assert checksums(home.path) == before


def test_replay_one_session_and_human_output(
    recorded_home: tuple[HermesHome, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home, _ = recorded_home
    sid = sorted(direct_counts(home.path / "state.db"))[0]
    code, out, err = run_cli(
        "replay", "--hermes-home", str(home.path), "--session", sid, "--no-html", "--price", "openai", capsys=capsys
    )
    assert code == 0, err
    assert "1 session(s) replayed" in out and "price openai" in out
    code, out, err = run_cli(
        "replay", "--hermes-home", str(home.path), "--session", "no-such-session", "--no-html", capsys=capsys
    )
    assert code == 2 and "no session 'no-such-session'" in err and "Traceback" not in err
