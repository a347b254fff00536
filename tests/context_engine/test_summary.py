"""Phase 3 pieces: reply checking, grounding, wrapping, the prompt, the transcript, the fallback."""

from __future__ import annotations

import json

import pytest

from stowage.context_engine.chat.messages import SUMMARY_END_MARKER, SUMMARY_MARKER, is_summary
from stowage.context_engine.compaction.assemble import merge_summary_into
from stowage.context_engine.summary.fallback import MAX_CHARS, build_fallback
from stowage.context_engine.summary.prompt import (
    NEWEST_REQUEST_HEADING,
    SummaryRequest,
    build_prompt,
    summary_budget_tokens,
)
from stowage.context_engine.summary.reply import (
    SummaryFailure,
    clean_reply,
    extract_previous,
    ground,
    remainder_after_summary,
    unwrap,
    wrap,
)
from stowage.context_engine.summary.transcript import TranscriptLimits, serialize_window

GOOD = "## Goal\nShip the parser fix.\n\n## Progress\n### Done\n- fixed tokenizer\n\n## Next Steps\n- run CI"


# -- clean_reply ------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply,kind",
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("<think>I should summarize the turns carefully.</think>", "empty"),
        ("<thinking>\nplan\n</thinking>\n  ", "empty"),
        ("<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>", "garbage"),
        ("<html><head><title>Error</title></head><body>upstream timed out</body></html>", "garbage"),
        (json.dumps({"error": {"message": "model overloaded", "type": "server_error"}}), "garbage"),
        (json.dumps({"detail": "Not Found"}), "garbage"),
        ("Sure!", "garbage"),
        ("\x00\x01\x02\x03\x04\x05\x06\x07" * 30, "garbage"),
        (None, "garbage"),
        ({"content": GOOD}, "garbage"),
        (42, "garbage"),
    ],
)
def test_clean_reply_failures(reply, kind):
    with pytest.raises(SummaryFailure) as info:
        clean_reply(reply)
    assert info.value.kind == kind
    assert not info.value.aborts
    assert str(info.value).startswith(kind + ":")


def test_clean_reply_accepts_summary_and_strips_wrapping():
    assert clean_reply(GOOD) == GOOD
    assert clean_reply("<think>hmm</think>\n" + GOOD) == GOOD
    assert clean_reply("```markdown\n" + GOOD + "\n```") == GOOD
    assert clean_reply("```\n" + GOOD + "\n```") == GOOD
    # a long reply without the template headings is still a summary
    prose = "The user and the agent worked on the parser. " * 10
    assert clean_reply(prose) == prose.strip()
    # JSON that is not an error body is accepted as text
    assert clean_reply('{"goal": "x", "progress": "' + "y" * 300 + '"}').startswith('{"goal"')


def test_clean_reply_redacts_and_neutralizes_markers():
    reply = GOOD + "\n\n## Critical Context\n- OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234\n" + SUMMARY_END_MARKER
    cleaned = clean_reply(reply)
    assert "sk-proj-abcdefghijklmnop1234" not in cleaned
    assert SUMMARY_END_MARKER not in cleaned
    cleaned = clean_reply(GOOD + "\n" + SUMMARY_MARKER + " fake]")
    assert SUMMARY_MARKER not in cleaned


def test_summary_failure_kinds():
    assert SummaryFailure("auth", "401").aborts and SummaryFailure("quota", "402").aborts
    for kind in ("timeout", "network", "http", "empty", "garbage", "no_provider", "error"):
        assert not SummaryFailure(kind, "x").aborts
    assert SummaryFailure("weird-kind", "x").kind == "error"


# -- ground -----------------------------------------------------------------------------


def test_ground_replaces_model_written_newest_request_with_verbatim_quote():
    body = GOOD + f"\n\n{NEWEST_REQUEST_HEADING}\n> the model's stale paraphrase\n\n## Critical Context\n- v1.2"
    grounded = ground(body, newest_request="Please rename foo() to bar()\nand rerun the tests.")
    assert "stale paraphrase" not in grounded
    assert grounded.count(NEWEST_REQUEST_HEADING) == 1
    assert "> Please rename foo() to bar()\n> and rerun the tests." in grounded
    assert "## Critical Context\n- v1.2" in grounded  # the following section survives
    assert grounded.index("## Critical Context") < grounded.index(NEWEST_REQUEST_HEADING)


def test_ground_replaces_newest_request_heading_without_verbatim_suffix():
    body = GOOD + "\n\n## Newest User Request\n> paraphrased and outdated\n\n## Critical Context\n- x"
    grounded = ground(body, newest_request="do the real thing")
    assert "paraphrased and outdated" not in grounded
    assert "> do the real thing" in grounded


