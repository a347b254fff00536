"""The session figures ``/stowage`` and ``stowage status`` print, from an engine's ``get_status()``."""

from __future__ import annotations

import re

from stowage.command.live import session_rows, session_text
from stowage.context_engine.records.session_status import SessionStatus


def test_every_figure_is_shown():
    status = {
        "compression_count": 2,
        "threshold_tokens": 96_000,
        "last_prompt_tokens": 40_000,
        "last_compaction": {
            "result": "fallback",
            "summary_error": "timeout after 3 s",
            "tokens_before": 100_000,
            "tokens_after": 20_000,
            "pruned_outputs": 4,
            "window_reference": "The 9 compacted messages are stored whole, one JSON message per line, "
            "under handle abcdef0123456789.",
        },
        "view": {
            "enabled": True,
            "tokens_saved": 12_345,
            "requests": 7,
            "steps": 2,
            "sent_tokens": 50_000,
            "unshaped_tokens": 62_345,
            "view_tokens_saved": 10_000,
            "spill_tokens_saved": 2_345,
            "last_request": {"sent_tokens": 9_000, "full_tokens": 30_000, "unshaped_tokens": 31_000},
        },
        "trigger": {
            "key": "view.compact_at",
            "share": 0.42,
            "tokens": 96_000,
            "context_length": 228_571,
            "measured_on": "the request as sent",
        },
        "store": {
            "spills": 1,
            "spill_failures": 1,
            "archive_failures": 0,
            "last_store_error": "disk full",
            "recent_spills": [{"handle": "0123456789abcdef", "tool": "terminal", "tokens": 9_000}],
        },
        "tool_search": {"active": False, "reason": "too few tools", "searches": 0, "calls": 0},
        "governor": {"backoff": None, "summary_cooldown_seconds": 55.0},
    }
    text = "\n".join(session_text("s1", SessionStatus.from_dict(status)))
    assert "2; last: 100,000 -> 20,000 tokens, model-free fallback summary (why: timeout after 3 s)" in text
    assert "4 output(s) pruned; the summarized messages are stored whole under handle abcdef0123456789" in text
    assert (
        "12,345 tokens saved over 7 requests (sent 50,000 of 62,345 message tokens; 10,000 by the lean view; "
        "2,345 by spilled outputs; summed over the requests, system prompt and tool schemas not counted)"
    ) in text
    assert re.search(r"newest request +9,000 message tokens sent of 31,000 \(2 view step\(s\) so far\)", text)
    assert "0123456789abcdef (terminal, 9,000 tokens)" in text
    assert "1 spill(s), 0 archive(s) not stored; last error: disk full" in text
    assert "inactive (too few tools)" in text
    assert (
        "when a request reaches 96,000 tokens (view.compact_at 0.42 of the 228,571-token window, on the request "
        "as sent); the newest request counted 40,000 in all"
    ) in text and "cooling down 55.0 s" in text


def test_a_status_file_from_before_spills_were_counted_says_what_it_counts():
    from stowage.command.live import saved_text

    assert (
        saved_text(SessionStatus.from_dict({"view": {"tokens_saved": 500, "requests": 1}}))
        == "500 tokens saved over 1 request (by the lean view)"
    )


def test_older_files_newest_request_cap_and_fixed_part_read_as_records():
    status = SessionStatus.from_dict(
        {
            "threshold_tokens": 10_000,
            # before spills were counted: no unshaped_tokens, the full history is the base
            "view": {"enabled": True, "requests": 1, "last_request": {"sent_tokens": 900, "full_tokens": 3_000}},
            "store": {"cap_evicted": {"blobs": 2, "bytes": 4096}},
            "fixed_part": {"system_tokens": 100, "tools_tokens": 200, "tokens": 300},
        }
    )
    assert status.view is not None and status.view.last_request is not None
    assert status.view.last_request.unshaped_base == 3_000 and status.store.cap_evicted.blobs == 2
    text = "\n".join(session_text("s1", status))
    assert re.search(r"newest request +900 message tokens sent of 3,000", text)
    assert "2 of this session's stored output(s) (4.0 KB) tombstoned" in text
    assert "every request carries 300 (system prompt and tool schemas)" in text
    empty = "\n".join(session_text("s2", SessionStatus.from_dict({"view": {"enabled": True}})))
    assert re.search(r"newest request +0 message tokens sent of 0", empty) and "size cap" not in empty


def test_summaries_prepared_ahead_are_shown():
    ahead = {
        "prepare_at": 0.9,
        "prepared": 3,
        "used": 2,
        "discarded": 1,
        "failed": 0,
        "state": "idle",
        "last": {"outcome": "used", "prepared": True, "wait_s": 0.0127, "lead_s": 4.2},
    }
    rows = dict(session_rows(SessionStatus.from_dict({"ahead": ahead})))
    assert rows["summaries ahead"] == (
        "3 prepared, 2 used by a compaction, 1 discarded, 0 failed; now idle; "
        "the last compaction waited 13 ms for its summary"
    )
    not_prepared = {**ahead, "last": {"outcome": "none", "prepared": False, "why": "nothing started: not due yet"}}
    assert (
        "the last compaction waited"
        not in dict(session_rows(SessionStatus.from_dict({"ahead": not_prepared})))["summaries ahead"]
    )
    assert dict(session_rows(SessionStatus.from_dict({"ahead": {"prepare_at": 0}})))["summaries ahead"].startswith(
        "off"
    )
    assert "summaries ahead" not in dict(session_rows(SessionStatus.from_dict({})))


