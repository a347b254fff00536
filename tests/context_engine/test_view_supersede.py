"""Outputs a later call supersedes: the same call again, or a read of the whole file."""

from __future__ import annotations

import json
from typing import Any

from stowage.context_engine.view.supersede import superseded


def step(cid: str, command: str, output: str = "out") -> list[dict[str, Any]]:
    arguments = json.dumps({"command": command})
    call = {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": arguments}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": cid, "content": output},
    ]


def test_the_same_call_again_and_a_whole_file_read_supersede_but_another_region_does_not():
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "fix it"},
        *step("a", "python  reproduce.py"),  # 1, 2
        *step("b", "sed -n 1,40p src/app.py"),  # 3, 4
        *step("c", "sed -n 50,80p src/app.py"),  # 5, 6: another region, supersedes nothing
        *step("d", "python reproduce.py"),  # 7, 8: the same call (whitespace aside)
        *step("e", "cat src/app.py"),  # 9, 10: the whole file
    ]
    found = superseded(messages)
    assert sorted(found) == [2, 4, 6]
    assert found[2].at == 8 and found[2].by == "the same call, run again later"  # when the newer output came
    assert found[4].at == 10 and found[6].at == 10 and "src/app.py" in found[4].by
    assert superseded(messages[:9]).keys() == {2}  # only what the history so far says


def test_a_newer_output_cut_short_by_the_harness_supersedes_nothing():
    cut = "<output_head>\nclass A:\n</output_head>\n<elided_chars>\n9000 characters elided\n</elided_chars>"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "fix it"},
        *step("a", "sed -n 400,460p src/app.py"),  # 1, 2
        *step("b", "cat src/app.py", cut),  # 3, 4: the whole file, but only its head and tail came back
        *step("c", "sed -n 400,460p src/app.py", cut),  # 5, 6: the same call, cut short
    ]
    assert superseded(messages) == {}
    messages += step("d", "cat src/app.py")  # 7, 8: whole this time
    assert sorted(superseded(messages)) == [2, 4, 6]


def test_with_disposable_a_listing_or_an_install_log_is_superseded_by_the_next_call_and_says_what_it_was():
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "fix it"},
        *step("a", "find . -name '*.py'"),  # 1, 2: a listing
        *step("b", "pip install -e ."),  # 3, 4: an install log
        *step("c", "ls -la src && cat src/app.py"),  # 5, 6: more than a listing: kept
        *step("d", "python -m pytest tests"),  # 7, 8: a run, not disposable
        *step("e", "grep -n foo src/app.py"),  # 9, 10
    ]
    assert superseded(messages) == {}  # off: nothing of these is superseded
    found = superseded(messages, disposable=True)
    assert sorted(found) == [2, 4]
    assert found[2].at == 3 and found[2].by == "the calls after it (a listing)"
    assert found[4].at == 5 and found[4].by == "the calls after it (an install log)"
    assert 4 not in superseded(messages[:5], disposable=True) or superseded(messages[:5], disposable=True)[4].at == 5
    assert superseded(messages[:4], disposable=True) == {2: found[2]}  # the install log: no call after it yet
