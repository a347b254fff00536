"""The summary log the engine writes at each compaction, and the dry run that predicts one."""

from __future__ import annotations

import copy
import json

from stowage.context_engine.chat.messages import is_summary, message_text
from stowage.context_engine.compaction.compactor import compact
from stowage.context_engine.compaction.inputs import CompactionInputs
from stowage.context_engine.compaction.preview import SeenMessages, preview_compaction
from stowage.context_engine.records.summary_log import (
    append_summary,
    newest_session,
    read_summaries,
    summaries_path,
    window_handle,
)
from stowage.context_engine.summary.reply import unwrap
from stowage_dev.transcripts import make_transcript

from .helpers import make_engine

NEWEST = "Now rename parse_header() to parse_head() and rerun the suite."


def history(turns: int = 30) -> list[dict]:
    msgs = make_transcript(turns, seed=3)
    return msgs + [{"role": "user", "content": NEWEST}, {"role": "assistant", "content": "On it."}]


def test_each_compaction_appends_the_summary_as_inserted(tmp_path):
    engine = make_engine()
    engine.on_session_start("sess-1", hermes_home=str(tmp_path))
    msgs = history()
    out = engine.compress(msgs, current_tokens=engine.state.counter.count_messages(msgs))
    records, bad = read_summaries(engine.state.store.root, "sess-1")
    assert bad == 0 and len(records) == 1
    record = records[0]
    inserted = unwrap(message_text(next(m for m in out if is_summary(m))))
    assert record["body"] == inserted  # exactly what the history holds, grounding included
    assert record["session_id"] == "sess-1" and record["compaction"] == 1 and record["result"] == "compacted"
    assert record["model"] == "test-model" and record["fallback_used"] is False
    assert record["tokens_before"] > record["tokens_after"] > 0
    assert record["window_messages"] == engine.state.compaction_log[-1].window_messages > 0
    assert record["window_handle"] and record["window_handle"] in record["body"]
    assert engine.state.store.store.stat(engine.state.store.store.resolve(record["window_handle"]))


def test_a_store_less_engine_writes_nothing_and_never_fails():
    engine = make_engine()
    msgs = history()
    assert engine.compress(msgs, current_tokens=engine.state.counter.count_messages(msgs)) is not msgs
    assert engine.state.store.root is None


def test_reader_skips_damaged_lines_and_finds_the_newest_session(tmp_path):
    append_summary(tmp_path, "a/b", {"body": "first", "at": 1.0})
    path = summaries_path(tmp_path, "a/b")
    with path.open("a") as f:
        f.write("{not json\n" + json.dumps({"no": "body", "session_id": "a/b"}) + "\n\n" + json.dumps([1]) + "\n")
    append_summary(tmp_path, "a/b", {"body": "second"})
    records, bad = read_summaries(tmp_path, "a/b")
    assert [r["body"] for r in records] == ["first", "second"] and bad == 3
    assert newest_session(tmp_path) == "a/b"  # the id inside the file, not the sanitized file name
    assert read_summaries(tmp_path, "nobody") == ([], 0)
    assert newest_session(tmp_path / "missing") is None
    append_summary(None, "x", {"body": "y"})  # no store: nothing, no error


def test_window_handle_from_the_reference():
    assert window_handle("stored whole ... under handle 0123456789abcdef0123. Read them") == "0123456789abcdef0123"
    assert window_handle(None) is None and window_handle("not stored") is None


def test_preview_chooses_the_window_compaction_chooses():
    engine = make_engine()
    msgs = [{"role": "system", "content": "You are helpful."}] + history()
    engine.state.saw(msgs, "request")
    preview = engine.preview()
    assert preview is not None and preview.source == "request" and preview.system_messages == 1
    conversation = msgs[1:]
    outcome = compact(
        conversation,
        CompactionInputs(
            engine.state.compaction_plan(engine.limits),
            count=engine.state.counter.estimate_message,
            summarize=lambda prompt: "## Goal\nx\n\n## Next Steps\n- y",
        ),
    )
    assert preview.messages == len(conversation) == outcome.stats.messages_before
    assert preview.window_messages == outcome.stats.window_messages > 0
    assert preview.window_tool_outputs == outcome.stats.window_tool_outputs
    assert preview.pruned_outputs == outcome.stats.pruned_outputs
    assert preview.head_messages + preview.window_messages + preview.tail_messages == preview.messages
    assert preview.window_last - preview.window_first + 1 == preview.window_messages
    assert preview.estimated_after_tokens < preview.tokens
    assert preview.threshold_tokens == engine.threshold_tokens and preview.would_compact is False
    assert engine.compression_count == 0 and not engine.state.compaction_log  # a dry run changes nothing


def test_preview_before_any_history_and_after_a_reset():
    engine = make_engine()
    assert engine.preview() is None
    engine.state.saw(history(), "request")
    engine.on_session_reset()
    assert engine.preview() is None


def test_preview_of_a_short_history_summarizes_nothing():
    seen = SeenMessages([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 5.0, "request")
    engine = make_engine()
    preview = preview_compaction(
        seen,
        engine.state.compaction_plan(engine.limits),
        count=engine.state.counter.estimate_message,
        last_prompt_tokens=10,
        threshold_tokens=100,
        would_compact=False,
        reason="below_threshold:10<100",
        compactions_so_far=0,
    )
    assert preview.window_messages == 0 and preview.window_first == 0 and preview.summary_budget_tokens == 0
    assert preview.tail_messages + preview.head_messages == 2


def test_preview_matches_the_engines_own_next_compaction(tmp_path):
    """The engine calibrates its token estimates before compacting; the preview does too, so they agree."""
    engine = make_engine()
    engine.on_session_start("sess-2", hermes_home=str(tmp_path))
    msgs = [{"role": "system", "content": "You are helpful."}] + history()
    engine.state.saw(msgs, "request")
    preview = engine.preview()
    out = engine.compress(msgs[1:], current_tokens=engine.threshold_tokens + 1)
    log = engine.state.compaction_log[-1]
    assert (preview.window_messages, preview.pruned_outputs) == (log.window_messages, log.pruned_outputs)
    # afterwards the preview describes the compacted history, not the one before it
    after = engine.preview()
    assert after.source == "compaction" and after.messages == len(out) and after.compactions_so_far == 1
    assert after.head_messages == 0  # the summary carries the early context now
    assert copy.deepcopy(engine).state.last_seen is None  # another agent's copy never carries this history
