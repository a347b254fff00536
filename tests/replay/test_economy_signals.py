"""The bench's classification of needed-while-hidden outputs: which signal of the history would have kept each."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

# the bench's module, loaded by path (bench/ is no package, and tests never edit sys.path)
_spec = importlib.util.spec_from_file_location(
    "economy_signals", Path(__file__).resolve().parents[2] / "bench" / "economy_signals.py"
)
assert _spec and _spec.loader
_signals = importlib.util.module_from_spec(_spec)
sys.modules["economy_signals"] = _signals  # dataclasses look their module up by name
_spec.loader.exec_module(_signals)
SessionIndex, table = _signals.SessionIndex, _signals.table


def call(cid: str, command: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}


def step(cid: str, command: str, output: str, text: str = "") -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": text, "tool_calls": [call(cid, command)]},
        {"role": "tool", "tool_call_id": cid, "content": output},
    ]


SOURCE = "def parse_header(frame, strict_mode=False):\n    return frame.split(HEADER_SEPARATOR)\n"
SESSION: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the parser."},
    *step("r1", "cat src/frames.py", SOURCE),  # 1, 2
    *step("t1", "pytest -q tests", "FAILED tests/test_frames.py::test_strict_header"),  # 3, 4
    *step("t2", "pytest -q tests", "FAILED tests/test_frames.py::test_strict_header again"),  # 5, 6
    *step("g1", "grep -n strict_mode src/other.py", "12: strict_mode = True", "Look at parse_header."),  # 7, 8
    *step("e1", "sed -i 's/HEADER_SEPARATOR/SEP/' src/frames.py", ""),  # 9, 10: edits the file r1 read
    *step("l1", "ls", "README"),  # 11, 12
]


def test_the_read_of_a_file_edited_before_the_use_holds_edited_named_quoted_and_newest_read():
    index = SessionIndex(SESSION, (), frozenset())
    assert index.assistants == [1, 3, 5, 7, 9, 11]
    case = index.classify({"call_id": "r1", "request": 5, "where": "collapsed"})  # used by the ls message
    assert case["signals"] == ["edited", "named", "quoted", "newest read"] and case["primary"] == "edited"
    assert case["kind"] == "definitions" and case["path"] == "src/frames.py" and case["superseded_by"] == ""
    assert case["assistant_turns_since_output"] == 4 and case["assistant_turns_since_last_quote"] == 1


def test_an_older_run_of_a_repeated_command_is_superseded_and_the_newest_run_holds_newest_rerun():
    index = SessionIndex(SESSION, (), frozenset())
    older = index.classify({"call_id": "t1", "request": 4, "where": "stubbed"})
    assert older["superseded_by"] == "a newer run of the same command" and older["primary"] == "none"
    newest = index.classify({"call_id": "t2", "request": 4, "where": "stubbed"})
    assert newest["signals"] == ["newest rerun"] and newest["superseded_by"] == ""
    rows = table([older, newest])
    assert rows[2] == "| stubbed | 2 | 0 | 0 | 0 | 0 | 1 | 1 |"
    assert "superseded before the use: 1" in rows


def test_common_vocabulary_is_no_quote():
    index = SessionIndex(SESSION, (), frozenset({"parse_header"}))
    case = index.classify({"call_id": "r1", "request": 3, "where": "stubbed"})  # before the edit: only the quote
    assert "quoted" not in case["signals"] and case["primary"] == "newest read"
