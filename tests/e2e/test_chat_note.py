"""A one-line note in the chat when Stowage stores a tool output away, in the real interactive ``hermes chat``.

Hermes 0.19.0 lets a plugin print into its interactive prompt only through
the CLI's own line printer (see ``host/chat_note.py``); ``hermes chat -q``
keeps stdout for the answer, so the note is not printed there.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.stowage_session import stowage_home
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import chat_once
from stowage_dev.terminal import InteractiveChat

pytestmark = pytest.mark.e2e

NOTE = re.compile(r"┊ stowage: stored harness_big_output's output \(60,000 chars, ~[\d,]+ tokens\) as ([0-9a-f]{16}); "
                  r"the model sees a preview and reads the rest with stowage_fetch")


def script(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(Match.user_turn("HUGE"), Reply.tool(ToolCall("harness_big_output", {"chars": 60_000, "token": "HUGE"},
                                                              id="call_huge")))
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
    (preview,) = [m["content"] for m in fake_llm.matching(Match.after_tool_result("call_huge"))[0].messages
                  if m.get("tool_call_id") == "call_huge"]
    assert f"handle: {notes[0]}" in preview  # the handle the note names is the one the model got
    assert screen.index(notes[0]) < screen.rindex("huge output inspected")


def test_a_single_query_keeps_stdout_for_the_answer(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    script(fake_llm)
    result = chat_once(home, "HUGE output please", "-Q")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "huge output inspected" in result.stdout
    assert "stowage: stored" not in result.stdout + result.stderr
