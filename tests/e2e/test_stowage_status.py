"""``/stowage`` and ``stowage status`` show what the engine did, after a real compaction in the real host
(the shared session of ``compacted_session.py``), and a blob removed in a terminal reads as a tombstone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

from .compacted_session import CompactedSession
from .stowage_session import script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

STOWAGE = Path(sys.executable).with_name("stowage")


COMPACTION_LINE = r"compactions\s+1; last: ([\d,]+) -> ([\d,]+) tokens, model summary"


def slash_text(session: CompactedSession) -> str:
    return session.result.step("slash")["result"]


def test_slash_status_shows_the_compaction(compacted_session: CompactedSession) -> None:
    text = slash_text(compacted_session)
    assert "running engine: stowage (1 session(s) in this process)" in text, text
    compactions = re.search(COMPACTION_LINE, text)
    assert compactions, text
    before, after = (int(n.replace(",", "")) for n in compactions.groups())
    assert before > after > 0
    assert "the summarized messages are stored whole under handle " in text and "output(s) pruned" in text
    assert re.search(r"store failures\s+none", text)
    # the trigger names the key that decides it (the lean view is on: view.compact_at)
    assert re.search(
        r"next compaction\s+when a request reaches [\d,]+ tokens \(view\.compact_at [\d.]+ of the "
        r"[\d,]+-token window, on the request as sent\)",
        text,
    ), text
    assert re.search(r"tool search\s+", text)


def test_another_process_reads_the_same_figures_from_the_status_file(compacted_session: CompactedSession) -> None:
    compactions = re.search(COMPACTION_LINE, slash_text(compacted_session))
    assert compactions, slash_text(compacted_session)
    before, after = (int(n.replace(",", "")) for n in compactions.groups())
    env = compacted_session.home.env()
    shown = subprocess.run(
        [str(STOWAGE), "status"], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert shown.returncode == 0, shown.stderr
    assert "recent sessions" in shown.stdout and f"{before:,} -> {after:,} tokens, model summary" in shown.stdout
    data = json.loads(
        subprocess.run(
            [str(STOWAGE), "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        ).stdout
    )
    (session,) = data["sessions"]
    assert session["compression_count"] == 1 and session["compactions"][0]["result"] == "compacted"
    assert session["tool_search"] is not None and "threshold_tokens" in session


RM_STEP = """
import os, re, subprocess, sys
from pathlib import Path
spill = next(m["content"] for m in history if m.get("role") == "tool" and m.get("tool_call_id") == "call_warm_0")
handle = re.search(r"handle: ([0-9a-f]{16,64})", spill).group(1)
stowage = str(Path(sys.executable).with_name("stowage"))
run = lambda *argv: subprocess.run([stowage, *argv], capture_output=True, text=True, stdin=subprocess.DEVNULL)
purge = run("purge", "--session", engine.session_id, "--yes")
rm = run("blobs", "rm", handle)
result = {"handle": handle, "purge": [purge.returncode, purge.stderr], "rm": [rm.returncode, rm.stdout, rm.stderr],
          "path_gone": not any(Path(os.environ["HERMES_HOME"], "stowage", "blobs").rglob(handle + "*"))}
"""


def test_rm_in_a_terminal_leaves_a_tombstone_the_model_reads(fake_llm: FakeLLMServer, make_home) -> None:
    from stowage_dev.fake_llm import ToolCall

    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 1000}}})
    script_warm_up(fake_llm, 1)

    def fetch(request) -> Reply:
        preview = next(m["content"] for m in request.messages if m.get("tool_call_id") == "call_warm_0")
        handle = re.search(r"handle: ([0-9a-f]{16,64})", preview).group(1)
        return Reply.tool(ToolCall("stowage_fetch", {"handle": handle}, id="call_fetch"))

    fake_llm.on(Match.user_turn("READ"), fetch)
    fake_llm.on(Match.after_tool_result("call_fetch"), Reply.say("it is gone"))

    scenario = warm_up(Scenario(), 1, secret_turn=None).python(RM_STEP, id="rm").turn("READ it again", id="read")
    result = run_scenario(home, scenario, check=True).step("rm")["result"]

    assert result["purge"][0] == 1 and "is live" in result["purge"][1]  # the live session is not purged
    assert result["rm"][0] == 0 and f"removed {result['handle'][:16]}" in result["rm"][1], result["rm"]
    assert result["path_gone"]
    (after,) = fake_llm.matching(Match.after_tool_result("call_fetch"))
    answer = next(m["content"] for m in after.messages if m.get("tool_call_id") == "call_fetch")
    assert "no longer available" in answer and "an operator removed it" in answer, answer
    assert "stowage blobs rm" in answer and "harness_big_output" in answer
