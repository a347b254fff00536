"""The newest read of a file the agent edits stays verbatim (view.pin_edited)."""

from __future__ import annotations

import json
from typing import Any

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.context_engine.view.edit_pins import edit_pins, edited_paths, named_paths, read_path_of

from .view_sessions import make, output_index, session, shape


def bash(command: str) -> str:
    return json.dumps({"command": command})


def call(call_id: str, command: str, name: str = "bash") -> dict[str, Any]:
    arguments = command if name != "bash" else bash(command)
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def result(call_id: str, text: str = "x" * 500) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_shell_and_host_reads_name_one_file():
    assert read_path_of("bash", bash("nl -ba django/db/query.py | sed -n '550,600p'")) == "django/db/query.py"
    assert read_path_of("bash", bash("sed -n '1,40p' ./src/a.py")) == "src/a.py"
    assert read_path_of("bash", bash("cat a.py b.py")) is None  # two files: not one read
    assert read_path_of("bash", bash("sed -i 's/a/b/' a.py")) is None  # an edit, not a read
    assert read_path_of("bash", bash("grep -n parse a.py")) is None  # a search
    assert read_path_of("read_file", json.dumps({"path": "src/a.py", "offset": 10})) == "src/a.py"


def test_edits_are_found_in_sed_redirects_python_writes_and_host_tools():
    assert edited_paths("bash", bash("sed -i '18i import os' django/db/query.py")) == {"django/db/query.py"}
    script = "cat <<'EOF' > fix.py\nif a > b.py:\n    open('src/a.py', 'w').write(x)\nEOF\npython fix.py"
    assert edited_paths("bash", bash(script)) == {"fix.py", "src/a.py"}  # `> b.py` inside the here-doc is code
    assert edited_paths("bash", bash("cat src/a.py")) == set()
    patch = {"mode": "patch", "patch": "*** Begin Patch\n*** Update File: src/b.py\n@@\n-x\n+y\n*** End Patch"}
    assert edited_paths("patch", json.dumps(patch)) == {"src/b.py"}
    assert edited_paths("write_file", json.dumps({"path": "./src/c.py", "content": "x"})) == {"src/c.py"}


def test_an_edit_pins_the_newest_read_of_that_file_from_the_editing_message():
    messages = [
        {"role": "user", "content": "fix it"},
        call("r1", "cat django/db/query.py"),  # 1
        result("r1"),  # 2
        call("r2", "nl -ba django/db/query.py | sed -n '10,20p'"),  # 3
        result("r2"),  # 4: the newest read of query.py
        call("o", "cat other.py"),  # 5
        result("o"),  # 6
        call("e", "sed -i 's/a/b/' /testbed/django/db/query.py"),  # 7: an absolute path names the same file
        result("e", ""),
    ]
    assert edit_pins(messages, lambda at: at + 5) == {4: [(7, 12)]}
    assert edit_pins(messages[:7], lambda at: at + 5) == {}  # before the edit: nothing pinned


def test_an_edit_of_a_file_never_read_pins_nothing():
    messages = [call("w", "cat <<'EOF' > new.py\nprint(1)\nEOF"), result("w", ""), call("e", "sed -i 's/1/2/' new.py")]
    assert edit_pins(messages, lambda at: at + 5) == {}


def test_through_the_engine_the_read_of_an_edited_file_stays_verbatim_while_others_are_stubbed(tmp_path):
    messages = session(12, {}, {k: 1 for k in range(2, 12, 2)})  # rounds 2, 4, ... edit src/module_1.py
    pinned = shape(make(tmp_path / "a", pin_edited=True, pin_quoted=False), messages)
    assert pinned[output_index(messages, 1)]["content"] == messages[output_index(messages, 1)]["content"]
    assert all(pinned[output_index(messages, k)]["content"].startswith(VIEW_STUB_PREFIX) for k in (0, 3))
    plain = shape(make(tmp_path / "b", pin_edited=False, pin_quoted=False), messages)
    assert plain[output_index(messages, 1)]["content"].startswith(VIEW_STUB_PREFIX)


def test_with_named_any_call_naming_the_file_pins_its_newest_read():
    messages = [
        call("r", "cat src/frames.py"),  # 0
        result("r"),  # 1
        call("g", "grep -n parse_header src/frames.py && python -m pytest tests/test_frames.py::T"),  # 2
        result("g"),
    ]
    assert edit_pins(messages, lambda at: at + 5) == {}  # a search is no edit
    assert edit_pins(messages, lambda at: at + 5, named=True) == {1: [(2, 7)]}
    assert named_paths("bash", bash("python -m pytest tests/test_frames.py::T")) == {"tests/test_frames.py"}
