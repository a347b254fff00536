"""A gateway restart in the middle of a session: the session goes on with its store, its handles and its figures.

The real ``hermes gateway run`` serves its API-server platform (``/api/sessions/<id>/chat``, the route a web
front end or a script takes) on 127.0.0.1.  In the first gateway process the model runs the real ``terminal``
tool on a command printing about 109,000 characters (over Hermes's 50,000-character cut, which the README's
``stowage setup`` lifts), Stowage spills it, and a second message goes by.  The gateway is stopped (SIGTERM,
as ``systemctl restart`` or ``hermes gateway restart`` do) and started again: a new process, a new engine, the
history loaded from Hermes's ``state.db``.  In the same session the model reads the first process's handle
back with ``stowage_fetch``; afterwards ``stowage status`` shows both processes' requests and the spill, and
``stowage blobs cat`` gives the output whole.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import HERMES, run_stowage

pytestmark = pytest.mark.e2e

API_KEY = "gateway-test-key-0123456789"  # the API server refuses to start without one
LINES = 20_000
COMMAND = f"seq 1 {LINES}"
OUTPUT = "\n".join(str(i) for i in range(1, LINES + 1))  # 108,894 characters
START_TIMEOUT = 180.0  # a gateway process starting on a loaded machine
TURN_TIMEOUT = 300.0
_HANDLE = re.compile(r"^handle: ([0-9a-f]{16,64})$", re.MULTILINE)  # the spill preview's header: the tool's JSON
# the terminal's output string, stored unescaped beside it: the one the preview says to page and grep by line
_OUTPUT_HANDLE = re.compile(r"^handle: ([0-9a-f]{16,64}) = the string at 'output'", re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Gateway:
    """One ``hermes gateway run`` process serving the API-server platform of ``home``."""

    def __init__(self, home: HermesHome, log: Path) -> None:
        self.port = _free_port()
        env = home.env(
            {
                "API_SERVER_ENABLED": "1",
                "API_SERVER_KEY": API_KEY,
                "API_SERVER_HOST": "127.0.0.1",
                "API_SERVER_PORT": str(self.port),
            }
        )
        self.log = log
        with log.open("a", encoding="utf-8") as out:
            self.process = subprocess.Popen(
                [HERMES, "gateway", "run"],
                env=env,
                cwd=home.work_dir,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                self.call("GET", "/health", timeout=5)
                return
            except (OSError, urllib.error.URLError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(
                        f"the gateway did not come up:\n{log.read_text(encoding='utf-8')[-4000:]}"
                    ) from None
                time.sleep(0.5)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, *, timeout: float = 30) -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def chat(self, session_id: str, text: str) -> str:
        reply = self.call("POST", f"/api/sessions/{session_id}/chat", {"message": text}, timeout=TURN_TIMEOUT)
        assert reply["session_id"] == session_id, reply
        return str(reply["message"]["content"])

    def stop(self) -> None:
        """SIGTERM and wait, as a service manager restarting the gateway does."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


def _status(home: HermesHome, session_id: str) -> dict[str, Any]:
    shown = run_stowage(home, "--json", "status")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return next(s for s in json.loads(shown.stdout)["sessions"] if s["session_id"] == session_id)


def test_a_gateway_restart_keeps_the_sessions_store_handles_and_figures(
    fake_llm: FakeLLMServer, make_home, e2e_tmp: Path
) -> None:
    home = make_home(engine="stowage", plugins=["stowage"], whole_outputs=True)
    fake_llm.on(Match.user_turn("FIRST "), Reply.tool(ToolCall("terminal", {"command": COMMAND}, id="call_seq")))
    fake_llm.on(Match.after_tool_result("call_seq"), Reply.say("first done: the numbers are listed"))
    fake_llm.on(Match.user_turn("SECOND "), Reply.say("second done"))
    log = e2e_tmp / "gateway.log"

    gateway = Gateway(home, log)
    try:
        session_id = gateway.call("POST", "/api/sessions", {})["session"]["id"]
        assert gateway.chat(session_id, "FIRST list the numbers") == "first done: the numbers are listed"
        assert gateway.chat(session_id, "SECOND anything else?") == "second done"
    finally:
        gateway.stop()
    preview = fake_llm.matching(Match.after_tool_result("call_seq"))[0].tool_results["call_seq"]
    found, output_found = _HANDLE.search(preview), _OUTPUT_HANDLE.search(preview)
    assert found and output_found and len(preview) < len(OUTPUT) // 4, preview[:600]  # an excerpt and handles
    handle, output_handle = found.group(1), output_found.group(1)
    before = _status(home, session_id)
    requests_before = len(before["requests"])
    assert before["store"]["spills"] == 1 and requests_before >= 3, before

    fake_llm.on(
        Match.user_turn("THIRD "),
        Reply.tool(
            ToolCall("stowage_fetch", {"handle": output_handle, "mode": "grep", "pattern": f"^{LINES}$"}, id="call_f")
        ),
    )
    fake_llm.on(Match.after_tool_result("call_f"), Reply.say("third done: read it back"))
    gateway = Gateway(home, log)  # a new process: the engine knows the session only from the store and state.db
    try:
        assert gateway.chat(session_id, "THIRD what was the last number?") == "third done: read it back"
    finally:
        gateway.stop()

    third = fake_llm.matching(Match.user_turn("THIRD "))[0]
    assert "first done" in third.text and "FIRST list the numbers" in third.text  # the history came back
    fetched = fake_llm.matching(Match.after_tool_result("call_f"))[0].tool_results["call_f"]
    assert json.loads(fetched)["matches"] == 1 and str(LINES) in json.loads(fetched)["text"], fetched[:600]

    after = _status(home, session_id)
    # the API-server platform builds a new agent (and so a new engine) for every message: each is a run whose
    # figures extend the session's, in one process as across the restart
    assert before.get("runs") == 2 and after.get("runs") == 3, (before.get("runs"), after.get("runs"))
    assert after["store"]["spills"] == 1 and [s["handle"] for s in after["store"]["recent_spills"]] == [handle]
    assert len(after["requests"]) >= requests_before + 2, (requests_before, after["requests"])

    whole = run_stowage(home, "blobs", "cat", handle)
    assert whole.returncode == 0, whole.stderr
    assert json.loads(whole.stdout)["output"] == OUTPUT  # over the host's 50,000-character cut, whole
    gateway_log = log.read_text(encoding="utf-8")
    assert "Traceback" not in gateway_log, gateway_log[-4000:]
