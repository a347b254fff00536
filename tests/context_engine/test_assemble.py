"""Phase 4: placing the summary and sanitizing the result."""

from __future__ import annotations

import copy
import itertools
import json

import pytest

from stowage.context_engine.chat.messages import SUMMARY_FLAG, is_real_user_turn, is_summary, message_text
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.compaction.assemble import (
    CONTINUE_NOTE,
    REMOVED_CALL_NOTE,
    SUMMARY_ACK,
    ensure_user_first,
    fix_arguments,
    merge_same_role,
    merge_summary_into,
    pair_tool_calls,
    place_summary,
    sanitize,
    without_summary_flag,
)
from stowage.context_engine.summary.reply import wrap

SUMMARY = wrap("## Goal\nKeep going.")
SYSTEM = {"role": "system", "content": "sys"}


def call(cid, args='{"a": 1}'):
    return {"id": cid, "type": "function", "function": {"name": "t", "arguments": args}}


def with_calls(*ids, content=None):
    return {"role": "assistant", "content": content, "tool_calls": [call(i) for i in ids]}


def res(cid, text="r"):
    return {"role": "tool", "tool_call_id": cid, "content": text}


HEADS = {
    "empty": [],
    "system-only": [SYSTEM],
    "user": [{"role": "user", "content": "first ask"}],
    "system-user-assistant": [SYSTEM, {"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"}],
    "tool-result": [{"role": "user", "content": "first"}, with_calls("h1"), res("h1")],
}
TAILS = {
    "user": [{"role": "user", "content": "newest ask"}, {"role": "assistant", "content": "answer"}],
    "assistant": [{"role": "assistant", "content": "answer"}, {"role": "user", "content": "newest ask"}],
    "assistant-calls": [with_calls("t1"), res("t1"), {"role": "user", "content": "newest ask"}],
    "empty": [],
}


@pytest.mark.parametrize("head_name,tail_name", list(itertools.product(HEADS, TAILS)))
def test_summary_placement_for_every_neighbour_combination(head_name, tail_name):
    head, tail = copy.deepcopy(HEADS[head_name]), copy.deepcopy(TAILS[tail_name])
    out = sanitize(place_summary(head, SUMMARY, tail))
    if tail_name == "empty" and head_name in ("empty", "system-only"):
        # only the summary: it must be a user turn
        assert [m["role"] for m in out if m["role"] != "system"] == ["user"]
    assert validate_messages(out) == [], [str(p) for p in validate_messages(out)]
    summaries = [m for m in out if is_summary(m)]
    assert len(summaries) == 1
    assert "Keep going." in message_text(summaries[0])
    # nothing of head or tail is lost, and user turns are never merged with the summary
    for original in head + tail:
        text = message_text(original)
        if text:
            assert any(text in message_text(m) for m in out)
        if original["role"] == "user":
            assert original in out


def test_role_choice_details():
    u = {"role": "user", "content": "u"}
    a = {"role": "assistant", "content": "a"}
    # after a user, before an assistant: no role fits -> merged into the tail's first message
    out = place_summary([u], SUMMARY, [a])
    assert len(out) == 2 and out[1]["role"] == "assistant" and out[1][SUMMARY_FLAG]
    assert out[1]["content"].startswith(SUMMARY) and out[1]["content"].endswith("\n\na")
    # after an assistant, before an assistant: user summary between
    out = place_summary([u, a], SUMMARY, [dict(a)])
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"] and out[2][SUMMARY_FLAG]
    # after a user, before a user: assistant summary
    out = place_summary([u], SUMMARY, [dict(u)])
    assert [m["role"] for m in out] == ["user", "assistant", "user"] and out[1][SUMMARY_FLAG]
    # a tool result counts as the assistant side
    out = place_summary([u, with_calls("x"), res("x")], SUMMARY, [dict(a)])
    assert out[3]["role"] == "user" and out[3][SUMMARY_FLAG]
    # only a system prompt before and a user right after: never merged into the user's turn,
    # an acknowledgement keeps the alternation and the user's request stays a real user turn
    out = place_summary([SYSTEM], SUMMARY, [dict(u), a])
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert out[1]["content"] == SUMMARY and out[2]["content"] == SUMMARY_ACK and out[3] == u
    assert is_real_user_turn(out[3])
    out = place_summary([u, a], SUMMARY, [dict(u)])
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert out[2][SUMMARY_FLAG] and out[4] == u
    out = place_summary([SYSTEM], SUMMARY, [a])
    assert [m["role"] for m in out] == ["system", "user", "assistant"]