def test_ground_redacts_and_truncates_quote_and_adds_store_reference():
    secret = "ghp_" + "A1b2C3d4E5" * 4
    grounded = ground(GOOD, newest_request=f"use token {secret} " + "x" * 5000, store_reference="blob:123")
    assert secret not in grounded
    quote = grounded.split(NEWEST_REQUEST_HEADING)[1]
    assert "…" in quote and len(quote) < 3300
    assert grounded.endswith("## Full History\nblob:123")
    # grounding again replaces the store section, no duplicate
    again = ground(grounded, newest_request="newer", store_reference="blob:456")
    assert again.count("## Full History") == 1 and "blob:456" in again and "blob:123" not in again
    assert again.count(NEWEST_REQUEST_HEADING) == 1 and "> newer" in again


def test_ground_without_request():
    assert ground(GOOD, newest_request=None) == GOOD


# -- wrap / unwrap / extract_previous -------------------------------------------------------------


def test_wrap_unwrap_round_trip():
    content = wrap(GOOD)
    assert content.startswith(SUMMARY_MARKER) and content.endswith(SUMMARY_END_MARKER)
    assert unwrap(content) == GOOD
    assert unwrap("no summary here") is None
    assert is_summary({"role": "user", "content": content})


def test_extract_previous_drops_grounding_sections():
    body = ground(GOOD, newest_request="the ask", store_reference="blob:9")
    msgs = [
        {"role": "user", "content": "old"},
        {"role": "assistant", "content": wrap(body)},
        {"role": "user", "content": "new"},
    ]
    index, previous = extract_previous(msgs)
    assert index == 1 and previous == GOOD


def test_extract_previous_from_summary_merged_into_another_message():
    tail_first = {"role": "user", "content": "continue with the parser"}
    merged = merge_summary_into(tail_first, wrap(GOOD))
    msgs = [{"role": "system", "content": "s"}, merged, {"role": "assistant", "content": "ok"}]
    assert extract_previous(msgs) == (1, GOOD)
    assert remainder_after_summary(merged["content"]) == "continue with the parser"
    # merged into multi-part content
    parts = merge_summary_into({"role": "user", "content": [{"type": "text", "text": "look"}]}, wrap(GOOD))
    assert extract_previous([parts]) == (0, GOOD)


def test_extract_previous_finds_newest_and_none():
    older = {"role": "user", "content": wrap("## Goal\nold")}
    newer = {"role": "user", "content": wrap("## Goal\nnew")}
    assert extract_previous([older, {"role": "assistant", "content": "a"}, newer])[1] == "## Goal\nnew"
    assert extract_previous([{"role": "user", "content": "hi"}]) is None
    # a tool result quoting the marker is not a summary
    assert extract_previous([{"role": "tool", "tool_call_id": "x", "content": wrap("## Goal\nno")}]) is None


def test_remainder_after_summary_variants():
    assert remainder_after_summary("plain") == "plain"
    assert remainder_after_summary(wrap(GOOD)) == ""
    assert remainder_after_summary("before " + SUMMARY_MARKER + " unterminated") == "before"


# -- prompt --------------------------------------------------------------------------------


def test_prompt_first_compaction():
    prompt = build_prompt(SummaryRequest(transcript="### [1] USER\nhello", budget_tokens=1500, today="2026-11-22"))
    assert "2026-11-22" in prompt
    assert "TRANSCRIPT TO SUMMARIZE" in prompt and "### [1] USER\nhello" in prompt
    assert "PREVIOUS SUMMARY" not in prompt and "NEW TURNS" not in prompt
    assert "FOCUS TOPIC" not in prompt and "<memory>" not in prompt
    assert "1500 tokens" in prompt
    for section in ("## Goal", "## Progress", "## Next Steps", "## Critical Context"):
        assert section in prompt


def test_prompt_iterative_focus_and_memory():
    prompt = build_prompt(
        SummaryRequest(
            transcript="### [5] USER\nnext",
            budget_tokens=2000,
            today="2026-01-02",
            previous_summary=GOOD,
            focus_topic="database migrations",
            memory_context="  user prefers postgres  ",
        )
    )
    assert "PREVIOUS SUMMARY" in prompt and "NEW TURNS TO INCORPORATE" in prompt
    assert "<previous_summary>\n" + GOOD + "\n</previous_summary>" in prompt
    assert "TRANSCRIPT TO SUMMARIZE" not in prompt
    assert prompt.index("PREVIOUS SUMMARY") < prompt.index("NEW TURNS TO INCORPORATE")
    assert 'FOCUS TOPIC: "database migrations"' in prompt
    assert "<memory>\nuser prefers postgres\n</memory>" in prompt
    assert "2026-01-02" in prompt


def test_summary_budget_bounds():
    assert summary_budget_tokens(100, 128_000, 8000) == 1000
    assert summary_budget_tokens(20_000, 128_000, 8000) == 4000
    assert summary_budget_tokens(10**6, 128_000, 8000) == 6400
    assert summary_budget_tokens(10**6, 1_000_000, 8000) == 8000
    assert summary_budget_tokens(10**6, 0, 8000) == 8000


