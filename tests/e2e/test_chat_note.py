"""A one-line note in the chat when Stowage stores a tool output away, in the real interactive ``hermes chat``.

Hermes 0.19.0 lets a plugin print into its interactive prompt only through
the CLI's own line printer (see ``host/chat_note.py``); ``hermes chat -q``
keeps stdout for the answer, so the note is not printed there.
"""

from __future__ import annotations

import re

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import chat_once
from stowage_dev.terminal import InteractiveChat

from .stowage_session import stowage_home

pytestmark = pytest.mark.e2e

NOTE = re.compile(r"┊ stowage: stored harness_big_output's [\d,]+ tokens as ([0-9a-f]{16}); model got a preview")


def script(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(
        Match.user_turn("HUGE"),
        Reply.tool(ToolCall("harness_big_output", {"chars": 60_000, "token": "HUGE"}, id="call_huge")),
    )
    fake_llm.on(Match.after_tool_result("call_huge"), Reply.say("huge output inspected"))
    fake_llm.on(Match.user_turn("SMALL"), Reply.tool(ToolCall("harness_echo", {"text": "tiny"}, id="call_small")))
    fake_llm.on(Match.after_tool_result("call_small"), Reply.say("small output read"))


def test_the_interactive_chat_says_when_an_output_is_stored_away(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    script(fake_llm)
    with InteractiveChat(home) as chat:
        assert chat.read_until("❯", 120), chat.text[-3000:]
        chat.type("SMALL output please")
        assert chat.read_until("small output read", 120), chat.text[-3000:]
        assert not NOTE.search(chat.text), "a note for an output that was not stored"
        chat.type("HUGE output please")
        assert chat.read_until("huge output inspected", 120), chat.text[-3000:]
        chat.read_until(None, 2)
        screen = chat.text
    notes = NOTE.findall(screen)
    assert len(set(notes)) == 1, screen[-3000:]
    (line,) = {m.group(0) for m in NOTE.finditer(screen)}
    assert len("  " + line) <= 100, line  # one line in a 100-column terminal
    (preview,) = [
        m["content"]
        for m in fake_llm.matching(Match.after_tool_result("call_huge"))[0].messages
        if m.get("tool_call_id") == "call_huge"
    ]
    assert f"handle: {notes[0]}" in preview  # the handle the note names is the one the model got
    assert screen.index(notes[0]) < screen.rindex("huge output inspected")


def test_a_single_query_keeps_stdout_for_the_answer(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    script(fake_llm)
    result = chat_once(home, "HUGE output please", "-Q")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "huge output inspected" in result.stdout
    assert "stowage: stored" not in result.stdout + result.stderr


def test_compress_sizes_in_stowage_summary_match_what_hermes_printed(fake_llm: FakeLLMServer, make_home) -> None:
    """``/compress`` in the interactive chat: ``stowage summary`` reports the sizes on Hermes's own basis."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from .stowage_session import script_warm_up

    home = stowage_home(make_home)
    script_warm_up(fake_llm, 4)
    fake_llm.on(
        Match.summary_request(), Reply.say("## Goal\nInspect the outputs.\n\n## Next Steps\n- go on"), times=None
    )
    with InteractiveChat(home) as chat:
        assert chat.read_until("❯", 120), chat.text[-3000:]
        for i in range(4):
            chat.type(f"WARM-{i} please inspect the big output")
            assert chat.read_until(f"warm {i} done", 120), chat.text[-3000:]
        chat.type("/compress")
        assert chat.read_until("Approx request size", 180), chat.text[-3000:]
        chat.read_until(None, 2)
        printed = re.search(r"Approx request size: ~([\d,]+) → ~([\d,]+) tokens", chat.text)
    assert printed, chat.text[-3000:]
    hermes_before, hermes_after = (int(n.replace(",", "")) for n in printed.groups())
    env = {k: v for k, v in home.env().items() if k != "PYTHONPATH"}
    shown = subprocess.run(
        [str(Path(sys.executable).with_name("stowage")), "summary"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    sizes = re.search(r"tokens\s+([\d,]+) -> ([\d,]+) tokens", shown.stdout)
    assert shown.returncode == 0 and sizes, shown.stdout + shown.stderr
    ours_before, ours_after = (int(n.replace(",", "")) for n in sizes.groups())
    print(f"hermes printed ~{hermes_before:,} -> ~{hermes_after:,}; stowage summary {ours_before:,} -> {ours_after:,}")
    assert ours_before == hermes_before
    # both "after" figures count the system prompt and the tool schemas (each with its own estimator)
    assert abs(ours_after - hermes_after) <= 0.15 * hermes_after, (ours_after, hermes_after)
