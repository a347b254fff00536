"""Phase 1: pruning old tool outputs, images and oversized arguments."""

from __future__ import annotations

import copy
import json

from stowage.context_engine.chat.stubs import (
    DUPLICATE_PREFIX,
    PRUNED_PREFIX,
    PrunedOutput,
    argument_gist,
    default_stub,
    is_stub,
    outcome_of,
    shrink_json_arguments,
)
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.compaction.prune import IMAGE_PLACEHOLDER, PruneSettings, prune

LONG_LOG = "\n".join(f"line {i}: compiling module_{i}.c ... ok" for i in range(80))
TRACEBACK = (
    "collecting tests\nrunning 12 tests\n"
    + "test ok\n" * 40
    + "Traceback (most recent call last):\nValueError: bad parser state at token 17\n"
)
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBOR" * 100}}


def call(cid, name="terminal", args=None):
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args or {})},
    }


def history():
    """user, assistant(2 parallel calls), 2 results, assistant, user, assistant(call), result, assistant."""
    return [
        {"role": "user", "content": "build the project"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("c1", "terminal", {"command": "make all", "timeout": 600}),
                call("c2", "read_file", {"path": "src/main.c"}),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"output": LONG_LOG, "exit_code": 2})},
        {"role": "tool", "tool_call_id": "c2", "content": "int main() {}"},
        {"role": "assistant", "content": "The build failed."},
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "terminal", {"command": "pytest -q"})]},
        {"role": "tool", "tool_call_id": "c3", "content": TRACEBACK},
        {"role": "assistant", "content": "A test fails."},
    ]


def test_old_results_become_informative_stubs_and_tail_is_untouched():
    msgs = history()
    before = copy.deepcopy(msgs)
    result = prune(msgs, protect_from=5)
    assert msgs == before, "input must not be mutated"
    out = result.messages
    assert out is not msgs
    stub = out[2]["content"]
    assert stub.startswith(PRUNED_PREFIX) and is_stub(stub)
    assert "terminal(" in stub and 'command="make all"' in stub and "timeout=" in stub and "600" in stub
    assert "exit_code 2" in stub
    size = len(msgs[2]["content"])
    assert f"{size:,} chars, 1 line" in stub and "1 lines" not in stub
    assert out[2]["tool_call_id"] == "c1" and out[2]["role"] == "tool"
    # short result kept verbatim (the very same object)
    assert out[3] is msgs[3]
    # inside the protected tail nothing changes, even a long output
    for index in range(5, len(msgs)):
        assert out[index] is msgs[index]
    assert [p.tool_call_id for p in result.pruned] == ["c1"]
    assert result.pruned[0].tool_name == "terminal" and result.pruned[0].index == 2
    assert result.chars_saved == size - len(stub)
    assert result.changed
    assert validate_messages(out) == []


def test_error_line_is_the_outcome():
    msgs = history()
    out = prune(msgs, protect_from=len(msgs)).messages
    stub = out[7]["content"]
    assert 'terminal(command="pytest -q")' in stub
    assert "error: Traceback (most recent call last):" in stub


def test_outcome_variants():
    assert outcome_of(json.dumps({"returncode": 0, "stdout": "x"})) == "returncode 0"
    assert outcome_of(json.dumps({"error": "rate limited\nretry later"})) == "error: rate limited retry later"
    assert outcome_of(json.dumps({"success": False})) == "success=false"
    assert outcome_of("all good\nnothing to see") == "ok"
    assert outcome_of("step 1\nfatal: not a git repository\nmore") == "error: fatal: not a git repository"


def test_argument_gist_handles_odd_arguments():
    assert argument_gist("") == ""
    assert argument_gist("{not json") == "{not json"
    assert argument_gist("[1, 2]") == "[1, 2]"
    gist = argument_gist(json.dumps({"content": "x" * 500, "path": "a.py"}))
    assert len(gist) <= 160 and 'path="a.py"' in gist


def test_short_results_kept_and_min_chars_respected():
    msgs = history()
    result = prune(msgs, protect_from=len(msgs), settings=PruneSettings(min_chars=10_000))
    assert result.pruned == [] and not result.changed
    assert all(a is b for a, b in zip(result.messages, msgs, strict=True))


