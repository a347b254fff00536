"""Phase 2: head, tail and the summary window."""

from __future__ import annotations

from stowage.context_engine.chat.messages import SUMMARY_FLAG
from stowage.context_engine.compaction.boundaries import (
    align_backward,
    align_forward,
    budget_tail_start,
    choose_window,
    head_end_index,
    keep_newest_turns,
)


def one(_message) -> int:
    return 1


def u(text="u"):
    return {"role": "user", "content": text}


def a(text="a"):
    return {"role": "assistant", "content": text}


def calls(*ids):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids],
    }


def res(cid):
    return {"role": "tool", "tool_call_id": cid, "content": "r"}


SYSTEM = {"role": "system", "content": "sys"}
SUMMARY = {"role": "user", "content": "[STOWAGE CONTEXT SUMMARY — reference only.]\n\nbody", SUMMARY_FLAG: True}


def test_head_with_and_without_system_prompt():
    msgs = [u(), a(), u(), a(), u(), a()]
    assert head_end_index(msgs, 3) == 3
    assert head_end_index([SYSTEM] + msgs, 3) == 4
    assert head_end_index([SYSTEM, {"role": "developer", "content": "d"}] + msgs, 0) == 2
    assert head_end_index(msgs, 0) == 0
    assert head_end_index(msgs[:2], 10) == 2


def test_head_stops_at_previous_summary():
    msgs = [SYSTEM, SUMMARY, a(), u(), a()]
    assert head_end_index(msgs, 3) == 1
    msgs = [u("first"), SUMMARY, a(), u(), a()]
    assert head_end_index(msgs, 3) == 1
    # a summary recognised by its marker text alone (after a resume: no flag)
    marker_only = {"role": "user", "content": "[STOWAGE CONTEXT SUMMARY — reference only.] body"}
    assert head_end_index([marker_only, a(), u()], 3) == 0


def test_head_never_ends_inside_a_tool_group():
    msgs = [u(), calls("x", "y"), res("x"), res("y"), a(), u(), a()]
    assert head_end_index(msgs, 2) == 4
    assert align_forward(msgs, 2) == 4 and align_forward(msgs, 4) == 4


def test_tail_budget_with_message_floor():
    msgs = [u(), a(), u(), a(), u(), a(), u(), a()]
    # budget of 3 single-token messages
    assert budget_tail_start(msgs, budget_tokens=3, min_messages=1, count=one) == 5
    # the floor wins over a tiny budget
    assert budget_tail_start(msgs, budget_tokens=0, min_messages=4, count=one) == 4
    # a huge budget stops at the floor index
    assert budget_tail_start(msgs, budget_tokens=10_000, min_messages=1, count=one, floor_index=2) == 2


def test_tail_budget_by_size():
    msgs = [u(), a("x" * 1000), u(), a("y" * 10), u("z")]
    size = lambda m: len(m["content"])  # noqa: E731
    assert budget_tail_start(msgs, budget_tokens=20, min_messages=1, count=size) == 2
    assert budget_tail_start(msgs, budget_tokens=2000, min_messages=1, count=size) == 0


def test_tail_never_starts_with_tool_result_parallel_calls():
    msgs = [u(), a(), u(), calls("p", "q", "r"), res("p"), res("q"), res("r"), a("final")]
    # budget for 3 messages would cut between results of the same call
    start = budget_tail_start(msgs, budget_tokens=3, min_messages=1, count=one)
    assert start == 3
    assert msgs[start]["role"] == "assistant" and msgs[start]["tool_calls"]
    assert align_backward(msgs, 5) == 3 and align_backward(msgs, 0) == 0


def test_newest_user_and_assistant_stay_in_tail():
    msgs = [u(), a(), u("newest"), calls("k"), res("k")]
    assert keep_newest_turns(msgs, 4) == 2
    msgs = [u(), a("newest assistant"), u("q"), u("newest user")]
    assert keep_newest_turns(msgs, 3) == 1
    # a summary is not a real user turn and is no anchor
    msgs = [u("real"), a(), SUMMARY, calls("k"), res("k")]
    assert keep_newest_turns(msgs, 4) == 0


def test_choose_window_normal_case():
    msgs = [SYSTEM] + [m for i in range(10) for m in (u(f"u{i}"), a(f"a{i}"))]
    window = choose_window(msgs, protect_first_n=2, tail_budget_tokens=4, tail_min_messages=2, count=one)
    assert window.head_end == 3
    assert window.tail_start == len(msgs) - 4
    assert window.size == len(msgs) - 4 - 3


def test_choose_window_never_splits_tool_groups():
    msgs = [u("go")]
    for i in range(6):
        msgs += [calls(f"c{i}a", f"c{i}b"), res(f"c{i}a"), res(f"c{i}b")]
    msgs += [a("done"), u("next"), calls("z1", "z2"), res("z1"), res("z2")]
    for budget in range(1, len(msgs) + 2):
        for first in range(0, 5):
            window = choose_window(
                msgs, protect_first_n=first, tail_budget_tokens=budget, tail_min_messages=1, count=one
            )
            for cut in (window.head_end, window.tail_start):
                if cut < len(msgs):
                    assert msgs[cut]["role"] != "tool", (budget, first, window)
            if window.size:
                # the newest user turn and assistant are always in the tail
                assert window.tail_start <= len(msgs) - 4


def test_choose_window_empty_when_everything_fits_in_head_and_tail():
    msgs = [u(), a(), u(), a()]
    window = choose_window(msgs, protect_first_n=3, tail_budget_tokens=100, tail_min_messages=2, count=one)
    assert window.size == 0


def test_newest_user_in_head_does_not_block_the_window():
    # one request, then a long stretch of tool work: the request is kept in the head, the work is summarized
    msgs = [u("only request")] + [m for i in range(10) for m in (calls(f"k{i}"), res(f"k{i}"))] + [a("done")]
    window = choose_window(msgs, protect_first_n=3, tail_budget_tokens=3, tail_min_messages=1, count=one)
    assert window.head_end == 3 and window.tail_start == len(msgs) - 3
    # after a first compaction the head decays to nothing: the request still stays out of the window
    window = choose_window(msgs, protect_first_n=0, tail_budget_tokens=3, tail_min_messages=1, count=one)
    assert window.head_end == 1 and window.tail_start == len(msgs) - 3
    with_system = [SYSTEM] + msgs
    window = choose_window(with_system, protect_first_n=0, tail_budget_tokens=3, tail_min_messages=1, count=one)
    assert window.head_end == 2 and with_system[window.head_end]["role"] == "assistant"
    assert keep_newest_turns(msgs, 15, head_end=3) == 15
    assert keep_newest_turns(msgs, 15) == 0


def test_choose_window_after_previous_summary_starts_at_summary():
    msgs = [SYSTEM, SUMMARY] + [m for i in range(6) for m in (a(f"a{i}"), u(f"u{i}"))] + [a("last")]
    window = choose_window(msgs, protect_first_n=3, tail_budget_tokens=2, tail_min_messages=2, count=one)
    assert window.head_end == 1
    assert msgs[window.head_end] is SUMMARY