def test_merge_into_multipart_and_empty_content():
    merged = merge_summary_into(
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}],
        },
        SUMMARY,
    )
    assert merged["content"][0] == {"type": "text", "text": SUMMARY} and len(merged["content"]) == 3
    assert merge_summary_into({"role": "assistant", "content": None}, SUMMARY)["content"] == SUMMARY


def test_place_summary_does_not_mutate_inputs():
    head, tail = [{"role": "user", "content": "u"}], [{"role": "assistant", "content": "a"}]
    before = copy.deepcopy((head, tail))
    place_summary(head, SUMMARY, tail)
    assert (head, tail) == before


# -- sanitize ------------------------------------------------------------------------


def test_drops_orphan_results():
    msgs = [
        {"role": "user", "content": "u"},
        res("ghost"),
        {"role": "assistant", "content": "a"},
        with_calls("c1"),
        res("c1"),
        res("c1"),
        res("other"),
    ]
    out = pair_tool_calls(msgs)
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["c1"]
    assert validate_messages(sanitize(msgs)) == []


def test_strips_unanswered_calls_and_notes_empty_assistant():
    msgs = [
        {"role": "user", "content": "u"},
        with_calls("a1", "a2"),
        res("a2"),
        with_calls("b1"),
        {"role": "user", "content": "next"},
    ]
    out = sanitize(msgs)
    assert validate_messages(out) == []
    partial = out[1]
    assert [c["id"] for c in partial["tool_calls"]] == ["a2"]
    removed = out[3]
    assert "tool_calls" not in removed and removed["content"] == REMOVED_CALL_NOTE
    # an assistant that had text keeps it instead of the note
    out = sanitize(
        [{"role": "user", "content": "u"}, with_calls("z", content="Let me check."), {"role": "user", "content": "v"}]
    )
    assert out[1]["content"] == "Let me check." and "tool_calls" not in out[1]
    assert msgs[1]["tool_calls"][0]["id"] == "a1", "input must not be mutated"


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("{broken", {"_stowage_unparsed_arguments": "{broken"}),
        ("[1, 2]", {"_stowage_unparsed_arguments": "[1, 2]"}),
        ("", None),
        ('{"ok": true}', None),
    ],
)
def test_repairs_invalid_json_arguments(raw, expected):
    msgs = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [call("c", raw)]},
        res("c"),
        {"role": "assistant", "content": "done"},
    ]
    out = sanitize(msgs)
    assert validate_messages(out) == []
    args = out[1]["tool_calls"][0]["function"]["arguments"]
    if expected is None:
        assert isinstance(json.loads(args or "{}"), dict)
    else:
        assert json.loads(args) == expected


def test_repairs_dict_arguments_and_bare_calls():
    msgs = [
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "d", "type": "function", "function": {"name": "t", "arguments": {"x": 1}}},
                {"id": "e", "name": "bare", "arguments": "{}"},
            ],
        },
        res("d"),
        res("e"),
        {"role": "assistant", "content": "done"},
    ]
    out = fix_arguments(msgs)
    calls = out[1]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"x": 1}
    assert calls[1]["function"] == {"name": "bare", "arguments": "{}"} and calls[1]["type"] == "function"
    assert validate_messages(sanitize(msgs)) == []


