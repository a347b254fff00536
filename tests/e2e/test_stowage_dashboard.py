"""The Stowage tab in the real Hermes 0.19.0 web dashboard, rendered by a real headless Chromium.

Stowage is installed as a user plugin (the route the dashboard scans), a real
session fills the store, then ``hermes dashboard`` serves the tab and Debian's
``chromium`` renders it: the timeline plot and the store browser must show
that session's data.  The screenshot is kept under ``test-artifacts/``.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.stowage_session import script_warm_up, stowage_home, warm_up
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import HERMES, Scenario, run_scenario

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TOKEN = "stowage-dashboard-test-token-0123456789"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, token: str | None = TOKEN, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, body.decode("utf-8", "replace")


@pytest.fixture(params=["copy", "symlink"])
def dashboard(request, fake_llm: FakeLLMServer, make_home, tmp_path: Path):  # noqa: ANN001, ANN201
    # The lean view stubs older outputs (full history and sent diverge); one huge output is spilled.
    config = {"stowage": {"spill": {"threshold_tokens": 10_000},
                          "view": {"hot_tokens": 1000, "step_tokens": 6000, "pin_turns": 4}}}
    home = stowage_home(make_home, route=request.param, config=config)
    script_warm_up(fake_llm, 6)
    fake_llm.on(Match.user_turn("HUGE"), Reply.tool(ToolCall("harness_big_output", {"chars": 60_000, "token": "HUGE"},
                                                              id="call_huge")))
    fake_llm.on(Match.after_tool_result("call_huge"), Reply.say("huge output inspected"))
    run_scenario(home, warm_up(Scenario(), 6, secret_turn=None).turn("HUGE output please"), check=True)
    port = _free_port()
    log = (tmp_path / "dashboard.log").open("w")
    proc = subprocess.Popen([HERMES, "dashboard", "--host", "127.0.0.1", "--port", str(port), "--no-open",
                             "--skip-build"], env=home.env({"HERMES_DASHBOARD_SESSION_TOKEN": TOKEN}),
                            cwd=home.work_dir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):  # until it answers (or dies)
            if proc.poll() is not None:
                break
            try:
                if _get(f"{base}/api/plugins/stowage/sessions")[0] == 200:
                    break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        if proc.poll() is not None or _get(f"{base}/api/plugins/stowage/sessions")[0] != 200:
            log.flush()
            pytest.fail("the dashboard did not serve the Stowage API:\n" + (tmp_path / "dashboard.log").read_text()[-4000:])
        yield home, base, request.param
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _chromium(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000",
                           "--window-size=1280,1800", *extra, url],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_the_tab_renders_the_plot_and_the_store_browser(dashboard, tmp_path: Path) -> None:
    home, base, route = dashboard
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

    dom = _chromium(f"{base}/stowage", tmp_path / "profile", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'data-stowage-plot="timeline"' in html, html[-3000:]
    assert f'data-requests="{session["requests"]}"' in html and 'data-series="sent"' in html
    assert 'data-event="spill"' in html
    assert f'data-stowage-session="{session["session_id"]}"' in html
    assert f'{session["tokens_saved"]:,} tokens saved over' in html
    assert f'data-handle="{spilled[0]["handle"]}"' in html and "harness_big_output" in html

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"stowage-dashboard-tab-{route}.png"
    shot.unlink(missing_ok=True)
    taken = _chromium(f"{base}/stowage", tmp_path / "profile2", f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.is_file() and shot.stat().st_size > 10_000, taken.stderr[-2000:]

    # deleting from the tab's API leaves a tombstone
    code, removed = _get(f"{api}/blobs/{spilled[0]['handle']}", method="DELETE")
    assert code == 200 and len(removed["removed"]) == 1
    code, gone = _get(f"{api}/blobs/{spilled[0]['handle']}")
    assert code == 404 and "an operator removed it" in gone["detail"]
