"""``stowage summary`` and ``/stowage summary|preview``: the text, and every way a record can be missing."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from stowage.command import main
from stowage.command.preview import preview_text
from stowage.command.summary import summary_header, summary_text
from stowage.context_engine.compaction.preview import CompactionPreview
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import write_session_status
from stowage.context_engine.records.summary_log import append_summary, summaries_path
from stowage.host.slash_command import stowage_command
from stowage_dev.records import compaction_record

BODY = "## Goal\nShip it.\n\n## Full History\nThe 12 compacted messages are stored whole under handle 0123456789abcdef."
RECORD = compaction_record(window_handle="0123456789abcdef", body=BODY)


def store_of(home):
    return home / "stowage"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_header_and_text_of_a_model_summary():
    header = summary_header(RECORD, now=RECORD["at"] + 120)
    assert "2m ago (2023-11-14 22:13:20 UTC)" in header and "100,000 -> 6,000 tokens" in header
    assert "the summary model (auxiliary 'compression' task; session model gpt-x)" in header
    assert "22 message(s) with 5 tool output(s); history 30 -> 9 messages" in header
    assert 'stowage_fetch(handle="0123456789abcdef", mode="range")' in header and "2 older tool output(s)" in header
    text = summary_text("s1", [RECORD], show_all=False)
    assert text.startswith("session s1: 1 compaction summary(ies)")
    assert "--- summary as inserted into the history ---\n" + BODY + "\n--- end of summary ---" in text


def test_fallback_forced_and_damaged_records_still_format():
    fallback = {
        **RECORD,
        "result": "fallback",
        "fallback_used": True,
        "summary_error": "timeout: slow",
        "forced": True,
        "focus_topic": "tests",
        "window_handle": None,
        "tokens_before": None,
    }
    header = summary_header(fallback)
    assert "model-free fallback summary (why: timeout: slow)" in header
    assert "not stored (the store was unavailable)" in header and "focus: tests" in header
    assert "size before not reported" in header
    bare = summary_header({"body": "x", "at": "yesterday", "window_messages": "many"})
    assert "unknown time" in bare and "? message(s)" in bare and "not measured" in bare


def test_cli_newest_session_latest_and_all(home, capsys):
    root = store_of(home)
    append_summary(root, "old-session", {**RECORD, "body": "OLD"})
    append_summary(root, "s1", {**RECORD, "body": "FIRST"})
    append_summary(root, "s1", {**RECORD, "compaction": 2, "body": "SECOND"})
    code, out, _ = run(capsys, "summary")
    assert code == 0 and "session s1: 2 compaction summary(ies); the newest" in out
    assert "SECOND" in out and "FIRST" not in out
    code, out, _ = run(capsys, "summary", "--all")
    assert code == 0 and out.index("FIRST") < out.index("SECOND")
    code, out, _ = run(capsys, "summary", "--session", "old-session")
    assert code == 0 and "OLD" in out
    code, out, _ = run(capsys, "--json", "summary", "--all")
    data = json.loads(out)
    assert data["session_id"] == "s1" and [s["body"] for s in data["summaries"]] == ["FIRST", "SECOND"]


def test_cli_no_session_unknown_session_and_no_compaction(home, capsys):
    code, out, err = run(capsys, "summary")
    assert code == 1 and "no Stowage session has run" in err and "Traceback" not in err
    write_session_status(store_of(home), "quiet", SessionStatus(compression_count=0))
    code, out, err = run(capsys, "summary")
    assert code == 0 and out.strip() == "session quiet: no compaction yet, so no summary"
    code, out, err = run(capsys, "summary", "--session", "nope")
    assert code == 2 and "unknown session 'nope'" in err
    code, out, _ = run(capsys, "--json", "summary", "--session", "nope")
    assert json.loads(out)["error"]["code"] == "unknown_session"


def test_cli_a_damaged_summary_file_is_not_a_traceback(home, capsys):
    path = summaries_path(store_of(home), "bad")
    path.parent.mkdir(parents=True)
    path.write_text("{broken\n[]\n")
    code, out, err = run(capsys, "summary")  # no readable line names a session: a one-line answer
    assert code == 1 and "no Stowage session has run" in err and "Traceback" not in err
    code, out, err = run(capsys, "summary", "--session", "bad")
    assert code == 0 and "session bad: no compaction yet" in out and "2 unreadable line(s)" in out
    path.write_bytes(b"\xff\xfe" + json.dumps({**RECORD, "session_id": "bad"}).encode() + b"\n")
    code, out, err = run(capsys, "summary", "--session", "bad")
    assert code == 0 and "1 unreadable line(s)" in out


PREVIEW = CompactionPreview(
    **{
        "seen_at": 1000.0,
        "source": "request",
        "system_messages": 1,
        "messages": 40,
        "tokens": 52_000,
        "last_prompt_tokens": 50_000,
        "threshold_tokens": 48_000,
        "would_compact": True,
        "reason": None,
        "compactions_so_far": 0,
        "head_messages": 3,
        "head_tokens": 400,
        "window_messages": 29,
        "window_tokens": 45_000,
        "window_tool_outputs": 12,
        "window_first": 4,
        "window_last": 32,
        "pruned_outputs": 2,
        "pruned_tokens_saved": 3_000,
        "arguments_shrunk": 0,
        "images_removed": 0,
        "tail_messages": 8,
        "tail_tokens": 2_500,
        "summary_budget_tokens": 3_200,
        "estimated_after_tokens": 6_100,
    }
)


def test_preview_text():
    text = preview_text("s1", PREVIEW, now=1030.0)
    assert "dry run: no model call" in text and "as of the last provider request, 30s ago" in text
    assert "would compact now: the last request had 50,000 tokens, threshold 48,000" in text
    assert "messages 4-32: 29 message(s), 45,000 tokens, 12 tool output(s)" in text
    assert "2 older tool output(s) outside the window -> stubs, saving about 3,000 tokens" in text
    assert "8 message(s), 2,500 tokens" in text and "about 6,100 tokens or less" in text
    quiet = preview_text(
        "s1",
        replace(
            PREVIEW, would_compact=False, reason="below_threshold:9<48000", window_messages=0, last_prompt_tokens=9
        ),
    )
    assert "below the threshold of 48,000" in quiet and "/compress forces one anyway" in quiet
    assert re.search(r"summarized +nothing", quiet)
    blocked = preview_text("s", replace(PREVIEW, would_compact=False, reason="backoff:x"))
    assert "would not compact on its own now (backoff:x)" in blocked


def test_slash_summary_and_preview_without_a_live_session(home):
    assert stowage_command("summary", hermes_home=lambda: home).startswith("stowage: no Stowage session has run")
    append_summary(store_of(home), "s1", RECORD)
    text = stowage_command("summary --all", hermes_home=lambda: home)
    assert text.startswith("no Stowage session is running in this process") and BODY in text
    assert "preview needs a live session" in stowage_command("preview", hermes_home=lambda: home)
    assert stowage_command("preview --now", hermes_home=lambda: home).startswith("unknown /stowage arguments")
    assert "/stowage preview" in stowage_command("help", hermes_home=lambda: home)


class _Engine:
    def __init__(self, root, preview):
        self.store_root = root  # the engine's seam: the glue never reads its session (tests/test_host_seam.py)
        self._preview = preview

    def preview(self):
        if isinstance(self._preview, Exception):
            raise self._preview
        return self._preview


@pytest.fixture
def live(monkeypatch):
    from stowage.host import sessions

    engines = {}
    monkeypatch.setattr(sessions, "live_session_ids", lambda: list(engines))
    monkeypatch.setattr(sessions, "engine_for", lambda sid: engines.get(sid))
    return engines


def test_slash_summary_and_preview_of_the_live_session(home, live):
    live["s1"] = _Engine(store_of(home), PREVIEW)
    assert "session s1: no compaction yet" in stowage_command("summary", hermes_home=lambda: home)
    append_summary(store_of(home), "s1", RECORD)
    assert BODY in stowage_command("summary", hermes_home=lambda: home)
    assert "session s1: compaction preview" in stowage_command("preview", hermes_home=lambda: home)
    live["s2"] = _Engine(store_of(home), None)
    live["s3"] = _Engine(store_of(home), RuntimeError("boom"))
    text = stowage_command("preview", hermes_home=lambda: home)
    assert "session s2: nothing to preview yet" in text and "session s3: preview failed: RuntimeError: boom" in text


def test_status_and_summary_agree_on_how_each_compaction_was_served(home, capsys):
    """A compaction that only pruned wrote no summary: status must not call it a model summary."""
    from stowage.blobstore import BlobStore
    from stowage.command.live import served_text
    from stowage.context_engine.records.compaction_record import CompactionRecord

    BlobStore(store_of(home)).close()  # status lists sessions of a store that exists
    pruned = CompactionRecord(result="compacted", at=1.0, pruned_outputs=3, tokens_before=90_000, tokens_after=60_000)
    write_session_status(store_of(home), "p1", SessionStatus(compression_count=1, compactions=[pruned]))
    code, out, _ = run(capsys, "status")
    assert code == 0 and "prune only" in out and "model summary" not in out, out
    code, out, _ = run(capsys, "summary", "--session", "p1")
    assert code == 0 and "1 compaction(s), each prune only" in out and "no compaction yet" not in out, out
    served = {
        "model": "model summary",
        "prepared": "model summary (written ahead)",
        "fallback": "model-free fallback summary",
    }
    for source, text in served.items():
        assert served_text(CompactionRecord(result="compacted", summary_source=source)) == text
    assert served_text(CompactionRecord(result="fallback")) == "model-free fallback summary"
    old_file = CompactionRecord(result="compacted", window_messages=12)  # written before summary_source existed
    assert served_text(old_file) == "model summary"
