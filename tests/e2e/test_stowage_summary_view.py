"""``stowage summary`` and ``/stowage preview`` around a real compaction in the real host.

The scripted summary model's reply must come back from the command line
exactly as the history holds it, with a window handle the store resolves;
the preview taken before the compaction must predict its trigger and window.
All read the shared session of ``compacted_session.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stowage.context_engine.chat.messages import is_summary, message_text
from stowage.context_engine.summary.reply import unwrap

from .compacted_session import SUMMARY, CompactedSession

pytestmark = pytest.mark.e2e

STOWAGE = Path(sys.executable).with_name("stowage")


def cli(session: CompactedSession, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real console script, from another process, on the session's Hermes home."""
    return subprocess.run(
        [str(STOWAGE), *argv],
        env=session.home.env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def inserted_summary(session: CompactedSession) -> str:
    """The summary as the history holds it."""
    return unwrap(message_text(next(m for m in session.result.report["final_messages"] if is_summary(m))))


def test_the_preview_before_the_compaction_predicts_its_trigger_and_window(compacted_session: CompactedSession) -> None:
    before = compacted_session.result.step("preview")["result"]
    figures = before["figures"]
    assert "compaction preview (dry run" in before["text"] and "as of the last provider request" in before["text"]
    assert f"threshold of {before['threshold']:,}" in before["text"]  # below it: the warm-ups report low usage
    assert figures["would_compact"] is False and figures["window_messages"] > 0
    assert f"{figures['window_messages']} message(s)" in before["text"]
    assert "no compaction yet" in before["summary_before"]

    # what the compaction then did: the same trigger, the window the preview saw plus at most what came after it
    log = compacted_session.result.step("summary")["result"]["log"]
    assert log["result"] == "compacted" and log["tokens_before"] >= figures["threshold_tokens"] == before["threshold"]
    added = log["messages_before"] - figures["messages"]
    assert 0 < added <= 5, (log, figures)
    assert figures["window_messages"] <= log["window_messages"] <= figures["window_messages"] + added, (log, figures)


def test_slash_summary_shows_the_model_reply_as_inserted(compacted_session: CompactedSession) -> None:
    inserted = inserted_summary(compacted_session)
    assert inserted and inserted.startswith(SUMMARY)  # the model's reply, then the grounding Stowage adds
    assert inserted in compacted_session.result.step("summary")["result"]["slash"]


def test_stowage_summary_in_a_terminal_shows_the_same_text_and_figures(compacted_session: CompactedSession) -> None:
    inserted = inserted_summary(compacted_session)
    log = compacted_session.result.step("summary")["result"]["log"]
    shown = cli(compacted_session, "summary")
    assert shown.returncode == 0, shown.stderr
    assert "--- summary as inserted into the history ---\n" + inserted + "\n--- end of summary ---" in shown.stdout
    assert f"{log['tokens_before']:,} -> {log['tokens_after']:,} tokens" in shown.stdout
    assert "the summary model (auxiliary 'compression' task" in shown.stdout
    assert f"covers      {log['window_messages']} message(s)" in shown.stdout
    assert compacted_session.result.step("summary")["result"]["handle"] in shown.stdout


def test_the_window_handle_reads_back_the_summarized_messages(compacted_session: CompactedSession) -> None:
    """stowage_fetch (in the session) and ``stowage blobs cat`` (in a terminal) read the stored window."""
    after = compacted_session.result.step("summary")["result"]
    handle = after["handle"]
    assert after["cli_code"] == 0 and handle in inserted_summary(compacted_session)
    assert "error" not in after["fetched"], after["fetched"]
    cat = cli(compacted_session, "blobs", "cat", handle)
    window = [json.loads(line) for line in cat.stdout.splitlines() if line.strip()]
    assert len(window) == after["log"]["window_messages"]
    assert any("WARM-1" in message_text(m) for m in window)


def test_an_unknown_session_is_a_one_line_error(compacted_session: CompactedSession) -> None:
    missing = cli(compacted_session, "summary", "--session", "no-such-session")
    assert missing.returncode == 2 and "unknown session 'no-such-session'" in missing.stderr
    assert "Traceback" not in missing.stderr