def test_identical_outputs_deduplicated_older_names_newer_call():
    same = LONG_LOG
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("a1", args={"command": "cat build.log"})]},
        {"role": "tool", "tool_call_id": "a1", "content": same},
        {"role": "assistant", "content": None, "tool_calls": [call("a2", args={"command": "cat build.log"})]},
        {"role": "tool", "tool_call_id": "a2", "content": same},
        {"role": "assistant", "content": None, "tool_calls": [call("a3", args={"command": "cat build.log"})]},
        {"role": "tool", "tool_call_id": "a3", "content": same},
        {"role": "assistant", "content": "done"},
    ]
    result = prune(msgs, protect_from=5)  # a3 in the tail
    out = result.messages
    for index in (2, 4):
        assert out[index]["content"].startswith(DUPLICATE_PREFIX)
        assert "a3" in out[index]["content"]
    assert out[6] is msgs[6]
    assert [p.duplicate_of_call_id for p in result.pruned] == ["a3", "a3"]
    # all outside the tail: the newest copy gets a normal stub, the older ones point at it
    out = prune(msgs, protect_from=len(msgs)).messages
    assert out[2]["content"].startswith(DUPLICATE_PREFIX) and "a3" in out[2]["content"]
    assert out[6]["content"].startswith(PRUNED_PREFIX)
    assert validate_messages(out) == []


def test_images_outside_tail_replaced_but_newest_user_image_kept():
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "what is in this picture?"}, IMAGE]},
        {"role": "assistant", "content": "a cat"},
        {"role": "user", "content": [{"type": "text", "text": "and this one?"}, IMAGE]},
        {"role": "assistant", "content": "a dog"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "welcome"},
    ]
    result = prune(msgs, protect_from=4, keep_images_at=frozenset({2}))
    out = result.messages
    assert out[0]["content"] == [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "text", "text": IMAGE_PLACEHOLDER},
    ]
    assert out[2] is msgs[2]
    assert result.images_removed == 1 and result.changed
    assert msgs[0]["content"][1] is IMAGE  # input untouched
    assert validate_messages(out) == []


def test_a_removed_image_is_handed_to_the_keeper_and_replaced_by_what_it_returns():
    kept: list = []

    def keep(part):
        kept.append(part)
        return f"[stowage: image removed from older context; stored under handle {len(kept):016x}]"

    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "two pictures"}, IMAGE, IMAGE]},
        {"role": "assistant", "content": "two cats"},
        {"role": "user", "content": "thanks"},
    ]
    result = prune(msgs, protect_from=2, keep_part=keep)
    assert kept == [IMAGE, IMAGE] and result.images_removed == 2
    assert [p["text"] for p in result.messages[0]["content"][1:]] == [
        "[stowage: image removed from older context; stored under handle 0000000000000001]",
        "[stowage: image removed from older context; stored under handle 0000000000000002]",
    ]
    assert msgs[0]["content"][1] is IMAGE and validate_messages(result.messages) == []


def test_images_inside_tail_kept():
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "see"}, IMAGE]},
        {"role": "assistant", "content": "ok"},
    ]
    result = prune(msgs, protect_from=0)
    assert result.messages[0] is msgs[0] and result.images_removed == 0


def test_oversized_arguments_shrunk_to_valid_json():
    big = {"path": "src/big.py", "content": "x = 1\n" * 2000, "items": list(range(100)), "nested": {"s": "y" * 3000}}
    msgs = [
        {"role": "user", "content": "write it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("w1", "write_file", big), call("w2", "terminal", {"command": "ls"})],
        },
        {"role": "tool", "tool_call_id": "w1", "content": "written"},
        {"role": "tool", "tool_call_id": "w2", "content": "a b"},
        {"role": "assistant", "content": "done"},
    ]
    before = copy.deepcopy(msgs)
    result = prune(msgs, protect_from=4, settings=PruneSettings(max_args_chars=500))
    assert msgs == before
    calls = result.messages[1]["tool_calls"]
    shrunk = calls[0]["function"]["arguments"]
    assert len(shrunk) <= 500
    parsed = json.loads(shrunk)
    assert parsed["path"] == "src/big.py" and isinstance(parsed["nested"], dict)
    assert len(parsed["items"]) == 21  # 20 kept and a note
    assert calls[0]["id"] == "w1" and calls[0]["function"]["name"] == "write_file"
    assert calls[1] is msgs[1]["tool_calls"][1]
    assert result.arguments_shrunk == 1
    assert validate_messages(result.messages) == []