# -- transcript ---------------------------------------------------------------------------


def test_transcript_redacts_strips_reasoning_and_cuts():
    window = [
        {"role": "user", "content": "my key is sk-ant-api03-abcdefghijklmnopqrstuv, deploy MEDIA:/tmp/x.png"},
        {
            "role": "assistant",
            "content": "<think>secret plan</think>Deploying now.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": "x" * 5000})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "head " + "m" * 20_000 + " tail\nfatal: disk full"},
        {"role": "user", "content": "long note " + "n" * 20_000 + " end of note"},
    ]
    text = serialize_window(window, names={"c1": "terminal"}, first_number=7)
    assert "sk-ant-api03" not in text and "[REDACTED]" in text
    assert "secret plan" not in text and "Deploying now." in text
    assert "[media attachment]" in text and "MEDIA:" not in text
    assert "### [7] USER" in text and "### [8] ASSISTANT (calls tools: terminal(" in text
    # a long tool output appears as its verdict and size, like a pruned stub
    assert (
        "### [9] TOOL RESULT of terminal (call c1)\n[stowage: output not shown] -> error: fatal: disk full; "
        "20,027 chars" in text
    )
    assert "mmmmmmmmmm" not in text
    # a long message is cut in the middle
    assert "chars omitted here" in text and text.rstrip().endswith("end of note")
    assert len(text) < 12_000


def test_transcript_shows_short_tool_outputs_and_stubs_verbatim():
    window = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "terminal", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "exit 0: 3 files"},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "[stowage: tool output pruned] terminal() -> ok; " + "x" * 300,
        },
    ]
    text = serialize_window(window, names={}, first_number=1)
    assert "exit 0: 3 files" in text and "[stowage: tool output pruned] terminal() -> ok;" in text
    assert "output not shown" not in text


def test_transcript_fits_total_budget_by_eliding_middle():
    window = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "w " * 2000} for i in range(200)
    ]
    limits = TranscriptLimits(total_chars=20_000)
    text = serialize_window(window, names={}, limits=limits)
    assert len(text) <= 20_000
    assert "message 0 " in text and "message 199 " in text
    assert "messages omitted from this summary input" in text


# -- fallback ---------------------------------------------------------------------------------


def test_fallback_lists_requests_actions_errors_and_files():
    window = [
        {"role": "user", "content": "Fix src/app/main.py please"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": "pytest tests/test_main.py"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "collected 3\nERROR: test_main failed: assert 1 == 2"},
        {"role": "assistant", "content": "Found the failing assertion."},
    ]
    body = build_fallback(window, previous_summary="## Goal\nearlier goal", reason="timeout: 120s")
    assert "without the summary model" in body and "timeout: 120s" in body
    assert "Fix src/app/main.py please" in body
    assert 'terminal(command="pytest tests/test_main.py") -> error: ERROR: test_main failed' in body
    assert "src/app/main.py" in body and "tests/test_main.py" in body
    assert "Found the failing assertion." in body
    assert "## Earlier Summary (carried over)\n## Goal\nearlier goal" in body
    assert body.index("## Goal") > body.index("without the summary model")


def test_fallback_is_bounded_and_redacted():
    window = [{"role": "user", "content": f"request {i} with password=hunter2hunter2 " + "p " * 400} for i in range(50)]
    window += [
        {"role": "tool", "tool_call_id": f"x{i}", "content": "Traceback error " + "e" * 300 + str(i)} for i in range(50)
    ]
    body = build_fallback(window, previous_summary="s" * 10_000, reason="garbage")
    assert len(body) <= MAX_CHARS
    assert "hunter2hunter2" not in body


def test_fallback_blockers_are_real_errors_not_null_error_fields():
    def tool(cid: str, content: str) -> dict:
        return {"role": "tool", "tool_call_id": cid, "content": content}

    window = [
        {"role": "user", "content": "run the checks"},
        tool("a", json.dumps({"output": "all good\n3 passed, 0 failed", "exit_code": 0, "error": None})),
        tool("b", json.dumps({"success": True, "error": "", "exception": False, "errors": []})),
        tool("c", "summary: errors=0 failed: 0\nno errors found"),
        tool(
            "d",
            json.dumps({"output": "build\nERROR: linker failed: undefined symbol foo", "exit_code": 2, "error": None}),
        ),
        tool("e", json.dumps({"success": False, "error": "permission denied: /etc/shadow"})),
    ]
    body = build_fallback(window, previous_summary=None, reason="timeout")
    blocked = body.split("### Blocked\n", 1)[1].split("\n## ", 1)[0]
    assert "ERROR: linker failed: undefined symbol foo" in blocked
    assert "error: permission denied: /etc/shadow" in blocked
    assert "null" not in blocked and "0 failed" not in blocked and "errors=0" not in blocked
    assert "no errors" not in blocked and "exception" not in blocked
    assert len(blocked.strip().splitlines()) == 2, blocked
