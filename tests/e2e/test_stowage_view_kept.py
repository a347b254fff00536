"""What the lean view keeps of the outputs the agent works with, through the real host.

A source file is read with the host's ``read_file``; big harness outputs
follow, so the read leaves the hot zone and a view step stubs the old outputs:

* with ``view.stub_lines_chars`` the read's stub carries its ``def`` /
  ``class`` lines (what the agent quotes) while the harness outputs become
  plain one-line stubs;
* with ``view.pin_edited`` a ``patch`` of the file keeps its read verbatim
  while the outputs around it become stubs; without it the read is stubbed too
  (quote pins off: the patch quotes the read, which would pin it as well; the
  pin lasts 12 model turns, longer than the session after the edit); with
  ``view.pin_named`` a search in the file keeps it verbatim as well.
"""

from __future__ import annotations

from typing import Any

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import OUTPUT_CHARS, assert_valid_request, stowage_home

pytestmark = pytest.mark.e2e

VIEW = {"hot_tokens": 1000, "step_tokens": 1000, "pin_turns": 4}
SIGNATURE = "def parse_header(frame, strict=False):"
SOURCE = "\n".join(
    [
        "import struct",
        "",
        "class FrameReader:",
        *[f"    offset_{i} = struct.calcsize('<I') * {i}  # field {i} of the frame header" for i in range(60)],
        "",
        SIGNATURE,
        *[f"    value_{i} = frame[{i}] ^ 0x{i:02x}  # byte {i} of the decoded header" for i in range(60)],
        "    return value_0",
    ]
)


def _session(
    fake_llm: FakeLLMServer, make_home, view: dict[str, Any], *, edit: bool, search: bool = False
) -> dict[str, str]:
    """READ the source, optionally EDIT or SEARCH it, then four big outputs; the tool contents of the last request."""
    home = stowage_home(make_home, config={"stowage": {"view": {**VIEW, **view}}})
    source = home.work_dir / "frames.py"
    source.write_text(SOURCE + "\n")
    fake_llm.on(Match.user_turn("READ"), Reply.tool(ToolCall("read_file", {"path": str(source)}, id="call_read")))
    fake_llm.on(Match.after_tool_result("call_read"), Reply.say("read it"))
    scenario = Scenario(cli_task_id=True).turn("READ the frame reader")
    if edit:
        change = {
            "mode": "replace",
            "path": str(source),
            "old_string": "    return value_0",
            "new_string": "    return value_1",
        }
        fake_llm.on(Match.user_turn("EDIT"), Reply.tool(ToolCall("patch", change, id="call_edit")))
        fake_llm.on(Match.after_tool_result("call_edit"), Reply.say("edited"))
        scenario.turn("EDIT the return value")
    if search:
        query = {"pattern": "parse_header", "path": str(source)}
        fake_llm.on(Match.user_turn("SEARCH"), Reply.tool(ToolCall("search_files", query, id="call_search")))
        fake_llm.on(Match.after_tool_result("call_search"), Reply.say("found"))
        scenario.turn("SEARCH the frame reader")
    for i in range(4):
        call_id = f"call_big_{i}"
        fake_llm.on(
            Match.user_turn(f"BIG-{i} "),
            Reply.tool(ToolCall("harness_big_output", {"chars": OUTPUT_CHARS, "token": f"BIG{i}"}, id=call_id)),
        )
        fake_llm.on(Match.after_tool_result(call_id), Reply.say(f"big {i} inspected"))
        scenario.turn(f"BIG-{i} more output")
    run_scenario(home, scenario, check=True)
    for request in fake_llm.main_requests():
        assert_valid_request(request)
    last = fake_llm.last_main_request()
    return {m["tool_call_id"]: m["content"] for m in last.messages if m.get("role") == "tool"}


def test_the_stub_of_a_file_read_carries_its_definition_lines_while_other_stubs_stay_one_line(
    fake_llm: FakeLLMServer, make_home
) -> None:
    last = _session(fake_llm, make_home, {"stub_lines_chars": 400}, edit=False)
    read = last["call_read"]
    assert read.startswith(VIEW_STUB_PREFIX), read[:200]
    kept = read.splitlines()[1:]
    assert kept[0] == "definitions (3):" and any(line.endswith(f"|{SIGNATURE}") for line in kept), read
    assert "class FrameReader:" in read and "import struct" in read and "value_7" not in read  # not the body
    assert last["call_big_0"].startswith(VIEW_STUB_PREFIX) and "\n" not in last["call_big_0"]  # nothing to keep


def test_a_file_the_agent_edits_keeps_its_read_verbatim_while_older_outputs_become_stubs(
    fake_llm: FakeLLMServer, make_home
) -> None:
    last = _session(fake_llm, make_home, {"pin_edited": True, "pin_quoted": False, "pin_turns": 12}, edit=True)
    assert SIGNATURE in last["call_read"] and not last["call_read"].startswith(VIEW_STUB_PREFIX)
    assert last["call_big_0"].startswith(VIEW_STUB_PREFIX)


def test_without_edit_pins_the_read_of_the_edited_file_is_stubbed(fake_llm: FakeLLMServer, make_home) -> None:
    last = _session(fake_llm, make_home, {"pin_edited": False, "pin_quoted": False, "pin_turns": 12}, edit=True)
    assert last["call_read"].startswith(VIEW_STUB_PREFIX) and last["call_big_0"].startswith(VIEW_STUB_PREFIX)


def test_with_named_pins_a_search_in_the_file_keeps_its_read_verbatim(fake_llm: FakeLLMServer, make_home) -> None:
    view = {"pin_edited": True, "pin_named": True, "pin_quoted": False, "pin_turns": 12}
    last = _session(fake_llm, make_home, view, edit=False, search=True)
    assert SIGNATURE in last["call_read"] and not last["call_read"].startswith(VIEW_STUB_PREFIX)
    assert last["call_big_0"].startswith(VIEW_STUB_PREFIX)