def test_merges_same_role_neighbours_without_losing_text():
    msgs = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "a1"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": [{"type": "text", "text": "three"}]},
        {"role": "user", "content": "four"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None},
    ]
    out = merge_same_role(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"]
    assert out[0]["content"] == "one\n\ntwo" and out[1]["content"] == "a1\n\na2"
    assert out[2]["content"] == [{"type": "text", "text": "three"}, {"type": "text", "text": "four"}]
    assert out[3]["content"] == CONTINUE_NOTE
    assert validate_messages(out) == []


def test_merge_keeps_summary_flag_and_following_tool_calls():
    summary = {"role": "assistant", "content": SUMMARY, SUMMARY_FLAG: True}
    msgs = [{"role": "user", "content": "u"}, summary, with_calls("k", content="calling"), res("k")]
    out = sanitize(msgs)
    assert len(out) == 3 and out[1][SUMMARY_FLAG] and out[1]["tool_calls"][0]["id"] == "k"
    assert SUMMARY in out[1]["content"] and "calling" in out[1]["content"]
    assert validate_messages(out) == []


def test_ensures_user_first():
    msgs = [SYSTEM, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "hi"}]
    out = ensure_user_first(msgs)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[1]["content"] == CONTINUE_NOTE
    assert ensure_user_first([SYSTEM]) == [SYSTEM]
    only_assistant = sanitize([{"role": "assistant", "content": "x"}])
    assert validate_messages(only_assistant) == []


def test_sanitize_drops_non_dicts_and_keeps_valid_lists_identical():
    valid = [
        SYSTEM,
        {"role": "user", "content": "u"},
        with_calls("p", "q"),
        res("q"),
        res("p"),
        {"role": "assistant", "content": "a"},
    ]
    out = sanitize(valid)
    assert out == valid and all(a is b for a, b in zip(out, valid, strict=True))
    assert validate_messages(sanitize([None, "x", *valid])) == []


def test_sanitize_output_always_valid_on_scrambled_input():
    """Random fragments (orphans, unanswered calls, bad JSON, same roles) always come out valid."""
    import random

    rng = random.Random(11)
    counter = itertools.count()

    def fragment():
        kind = rng.randrange(7)
        if kind == 0:
            return [{"role": "user", "content": rng.choice(["u", [{"type": "text", "text": "multi"}]])}]
        if kind == 1:
            return [{"role": "assistant", "content": "a"}]
        ids = [f"c{next(counter)}" for _ in range(rng.randint(1, 3))]
        if kind == 2:  # complete parallel group, results shuffled
            results = [res(i) for i in ids]
            rng.shuffle(results)
            return [with_calls(*ids)] + results
        if kind == 3:  # some results missing
            return [with_calls(*ids)] + [res(i) for i in ids[1:]]
        if kind == 4:  # orphan result
            return [res(f"ghost{next(counter)}")]
        if kind == 5:  # invalid JSON arguments
            return [{"role": "assistant", "content": None, "tool_calls": [call(ids[0], "{nope")]}, res(ids[0])]
        return [res(ids[0]), with_calls(ids[0])]  # result before its call

    for _ in range(500):
        msgs = [m for _ in range(rng.randint(1, 8)) for m in fragment()]
        if rng.random() < 0.5:
            msgs.insert(0, SYSTEM)
        before = copy.deepcopy(msgs)
        out = sanitize(msgs)
        assert msgs == before
        assert validate_messages(out, "openai") == [], (msgs, out)
        if any(m["role"] in ("user", "assistant") for m in msgs):
            assert validate_messages(out) == [], (msgs, out)


def test_sanitize_repairs_what_would_otherwise_abort_every_compaction():
    from stowage.context_engine.compaction.assemble import sanitize

    call = {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "r1"},
        {"role": "system", "content": "late note"},
        {"role": "assistant", "content": None, "tool_calls": [dict(call)]},
        {"role": "tool", "tool_call_id": "a", "content": "r2"},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
    ]
    codes = {p.code for p in validate_messages(messages)}
    assert {"duplicate_call_id", "system_not_first", "empty_message"} <= codes
    fixed = sanitize(messages)
    assert validate_messages(fixed) == []
    assert [m["content"] for m in fixed if m["role"] == "tool"] == ["r1", "r2"]
    assert any(m["role"] == "user" and "late note" in m["content"] for m in fixed)


def test_a_summary_merged_after_a_long_message_is_still_known_by_its_marker():
    """Merged into a long neighbour, the summary's text comes first, where is_summary looks (the flag is not kept)."""
    long = {"role": "user", "content": "an earlier message " * 200}
    (merged,) = merge_same_role([long, {"role": "user", "content": SUMMARY, SUMMARY_FLAG: True}])
    (kept,) = without_summary_flag([merged])
    assert SUMMARY_FLAG not in kept and is_summary(kept)
    assert message_text(kept).startswith(SUMMARY) and "an earlier message" in message_text(kept)
