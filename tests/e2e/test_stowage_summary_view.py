"""``stowage summary`` and ``/stowage preview`` around a real compaction in the real host.

The scripted summary model's reply must come back from the command line
exactly as the history holds it, with a window handle the store resolves;
the preview taken before the compaction must predict its trigger and window.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stowage.context_engine.messages import is_summary, message_text
from stowage.context_engine.summary import unwrap
from .stowage_session import script_big_turn, script_warm_up, stowage_home, warm_up
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

pytestmark = pytest.mark.e2e

STOWAGE = Path(sys.executable).with_name("stowage")
SUMMARY = (
    "## Goal\nInspect the outputs (SUMMARY-VIEW-7).\n\n## Progress\n### Done\n- inspected five outputs\n\n"
    "## Next Steps\n- go on"
)

PREVIEW_STEP = """
from stowage.host.slash_command import stowage_command
result = {"text": stowage_command("preview"), "figures": engine.preview().as_dict(),
          "threshold": engine.threshold_tokens, "summary_before": stowage_command("summary")}
"""

AFTER_STEP = """
import json, subprocess, sys
from pathlib import Path
from stowage.host.slash_command import stowage_command
shown = subprocess.run([str(Path(sys.executable).with_name("stowage")), "--json", "summary"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
handle = json.loads(shown.stdout)["summaries"][-1]["window_handle"]
fetched = json.loads(engine.handle_tool_call("stowage_fetch", {"handle": handle, "mode": "range", "start": 1,
                                                                "count": 500}))
result = {"slash": stowage_command("summary"), "log": engine.compaction_log[-1].as_dict(), "handle": handle,
          "fetched": fetched, "cli_code": shown.returncode}
"""


def test_summary_shows_the_inserted_text_and_preview_predicts_the_compaction(
    fake_llm: FakeLLMServer, make_home
) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))

    scenario = (
        warm_up(Scenario(), 5)
        .python(PREVIEW_STEP, id="preview")
        .turn("BIG now", id="big")
        .python(AFTER_STEP, id="after")
    )
    result = run_scenario(home, scenario, check=True)

    # the preview, before the compaction
    before = result.step("preview")["result"]
    figures = before["figures"]
    assert "compaction preview (dry run" in before["text"] and "as of the last provider request" in before["text"]
    assert f"threshold of {before['threshold']:,}" in before["text"]  # below it: the warm-ups report low usage
    assert figures["would_compact"] is False and figures["window_messages"] > 0
    assert f"{figures['window_messages']} message(s)" in before["text"]
    assert "no compaction yet" in before["summary_before"]

    # what the compaction then did: the same trigger, the window the preview saw plus at most what came after it
    after = result.step("after")["result"]
    log = after["log"]
    assert log["result"] == "compacted" and log["tokens_before"] >= figures["threshold_tokens"] == before["threshold"]
    added = log["messages_before"] - figures["messages"]
    assert 0 < added <= 5, (log, figures)
    assert figures["window_messages"] <= log["window_messages"] <= figures["window_messages"] + added, (log, figures)

    # the summary as the history holds it
    summary_message = next(m for m in result.report["final_messages"] if is_summary(m))
    inserted = unwrap(message_text(summary_message))
    assert inserted and inserted.startswith(SUMMARY)  # the model's reply, then the grounding Stowage adds
    assert inserted in after["slash"]

    # ... and from another process, through the real console script
    env = home.env()
    shown = subprocess.run(
        [str(STOWAGE), "summary"], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert shown.returncode == 0, shown.stderr
    assert "--- summary as inserted into the history ---\n" + inserted + "\n--- end of summary ---" in shown.stdout
    assert f"{log['tokens_before']:,} -> {log['tokens_after']:,} tokens" in shown.stdout
    assert "the summary model (auxiliary 'compression' task" in shown.stdout
    assert f"covers      {log['window_messages']} message(s)" in shown.stdout

    # the handle names the stored window: stowage_fetch and `stowage blobs cat` read the summarized messages
    handle = after["handle"]
    assert after["cli_code"] == 0 and handle in shown.stdout and handle in inserted
    assert "error" not in after["fetched"], after["fetched"]
    cat = subprocess.run(
        [str(STOWAGE), "blobs", "cat", handle],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    window = [json.loads(line) for line in cat.stdout.splitlines() if line.strip()]
    assert len(window) == log["window_messages"]
    assert any("WARM-1" in message_text(m) for m in window)

    missing = subprocess.run(
        [str(STOWAGE), "summary", "--session", "no-such-session"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert missing.returncode == 2 and "unknown session 'no-such-session'" in missing.stderr
    assert "Traceback" not in missing.stderr
