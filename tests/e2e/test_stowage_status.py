"""``/stowage`` and ``stowage status`` show what the engine did, after a real compaction in the real host."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.stowage_session import script_big_turn, script_warm_up, stowage_home, warm_up
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

pytestmark = pytest.mark.e2e

STOWAGE = Path(sys.executable).with_name("stowage")
SUMMARY = "## Goal\nInspect the outputs (SUMMARY-ONE).\n\n## Progress\n### Done\n- inspected\n\n## Next Steps\n- go on"


def test_slash_status_and_cli_status_show_the_compaction(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))

    scenario = warm_up(Scenario(), 5).turn("BIG now", id="big").python(
        "from stowage.slash_command import stowage_command\nresult = stowage_command('')", id="slash")
    result = run_scenario(home, scenario, check=True)

    text = result.step("slash")["result"]
    assert "running engine: stowage (1 session(s) in this process)" in text, text
    compactions = re.search(r"compactions\s+1; last: ([\d,]+) -> ([\d,]+) tokens, model summary", text)
    assert compactions, text
    before, after = (int(n.replace(",", "")) for n in compactions.groups())
    assert before > after > 0
    assert "window stored as " in text and "output(s) pruned" in text
    assert re.search(r"store failures\s+none", text) and re.search(r"next compaction\s+when a request reaches", text)
    assert re.search(r"tool search\s+", text)

    # another process reads the same figures from the session status file
    env = home.env()
    shown = subprocess.run([str(STOWAGE), "status"], env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    assert shown.returncode == 0, shown.stderr
    assert "recent sessions" in shown.stdout and f"{before:,} -> {after:,} tokens, model summary" in shown.stdout
    data = json.loads(subprocess.run([str(STOWAGE), "status", "--json"], env=env, capture_output=True, text=True,
                                     timeout=120, stdin=subprocess.DEVNULL).stdout)
    (session,) = data["sessions"]
    assert session["compression_count"] == 1 and session["compactions"][0]["result"] == "compacted"
    assert session["tool_search"] is not None and "threshold_tokens" in session