def test_unparseable_oversized_arguments_become_valid_json_object():
    text = '{"command": "echo ' + "z" * 2000  # truncated by the model, not JSON
    shrunk = shrink_json_arguments(text, 500)
    parsed = json.loads(shrunk)
    assert isinstance(parsed, dict) and parsed["_stowage_truncated_arguments"].startswith('{"command": "echo')
    assert len(shrunk) <= 500
    msgs = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call("b1", args=text)]},
        {"role": "tool", "tool_call_id": "b1", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    out = prune(msgs, protect_from=3).messages
    assert validate_messages(out) == []


def test_arguments_inside_tail_not_shrunk():
    msgs = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call("b1", args={"s": "q" * 5000})]},
        {"role": "tool", "tool_call_id": "b1", "content": "ok"},
    ]
    result = prune(msgs, protect_from=1)
    assert result.messages[1] is msgs[1] and result.arguments_shrunk == 0


def test_custom_renderer_is_used():
    seen: list[PrunedOutput] = []

    def render(output: PrunedOutput) -> str:
        seen.append(output)
        return f"[stowage: tool output stored] handle=blob:{output.tool_call_id}"

    msgs = history()
    out = prune(msgs, protect_from=len(msgs), render=render).messages
    assert out[2]["content"] == "[stowage: tool output stored] handle=blob:c1"
    assert out[7]["content"] == "[stowage: tool output stored] handle=blob:c3"
    assert {o.tool_call_id for o in seen} == {"c1", "c3"}
    c1 = next(o for o in seen if o.tool_call_id == "c1")
    assert c1.content == msgs[2]["content"] and json.loads(c1.arguments)["command"] == "make all"
    # the stored-handle text is itself a stub: never pruned again
    again = prune(out, protect_from=len(out), render=render)
    assert again.pruned == [] and len(seen) == 2


def test_renderer_longer_than_output_keeps_output():
    msgs = history()
    out = prune(msgs, protect_from=len(msgs), render=lambda o: "x" * (len(o.content) + 1)).messages
    assert out[2] is msgs[2]


def test_never_prunes_a_stub_twice():
    msgs = history()
    first = prune(msgs, protect_from=len(msgs), settings=PruneSettings(min_chars=20))
    assert first.pruned
    second = prune(first.messages, protect_from=len(msgs), settings=PruneSettings(min_chars=20))
    assert second.pruned == [] and not second.changed
    assert all(a is b for a, b in zip(second.messages, first.messages, strict=True))


def test_default_stub_duplicate_wording():
    text = default_stub(PrunedOutput(3, "x1", "grep", '{"pattern": "TODO"}', "a\nb\nc", duplicate_of_call_id="x9"))
    assert text.startswith(DUPLICATE_PREFIX) and "x9" in text and 'grep(pattern="TODO")' in text
    assert "5 chars, 3 lines" in text


def test_tool_name_from_result_when_call_is_missing():
    msgs = [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "ghost", "name": "web_search", "content": LONG_LOG},
    ]
    out = prune(msgs, protect_from=2).messages
    assert "web_search(" in out[1]["content"]


def test_protect_from_out_of_range_is_clamped():
    msgs = history()
    result = prune(msgs, protect_from=10_000)
    assert len(result.messages) == len(msgs)
    assert prune(msgs, protect_from=-5).pruned == []


def test_outcome_of_a_long_failure_is_read_near_its_end():
    frames = "    more context line here\n" * 20
    output = (
        "collected 3 items\n"
        + "        x = helper()\n" * 40
        + "Traceback (most recent call last):\n"
        + frames
        + "E       AssertionError: expected 3, got 4\n\ntests/test_x.py:12: AssertionError\n"
        + "FAILED tests/test_x.py::test_parse - AssertionError: expected 3, got 4\n"
        + "=== 1 failed, 2 passed in 0.31s ===\n"
    )
    # the specific line near the end, not the "Traceback" header further up
    assert outcome_of(output) == "error: E       AssertionError: expected 3, got 4"


def test_every_stub_is_one_family_and_stubs_of_earlier_versions_are_never_pruned_again():
    from stowage.context_engine.chat.markers import LEGACY_STUB_PREFIXES, STORED_PREFIX, VIEW_STUB_PREFIX

    assert all(p.startswith("[stowage: output ") for p in (PRUNED_PREFIX, DUPLICATE_PREFIX, STORED_PREFIX))
    assert VIEW_STUB_PREFIX.startswith("[stowage: output ")
    for prefix in LEGACY_STUB_PREFIXES:
        old = f"{prefix} terminal() -> ok; 9,000 chars, 1 line; handle 3f2a9c0d1e2b4a5f " + "x" * 300
        msgs = [
            {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": old},
            {"role": "user", "content": "go"},
        ]
        result = prune(msgs, protect_from=2)
        assert is_stub(old) and result.messages[1] is msgs[1] and not result.pruned
