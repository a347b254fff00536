"""validate_messages: every problem code, both profiles."""

from __future__ import annotations

import pytest

from stowage.context_engine.chat.validate import is_valid, validate_messages


def codes(messages, provider="strict"):
    return sorted({p.code for p in validate_messages(messages, provider)})


def call(cid, args='{"command": "ls"}', name="terminal"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def result(cid, text="ok"):
    return {"role": "tool", "tool_call_id": cid, "content": text}


U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "hello"}


def test_valid_simple_conversation_both_profiles():
    msgs = [{"role": "system", "content": "sys"}, U, A, {"role": "user", "content": "more"}]
    assert validate_messages(msgs) == []
    assert validate_messages(msgs, "openai") == []
    assert is_valid(msgs)


def test_parallel_tool_calls_accepted():
    msgs = [
        U,
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b"), call("c")]},
        result("b"),
        result("a"),
        result("c"),
        A,
    ]
    assert validate_messages(msgs) == []
    assert validate_messages(msgs, "openai") == []


def test_call_id_alternative_key_accepted():
    msgs = [
        U,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"call_id": "x", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "call_id": "x", "content": "ok"},
        A,
    ]
    assert validate_messages(msgs) == []


def test_orphan_tool_result():
    msgs = [U, A, result("nope"), {"role": "user", "content": "x"}]
    problems = validate_messages(msgs, "openai")
    assert [p.code for p in problems] == ["orphan_tool_result"]
    assert problems[0].index == 2


def test_result_separated_from_its_call_is_orphan_and_call_missing():
    msgs = [
        U,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "user", "content": "interrupt"},
        result("a"),
    ]
    assert codes(msgs, "openai") == ["missing_tool_result", "orphan_tool_result"]


def test_missing_tool_result():
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]}, result("a"), A]
    problems = validate_messages(msgs, "openai")
    assert [p.code for p in problems] == ["missing_tool_result"]
    assert "'b'" in problems[0].detail and problems[0].index == 1


def test_missing_result_at_end_of_list():
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a")]}]
    assert codes(msgs, "openai") == ["missing_tool_result"]


def test_duplicate_call_id():
    msgs = [
        U,
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        result("a"),
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        result("a"),
        A,
    ]
    assert "duplicate_call_id" in codes(msgs, "openai")


@pytest.mark.parametrize("args", ["{not json", "[1, 2]", '"str"', "3"])
def test_bad_arguments_json(args):
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a", args)]}, result("a"), A]
    assert codes(msgs, "openai") == ["bad_arguments_json"]


def test_empty_arguments_are_an_empty_object():
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a", "")]}, result("a"), A]
    assert validate_messages(msgs) == []


def test_tool_call_without_id_and_non_list_tool_calls():
    msgs = [U, {"role": "assistant", "content": "x", "tool_calls": [{"function": {"name": "t", "arguments": "{}"}}]}]
    assert "bad_tool_call" in codes(msgs, "openai")
    msgs = [U, {"role": "assistant", "content": "x", "tool_calls": "nope"}]
    assert "bad_tool_calls" in codes(msgs, "openai")


def test_bad_role_and_not_a_dict_and_not_a_list():
    assert "bad_role" in codes([U, {"role": "robot", "content": "x"}], "openai")
    assert "not_a_dict" in codes([U, "hello"], "openai")
    assert codes("nope") == ["not_a_list"]


def test_unknown_profile_raises():
    with pytest.raises(ValueError):
        validate_messages([U], "anthropic")


def test_same_role_neighbours_strict_only():
    for msgs in ([U, {"role": "user", "content": "again"}], [U, A, {"role": "assistant", "content": "again"}]):
        assert codes(msgs) == ["same_role_neighbours"]
        assert codes(msgs, "openai") == []


def test_tool_results_between_assistants_are_not_same_role():
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, result("a"), A]
    assert codes(msgs) == []


def test_first_not_user():
    msgs = [{"role": "system", "content": "s"}, A, U]
    assert codes(msgs) == ["first_not_user"]
    assert codes(msgs, "openai") == []


def test_no_user_turn():
    assert "no_user_turn" in codes([A])
    assert codes([{"role": "system", "content": "s"}]) == ["no_user_turn"]
    assert codes([]) == ["no_user_turn"]
    assert codes([A], "openai") == []


def test_system_not_first():
    msgs = [U, {"role": "system", "content": "late"}, A]
    assert "system_not_first" in codes(msgs)
    assert codes(msgs, "openai") == []
    # several leading system/developer messages are fine
    assert codes([{"role": "system", "content": "a"}, {"role": "developer", "content": "b"}, U]) == []


@pytest.mark.parametrize("content", [None, "", "   ", []])
def test_empty_user_message(content):
    msgs = [{"role": "user", "content": content}, A]
    assert codes(msgs) == ["empty_message"]
    assert codes(msgs, "openai") == []


def test_empty_assistant_message_without_calls():
    msgs = [U, {"role": "assistant", "content": None}]
    assert codes(msgs) == ["empty_message"]
    # with tool calls an assistant may be empty
    msgs = [U, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, result("a")]
    assert codes(msgs) == []


def test_several_problems_reported_together():
    msgs = [
        A,
        {"role": "assistant", "content": "b", "tool_calls": [call("a", "{bad")]},
        {"role": "system", "content": "late"},
    ]
    found = codes(msgs)
    for code in (
        "first_not_user",
        "same_role_neighbours",
        "bad_arguments_json",
        "missing_tool_result",
        "system_not_first",
        "no_user_turn",
    ):
        assert code in found


def test_problem_str_names_index_and_code():
    problem = validate_messages([U, result("zz")], "openai")[0]
    assert str(problem).startswith("message 1: orphan_tool_result:")
