"""reread.reread_answer: the host's read dedup answer against what the request showed."""

from __future__ import annotations

import json

from stowage.context_engine.view.reread import is_dedup_answer, read_key, reread_answer

UNCHANGED = json.dumps(
    {
        "status": "unchanged",
        "message": "File unchanged since last read.",
        "path": "a.txt",
        "dedup": True,
        "content_returned": False,
    }
)
BLOCKED = json.dumps(
    {
        "error": "BLOCKED: You have called read_file on this exact region 3 times and the file has NOT changed.",
        "path": "a.txt",
        "already_read": 3,
    }
)
CONTENT = json.dumps({"content": "1|alpha\n2|beta", "total_lines": 2})


def _read(call_id: str, path: str = "a.txt", **extra: object) -> dict:
    arguments = json.dumps({"path": path, **extra})
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": arguments}}],
    }


def _result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


HISTORY = [
    {"role": "user", "content": "read a"},
    _read("r1"),
    _result("r1", CONTENT),
    _read("r2"),
    {"role": "user", "content": "again"},
]
STUBBED = [
    m if m.get("tool_call_id") != "r1" else _result("r1", "[stowage: old output omitted] read_file") for m in HISTORY
]


def test_dedup_answers_are_recognised() -> None:
    assert is_dedup_answer("read_file", UNCHANGED) and is_dedup_answer("read_file", BLOCKED)
    assert not is_dedup_answer("read_file", CONTENT)
    assert not is_dedup_answer("terminal", UNCHANGED)
    assert not is_dedup_answer("read_file", "{not json") and not is_dedup_answer("read_file", None)


def test_regions_use_the_hosts_defaults() -> None:
    assert read_key({"path": "./a.txt"}) == read_key('{"path": "a.txt", "offset": 1, "limit": 500}')
    assert read_key({"path": "a.txt", "offset": 40}) != read_key({"path": "a.txt"})
    assert read_key({"path": ""}) is None and read_key("[1]") is None


def test_a_stubbed_earlier_read_answers_the_reread() -> None:
    assert reread_answer("read_file", {"path": "a.txt"}, UNCHANGED, HISTORY, STUBBED) == CONTENT
    assert reread_answer("read_file", {"path": "a.txt"}, BLOCKED, HISTORY, STUBBED) == CONTENT


def test_a_visible_earlier_read_keeps_the_hosts_answer() -> None:
    assert reread_answer("read_file", {"path": "a.txt"}, UNCHANGED, HISTORY, HISTORY) is None
    assert reread_answer("read_file", {"path": "a.txt"}, UNCHANGED, HISTORY, None) is None  # sent unchanged


def test_other_regions_results_and_compacted_reads_are_left_alone() -> None:
    assert reread_answer("read_file", {"path": "b.txt"}, UNCHANGED, HISTORY, STUBBED) is None
    assert reread_answer("read_file", {"path": "a.txt"}, CONTENT, HISTORY, STUBBED) is None
    compacted = [m for m in HISTORY if m.get("tool_call_id") != "r1" and m.get("tool_calls") is None]
    assert reread_answer("read_file", {"path": "a.txt"}, UNCHANGED, compacted, compacted) is None


def test_an_earlier_dedup_answer_is_skipped_for_the_content_before_it() -> None:
    history = [*HISTORY[:3], _read("r2"), _result("r2", UNCHANGED), _read("r3")]
    sent = [m if m.get("tool_call_id") != "r1" else _result("r1", "stub") for m in history]
    assert reread_answer("read_file", {"path": "a.txt"}, BLOCKED, history, sent) == CONTENT