def test_a_status_file_from_before_the_typed_use_still_says_how_the_last_compaction_was_served():
    from stowage.context_engine.records.part_status import PreparedUse

    old = {"prepared_ahead": True, "wait_ms": 1270.0, "outcome": "used", "prepared_ms": 5400.0, "later": 1}
    status = SessionStatus.from_dict({"ahead": {"prepare_at": 0.9, "prepared": 1, "used": 1, "last": old}})
    assert status.ahead is not None
    assert status.ahead.last == PreparedUse(outcome="used", prepared=True, wait_s=1.27, lead_s=5.4, extra={"later": 1})
    assert dict(session_rows(status))["summaries ahead"].endswith("the last compaction waited 1,270 ms for its summary")
    # today's keys win over old ones; mistyped values take their defaults; a non-dict reads as empty
    mixed = {"prepared_ahead": True, "prepared": False, "wait_ms": 9.0, "wait_s": 0.5, "why": 3}
    assert PreparedUse.upgrade_plain(mixed) == {"prepared": False, "wait_s": 0.5, "why": 3}
    read = SessionStatus.from_dict({"ahead": {"last": mixed}}).ahead
    assert read is not None and read.last == PreparedUse(prepared=False, wait_s=0.5)
    damaged = {"prepared_ahead": "yes", "wait_ms": "slow", "outcome": 7}
    read = SessionStatus.from_dict({"ahead": {"last": damaged}}).ahead
    assert read is not None and read.last == PreparedUse()
    read = SessionStatus.from_dict({"ahead": {"last": "x"}}).ahead
    assert read is not None and read.last is None


def test_how_each_compaction_was_served_and_the_wasted_calls_are_shown():
    status = SessionStatus.from_dict(
        {
            "compactions": [
                {"result": "compacted", "summary_source": "model", "wait_s": 9.84},
                {"result": "compacted", "summary_source": "prepared", "wait_s": 0.0},
                {"result": "compacted"},  # an older writer: says nothing
            ],
            "ahead": {"prepare_at": 0.9, "prepared": 3, "used": 1, "wasted": 2, "wasted_tokens": 41_000},
        }
    )
    assert dict(session_rows(status))["compactions served"] == (
        "model summary, waited 9.8 s; model summary (written ahead), waited 0.0 s; "
        "2 summary call(s) prepared and wasted (41,000 input tokens)"
    )
    assert "compactions served" not in dict(session_rows(SessionStatus.from_dict({})))


def test_an_old_or_empty_status_file_still_prints():
    rows = dict(session_rows(SessionStatus.from_dict({})))
    assert rows["compactions"] == "0" and rows["store failures"] == "none"
    assert session_rows(SessionStatus.from_dict({"view": {"enabled": False}, "compression_count": "x?"})) is not None


def test_doctor_reports_progress_on_large_stores(filled):
    import io

    from stowage.command.env import Env
    from stowage.command.status import TerminalProgress, doctor

    calls = []
    env = Env.resolve(filled.home, None)
    try:
        doctor(env, verify=True, progress=lambda done, total, checked: calls.append((done, total, checked)))
    finally:
        env.close()
    assert [c[0] for c in calls] == list(range(1, len(calls) + 1)) and calls[-1][0] == calls[-1][1] >= 4
    assert calls[-1][2] > 0  # bytes rehashed so far

    stream = io.StringIO()
    shown = TerminalProgress(stream)
    shown.EVERY = 2
    for done in range(1, 6):
        shown(done, 5, done * 1024)
    shown.close()
    text = stream.getvalue()
    assert "checked 2 of 5 blobs (2.0 KB)" in text and "checked 5 of 5 blobs" in text and "checked 3 of" not in text
    assert text.endswith("\r\033[K")
    quiet = io.StringIO()
    small = TerminalProgress(quiet)
    small(1, 3, 10)  # a small store: no progress line at all
    small.close()
    assert quiet.getvalue() == ""


def test_the_totals_as_labelled_figures_hold_the_numbers_of_the_sentence():
    from stowage.command.live import saved_figures, saved_text

    status = SessionStatus.from_dict(
        {
            "compression_count": 1,
            "store": {"spills": 2},
            "view": {
                "requests": 9,
                "tokens_saved": 7000,
                "sent_tokens": 30000,
                "unshaped_tokens": 37000,
                "view_tokens_saved": 4000,
                "spill_tokens_saved": 3000,
            },
        }
    )
    assert saved_figures(status) == [
        ("tokens saved", "7,000"),
        ("requests", "9"),
        ("sent", "30,000 of 37,000"),
        ("by the lean view", "4,000"),
        ("by spills", "3,000"),
        ("compactions", "1"),
        ("spills", "2"),
    ]
    sentence = saved_text(status)
    assert all(value.split(" of ")[0] in sentence for _, value in saved_figures(status)[:5])
    old = SessionStatus.from_dict({"view": {"tokens_saved": 500, "requests": 1}})
    assert [label for label, _ in saved_figures(old)] == ["tokens saved", "requests", "compactions", "spills"]


def test_inline_pre_selection_and_a_fallback_ranking_are_shown():
    search = {
        "active": True,
        "deferred": 92,
        "searches": 0,
        "calls": 1,
        "inline": True,
        "inlined": ["slack_post_message", "slack_reply"],
        "semantic": "BM25 alone: embeddings from http://127.0.0.1:9/v1 (m) failed (HTTP 500)",
    }
    text = "\n".join(session_text("s1", SessionStatus.from_dict({"tool_search": search})))
    assert "the newest message's block names: slack_post_message, slack_reply" in text
    assert "BM25 alone: embeddings from http://127.0.0.1:9/v1 (m) failed (HTTP 500)" in text
