"""A session resumed with ``hermes chat --resume`` keeps its history in status, summary, the dashboard and the store.

Each run is the real ``hermes`` CLI in a new process (``hermes chat -q ... --resume <id>``), so the engine
starts with fresh figures every time: what it knows of the earlier runs comes from the store.  Every run
spills a large output and compacts (its tool-call response reports usage over the trigger); the session
is resumed five times.  Afterwards ``stowage status``, ``stowage summary`` and the dashboard's session JSON
show every run: the requests, every compaction, every spill, and the first run's spill is still fetched
whole by the model in the last run.  Issue 40 item 3; on a host of the matrix:
``.venv-hermes-<label>/bin/python -m pytest tests/e2e/test_stowage_resume.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stowage.host.host_support import assess, installed_version, parse
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import Scenario, chat_once, run_scenario
from stowage_dev.terminal import InteractiveChat

from .stowage_session import BIG_TURN_TOKENS, stowage_home

pytestmark = pytest.mark.e2e

# the host shows Stowage each request (the llm_request middleware, 0.17+): the session keeps per-request figures
REQUEST_FIGURES = not any("tool search" in m for m in assess(installed_version()).missing)

RUNS = 6  # the first run and five resumes
CLI_TIMEOUT = 600.0  # one CLI run (a new process building Hermes) on a loaded machine
SPILL_CHARS = 40_000  # ~10k tokens: over the 4,000-token spill threshold
KEPT_CHARS = 12_000  # under it: stays in the history for the compaction to take
SUMMARY = "## Goal\nInspect the outputs of every run (RESUME-SUMMARY).\n\n## Progress\n- inspected"
_HANDLE = re.compile(r"^handle: ([0-9a-f]{16,64})$", re.MULTILINE)  # the spill preview's header


def _script_run(llm: FakeLLMServer, run: int, fetch: str | None = None) -> None:
    """Run ``run``: a large output (spilled), then a kept one whose response reports usage over the trigger (the
    host compacts after that batch), then the answer; ``fetch``: the model first reads that handle back whole."""
    marker, spill_id, kept_id = f"RUN-{run} ", f"call_spill_{run}", f"call_kept_{run}"
    llm.on(
        Match.user_turn(marker),
        Reply.tool(ToolCall("harness_big_output", {"chars": SPILL_CHARS, "token": f"SPILLED{run}"}, id=spill_id)),
    )
    llm.on(
        Match.after_tool_result(spill_id),
        Reply.tool(
            ToolCall("harness_big_output", {"chars": KEPT_CHARS, "token": f"KEPT{run}"}, id=kept_id),
            usage={"prompt_tokens": BIG_TURN_TOKENS},
        ),
    )
    if fetch is None:
        llm.on(Match.after_tool_result(kept_id), Reply.say(f"run {run} done"))
        return
    fetch_id = f"call_fetch_{run}"
    llm.on(
        Match.after_tool_result(kept_id),
        Reply.tool(ToolCall("stowage_fetch", {"handle": fetch, "mode": "grep", "pattern": "END-SPILLED"}, id=fetch_id)),
    )
    llm.on(Match.after_tool_result(fetch_id), Reply.say(f"run {run} done, fetched"))


def _stowage(home: HermesHome, *args: str) -> Any:
    """``stowage --json ARGS`` in the home, parsed."""
    shown = subprocess.run(
        [str(Path(sys.executable).with_name("stowage")), "--json", *args],
        env={**os.environ, "HERMES_HOME": str(home.path)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout)


def _dashboard_session(home: HermesHome, session_id: str) -> dict[str, Any]:
    """The dashboard's session JSON (``/api/plugins/stowage/session/<id>``'s handler, run in the home)."""
    code = (
        "import json, sys\nfrom stowage.dashboard.plugin_api import session, sessions\n"
        "print(json.dumps({'session': session(sys.argv[1]), 'listed': sessions()['sessions']}, default=str))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, session_id],
        env={**os.environ, "HERMES_HOME": str(home.path)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout.strip().splitlines()[-1])


def _spilled_handle(llm: FakeLLMServer, run: int) -> str:
    preview = llm.matching(Match.after_tool_result(f"call_spill_{run}"))[0].tool_results[f"call_spill_{run}"]
    found = _HANDLE.search(preview)
    assert found, preview[:400]
    return found.group(1)


def test_a_session_resumed_five_times_keeps_every_run(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(
        make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}, "compaction": {"prepare_at": 0}}}
    )
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY), times=None)
    session_id: str | None = None
    first_handle = ""
    for run in range(RUNS):
        _script_run(fake_llm, run, fetch=first_handle if run == RUNS - 1 else None)
        resume = ("--resume", session_id) if session_id else ()
        result = chat_once(home, f"RUN-{run} inspect the outputs", "-Q", *resume, timeout=CLI_TIMEOUT).check()
        assert f"run {run} done" in result.stdout, result.output[-3000:]
        assert result.probe["engine"]["class"] == "StowageContextEngine"
        # the id Hermes prints at exit, which the user resumes: the same one, or (0.13.0, which rotates the id at
        # each compaction) the one the session went on under
        session_id = result.probe["session_id"]
        if run == 0:
            first_handle = _spilled_handle(fake_llm, 0)
    assert session_id is not None
    handles = [_spilled_handle(fake_llm, run) for run in range(RUNS)]
    assert handles[0] == first_handle and len(set(handles)) == RUNS

    # stowage status: the session's figures over all six runs
    status = next(s for s in _stowage(home, "status")["sessions"] if s["session_id"] == session_id)
    compactions = status["compression_count"]
    assert compactions >= RUNS - 1, status["compactions"]  # every run compacts but perhaps the first (too short)
    assert len(status["compactions"]) == min(compactions, 10)
    assert status["store"]["spills"] == RUNS
    assert status.get("runs") == RUNS
    assert [s["handle"] for s in status["store"]["recent_spills"]] == handles
    requests = len(status["requests"])
    assert requests >= 3 * RUNS if REQUEST_FIGURES else requests == 0, status["requests"]  # every run's kept

    # stowage summary: one summary per compaction that wrote one, numbered across the runs
    summaries = _stowage(home, "summary", "--all", "--session", session_id)
    numbers = [s["compaction"] for s in summaries["summaries"]]
    assert numbers == sorted(set(numbers)) and numbers[-1] == compactions, numbers
    assert len(numbers) >= RUNS - 1
    assert all("RESUME-SUMMARY" in s["body"] for s in summaries["summaries"])

    # the dashboard: the same figures (a host with a web dashboard: its API needs fastapi, which 0.13.0 lacks)
    if importlib.util.find_spec("fastapi") is not None:
        dashboard = _dashboard_session(home, session_id)
        shown = dashboard["session"]["status"]
        assert (shown["compression_count"], shown["runs"], len(shown["requests"])) == (compactions, RUNS, requests)
        assert shown["store"]["spills"] == RUNS
        (listed,) = [s for s in dashboard["listed"] if s["session_id"] == session_id]
        assert (listed["compactions"], listed["requests"], listed["spills"]) == (compactions, requests, RUNS)

    # the model in the last run read the first run's spill back, to its last line
    fetched = fake_llm.matching(Match.after_tool_result(f"call_fetch_{RUNS - 1}"))[0].tool_results
    assert "END-SPILLED0" in fetched[f"call_fetch_{RUNS - 1}"], fetched

    # the store: every spill still whole under its handle
    for run, handle in enumerate(handles):
        shown_blob = subprocess.run(
            [str(Path(sys.executable).with_name("stowage")), "blobs", "cat", handle],
            env={**os.environ, "HERMES_HOME": str(home.path)},
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert shown_blob.returncode == 0 and f"END-SPILLED{run}" in shown_blob.stdout, shown_blob.stderr
        assert len(shown_blob.stdout) >= SPILL_CHARS


def _statuses(home: HermesHome) -> dict[str, dict[str, Any]]:
    return {s["session_id"]: s for s in _stowage(home, "status")["sessions"]}


@pytest.mark.skipif(
    (parse(installed_version()) or (0,)) >= (0, 22),
    reason="the harness's pty chat does not reach its prompt on 0.22.2 (not investigated); its /resume and /new "
    "reset the engine as 0.13.0-0.19.0 do (hermes_cli/cli_commands_mixin.py _sync_agent_to_session)",
)
def test_resume_and_new_in_the_interactive_chat(fake_llm: FakeLLMServer, make_home) -> None:
    """``/resume <id>`` and ``/new`` inside ``hermes chat``: the host only resets the engine (every host of the
    matrix), after pointing the agent at the other session.  The resumed session carries on where its last run
    left it, in its own figures and with its own handles; the conversations before and after stay their own."""
    home = stowage_home(
        make_home,
        config={
            "stowage": {"spill": {"threshold_tokens": 4000}, "compaction": {"prepare_at": 0}},
            "approvals": {"destructive_slash_confirm": False},  # /new without its confirmation panel
        },
    )
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY), times=None)
    for marker in ("NEW-1 ", "NEW-2 "):
        fake_llm.on(Match.user_turn(marker), Reply.say(f"{marker.strip()} answered"))
    _script_run(fake_llm, 0)
    session_id = chat_once(home, "RUN-0 inspect the outputs", "-Q", timeout=CLI_TIMEOUT).check().probe["session_id"]
    first = _statuses(home)[session_id]
    assert first["store"]["spills"] == 1
    _script_run(fake_llm, 1, fetch=_spilled_handle(fake_llm, 0))

    with InteractiveChat(home) as chat:
        assert chat.read_until("❯", CLI_TIMEOUT), chat.text[-3000:]
        chat.type("NEW-1 a conversation of its own")
        assert chat.read_until("NEW-1 answered", CLI_TIMEOUT), chat.text[-3000:]
        chat.type(f"/resume {session_id}")
        assert chat.read_until(f"Resumed session {session_id}", CLI_TIMEOUT), chat.text[-3000:]
        chat.type("RUN-1 inspect the outputs")
        assert chat.read_until("run 1 done, fetched", CLI_TIMEOUT), chat.text[-3000:]
        chat.type("/new")
        assert chat.read_until("New session started", CLI_TIMEOUT), chat.text[-3000:]
        chat.type("NEW-2 another conversation")
        assert chat.read_until("NEW-2 answered", CLI_TIMEOUT), chat.text[-3000:]

    # the model read the first run's spill back in the resumed session
    fetched = fake_llm.matching(Match.after_tool_result("call_fetch_1"))[0].tool_results["call_fetch_1"]
    assert "END-SPILLED0" in fetched, fetched[:500]
    statuses = _statuses(home)
    # the resumed session (on 0.13.0 under the id its compaction rotated to), and the conversations around it
    carried = [s for s in statuses.values() if s["store"]["spills"]]
    others = [s for s in statuses.values() if not s["store"]["spills"]]
    resumed = max(carried, key=lambda s: (s["store"]["spills"], s["updated_at"]))
    assert resumed["store"]["spills"] == 2, carried
    assert [s["handle"] for s in resumed["store"]["recent_spills"]] == [_spilled_handle(fake_llm, r) for r in (0, 1)]
    assert resumed["compression_count"] == first["compression_count"] + 1, resumed["compactions"]
    assert len(resumed["requests"]) > len(first["requests"]) or not REQUEST_FIGURES
    assert resumed.get("runs") == 2
    # the conversations around it: one run each, nothing of the resumed session
    assert len(others) == 2, list(statuses)
    for other in others:
        assert (other.get("runs"), other["compression_count"], other["store"]["spills"]) == (1, 0, 0), other
        assert len(other["requests"]) == (1 if REQUEST_FIGURES else 0) and other["compactions"] == []


# What ``/resume <id>`` does to the agent in ``hermes chat`` (0.13.0-0.22.2: cli.py / hermes_cli's
# ``_handle_resume_command``): point it at the session, reset it (the engine gets only ``on_session_reset``), and
# continue from the session's history in state.db.
RESUME_STEP = """
agent.session_id = {session_id!r}
agent.reset_session_state()
restored = runner.session_db.get_messages_as_conversation(agent.session_id) or []
history = [m for m in restored if m.get("role") != "session_meta"]
result = len(history)
"""


def test_resume_inside_a_running_agent(fake_llm: FakeLLMServer, make_home) -> None:
    """The host's ``/resume`` in a running agent, driven as the CLI drives it (every host, 0.22.2 included)."""
    home = stowage_home(
        make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}, "compaction": {"prepare_at": 0}}}
    )
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY), times=None)
    fake_llm.on(Match.user_turn("NEW-1 "), Reply.say("NEW-1 answered"))
    _script_run(fake_llm, 0)
    first = run_scenario(
        home, Scenario().turn("RUN-0 inspect the outputs").python("result = agent.session_id", id="id"), check=True
    )
    session_id = first.step("id")["result"]
    before = _statuses(home)[session_id]
    _script_run(fake_llm, 1, fetch=_spilled_handle(fake_llm, 0))
    second = (
        Scenario()
        .turn("NEW-1 a conversation of its own")
        .python(RESUME_STEP.format(session_id=session_id), id="resume")
        .turn("RUN-1 inspect the outputs", id="run1")
    )
    run_scenario(home, second, check=True)

    fetched = fake_llm.matching(Match.after_tool_result("call_fetch_1"))[0].tool_results["call_fetch_1"]
    assert "END-SPILLED0" in fetched, fetched[:500]
    statuses = _statuses(home)
    carried = [s for s in statuses.values() if s["store"]["spills"]]
    resumed = max(carried, key=lambda s: (s["store"]["spills"], s["updated_at"]))
    assert resumed["store"]["spills"] == 2, carried
    assert resumed["compression_count"] == before["compression_count"] + 1, resumed["compactions"]
    assert resumed.get("runs") == 2
    (other,) = [s for s in statuses.values() if not s["store"]["spills"]]  # the NEW-1 conversation
    assert (other.get("runs"), other["compression_count"], other["compactions"]) == (1, 0, []), other
