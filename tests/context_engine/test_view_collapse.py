"""Settled tool steps sent as one line each (``view/collapse.py``): the pure functions.

Runs form only of adjacent whole steps inside one user turn, settled by the
same plan step; the run's last step is sent as it was shaped, with its calls and
results, so every call keeps its result; a line's handle is what ``stored``
returned, and an output that could not be stored is quoted whole.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from stowage.context_engine.chat.markers import BlobKind
from stowage.context_engine.chat.stubs import StubHandle
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.view.collapse import (
    CALL_CHARS,
    COLLAPSE_MARK,
    INLINE_OUTPUT_CHARS,
    MIN_RUN,
    Step,
    collapse_run,
    collapsible_message,
    runs,
    settled_steps,
)

Message = dict[str, Any]


def call(cid: str, command: str, name: str = "terminal") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps({"command": command})}}


def output_text(cid: str, chars: int = 2400) -> str:
    return "".join(f"{cid} line {i} of the output\n" for i in range(chars // 24 + 1))[:chars]


def step(n: int, *, calls: int = 1, chars: int = 2400, content: Any = None) -> list[Message]:
    """An assistant message with ``calls`` parallel calls ``c<n>`` / ``c<n>b`` ... and their results."""
    ids = [f"c{n}" + "abcdef"[i - 1] if i else f"c{n}" for i in range(calls)]
    assistant: Message = {
        "role": "assistant",
        "content": f"step {n}: looking at part {n}" if content is None else content,
        "tool_calls": [call(cid, f"cat part_{cid}.py") for cid in ids],
    }
    return [assistant, *({"role": "tool", "tool_call_id": cid, "content": output_text(cid, chars)} for cid in ids)]


def turn(first: int, count: int, **kwargs: Any) -> list[Message]:
    return [m for n in range(first, first + count) for m in step(n, **kwargs)]


HEAD: list[Message] = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Fix the parser."}]


class Store:
    """A ``stored`` callback that records what the collapse kept; ``fail`` refuses outputs."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.kept: dict[str, tuple[str, BlobKind, str, str]] = {}

    def __call__(self, text: str, kind: BlobKind, tool: str, arguments: str) -> str | None:
        if self.fail and kind == BlobKind.OUTPUT:
            return None
        handle = f"{len(self.kept):016x}"
        self.kept[handle] = (text, kind, tool, arguments)
        return handle


def everything(_: int) -> bool:
    return True


def spans(steps: list[Step]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in steps]


# -- settled_steps -------------------------------------------------------------------


def test_settled_steps_are_whole_steps_wholly_before_the_settled_boundary():
    messages = HEAD + turn(0, 4) + [{"role": "user", "content": "go on"}]
    assert spans(settled_steps(messages, len(messages), everything)) == [(2, 4), (4, 6), (6, 8), (8, 10)]
    assert spans(settled_steps(messages, 7, everything)) == [(2, 4), (4, 6)]  # (6, 8) straddles the boundary


def test_a_step_with_a_result_missing_or_a_message_not_collapsible_is_not_settled():
    messages = HEAD + turn(0, 4)
    del messages[5]  # c1's result is gone
    assert spans(settled_steps(messages, len(messages), everything)) == [(2, 4), (5, 7), (7, 9)]
    full = HEAD + turn(0, 4)
    assert spans(settled_steps(full, len(full), lambda i: i != 7)) == [(2, 4), (4, 6), (8, 10)]


def test_a_step_of_parallel_calls_ends_after_its_last_result():
    messages = HEAD + step(0) + step(1, calls=3) + step(2)
    assert spans(settled_steps(messages, len(messages), everything)) == [(2, 4), (4, 8), (8, 10)]


# -- runs ----------------------------------------------------------------------------


def test_adjacent_steps_settled_by_one_plan_step_make_one_run():
    steps = [Step(2 + 2 * n, 4 + 2 * n) for n in range(5)]
    assert runs(steps, [20]) == [steps]


def test_fewer_than_min_run_steps_are_left_alone():
    steps = [Step(2 + 2 * n, 4 + 2 * n) for n in range(MIN_RUN - 1)]
    assert runs(steps, [20]) == []
    assert runs([*steps, Step(steps[-1].end, steps[-1].end + 2)], [20]) != []


def test_a_user_message_an_answer_or_a_pinned_step_between_steps_breaks_the_run():
    # four steps, a user message (or an answer without calls), four more steps
    for between in ({"role": "user", "content": "and now?"}, {"role": "assistant", "content": "Done with it."}):
        messages = HEAD + turn(0, 4) + [between] + turn(4, 4)
        got = runs(settled_steps(messages, len(messages), everything), [len(messages)])
        assert [spans(run) for run in got] == [
            [(2, 4), (4, 6), (6, 8), (8, 10)],
            [(11, 13), (13, 15), (15, 17), (17, 19)],
        ]
    # a pinned output (index 7, step 2's result) keeps its step whole: 2 steps before it, 3 after
    messages = HEAD + turn(0, 6)
    got = runs(settled_steps(messages, len(messages), lambda i: i != 7), [len(messages)])
    assert [spans(run) for run in got] == [[(8, 10), (10, 12), (12, 14)]]


def test_steps_settled_by_different_plan_steps_are_different_runs():
    steps = [Step(2 + 2 * n, 4 + 2 * n) for n in range(7)]  # ends 4, 6, ..., 16
    got = runs(steps, [8, 16])  # the first plan step settled the steps ending by 8, the second the rest
    assert [spans(run) for run in got] == [[(2, 4), (4, 6), (6, 8)], [(8, 10), (10, 12), (12, 14), (14, 16)]]
    assert runs(steps, [6, 16]) == [steps[2:]]  # two steps settled first: too few to collapse


# -- collapse_run --------------------------------------------------------------------


def test_a_run_is_one_message_listing_the_earlier_steps_then_the_last_step_as_shaped():
    history = HEAD + turn(0, 3) + turn(3, 1, calls=2)
    shaped = copy.deepcopy(history)
    shaped[-1]["content"] = "[stub of c3a]"  # what the view made of the last step stays
    run = settled_steps(history, len(history), everything)
    store = Store()
    before = copy.deepcopy(history), copy.deepcopy(shaped)
    sent = collapse_run(shaped, history, run, store)
    assert (history, shaped) == before  # neither list is changed
    head, *results = sent
    assert results == shaped[-2:] and head["tool_calls"] == history[8]["tool_calls"]
    lines = head["content"].splitlines()
    assert lines[0].startswith(COLLAPSE_MARK) and lines[-2] == "[stowage: end of the earlier steps]"
    assert lines[-1] == "step 3: looking at part 3"  # the last step's own text after the list
    assert [line.split(":")[0] for line in lines[1:-2]] == ["1. terminal", "2. terminal", "3. terminal"]
    for number, line in enumerate(lines[1:-2]):
        cid = f"c{number}"
        assert line.startswith(f"{number + 1}. terminal: cat part_{cid}.py -> ok, 2,400 chars, handle ")
        handle = line.rsplit(" ", 1)[1]
        assert store.kept[handle] == (
            output_text(cid),
            BlobKind.OUTPUT,
            "terminal",
            json.dumps({"command": f"cat part_{cid}.py"}),
        )
    reasoning = [text for text, kind, *_ in store.kept.values() if kind == BlobKind.REASONING]
    assert reasoning == [f"step {n}: looking at part {n}" for n in range(3)]  # findable with stowage_grep
    assert validate_messages(HEAD[1:] + sent, "strict") == []


def test_parallel_calls_of_an_earlier_step_get_a_line_each_under_one_number():
    history = HEAD + turn(0, 1, calls=3) + turn(1, 2)
    run = settled_steps(history, len(history), everything)
    lines = collapse_run(history, history, run, Store())[0]["content"].splitlines()[1:-2]
    assert [line.split(":")[0] for line in lines] == ["1. terminal", "1. terminal", "1. terminal", "2. terminal"]
    assert [line.split(": ", 1)[1].split(" ->")[0] for line in lines[:3]] == [
        "cat part_c0.py",
        "cat part_c0a.py",
        "cat part_c0b.py",
    ]


def test_short_and_empty_outputs_are_quoted_in_their_line():
    history = HEAD + turn(0, 3, chars=INLINE_OUTPUT_CHARS)
    history[3]["content"] = "  exit 0\n  all good  "
    history[5]["content"] = ""
    store = Store()
    lines = collapse_run(history, history, settled_steps(history, len(history), everything), store)[0]["content"]
    assert "1. terminal: cat part_c0.py -> exit 0 all good\n" in lines
    assert "2. terminal: cat part_c1.py -> (no output)\n" in lines
    assert not [kind for _, kind, *_ in store.kept.values() if kind == BlobKind.OUTPUT]


def test_an_output_shorter_than_quote_chars_is_quoted_whole_with_its_lines_and_not_stored():
    # The view never stubs an output under its min_chars; folding its step into a line must not hide it either.
    history = HEAD + turn(0, 3, chars=300)
    history[3]["content"] = "   40\t    def parens(x):\n   41\t        return r'\\left(%s\\right)' % x\n" * 4
    store = Store()
    run = settled_steps(history, len(history), everything)
    lines = collapse_run(history, history, run, store, quote_chars=400)[0]["content"]
    assert f"1. terminal: cat part_c0.py -> {history[3]['content'].strip()}\n" in lines
    assert f"2. terminal: cat part_c1.py -> {output_text('c1', 300).strip()}\n" in lines
    assert not [kind for _, kind, *_ in store.kept.values() if kind == BlobKind.OUTPUT]
    # At the default (the one-line limit) the same outputs are stored and named by their handles.
    store = Store()
    lines = collapse_run(history, history, run, store)[0]["content"]
    assert "def parens" not in lines and lines.count(", handle ") == 2
    assert len([kind for _, kind, *_ in store.kept.values() if kind == BlobKind.OUTPUT]) == 2


def test_an_output_the_store_refuses_is_quoted_whole():
    history = HEAD + turn(0, 3)
    sent = collapse_run(history, history, settled_steps(history, len(history), everything), Store(fail=True))
    text = sent[0]["content"]
    for n in range(2):
        assert f"{n + 1}. terminal: cat part_c{n}.py -> {output_text(f'c{n}').strip()}" in text
    assert "handle" not in text.split("]", 1)[1]  # only the header's own mention of handles


def test_long_arguments_are_cut_in_the_line_and_kept_whole_in_the_store():
    history = HEAD + turn(0, 3)
    long_command = "python -c '" + "x = 1; " * 60 + "'"
    history[2]["tool_calls"] = [call("c0", long_command)]
    store = Store()
    text = collapse_run(history, history, settled_steps(history, len(history), everything), store)[0]["content"]
    line = text.splitlines()[1]
    shown = line.split(": ", 1)[1].split(" -> ")[0]
    assert len(shown) == CALL_CHARS and shown.endswith("…") and long_command.startswith(shown[:-1])
    kept = [t for t, kind, *_ in store.kept.values() if kind == BlobKind.ARGUMENTS]
    assert kept == [json.dumps({"command": long_command})]


def test_a_run_whose_last_step_has_no_text_sends_the_list_alone():
    history = HEAD + turn(0, 3)
    history[6] = {**history[6], "content": None}
    text = collapse_run(history, history, settled_steps(history, len(history), everything), Store())[0]["content"]
    assert text.endswith("[stowage: end of the earlier steps]")


def test_collapse_is_deterministic():
    history = HEAD + turn(0, 5) + turn(5, 1, calls=2)
    run = settled_steps(history, len(history), everything)
    first = collapse_run(history, history, run, Store())
    again = collapse_run(copy.deepcopy(history), copy.deepcopy(history), list(run), Store())
    assert json.dumps(first) == json.dumps(again)


# -- collapsible_message ---------------------------------------------------------------


def test_only_plain_text_messages_without_provider_reasoning_may_join_a_line():
    assert collapsible_message({"role": "assistant", "content": "plain", "tool_calls": []})
    assert collapsible_message({"role": "assistant", "content": None, "tool_calls": []})
    assert not collapsible_message({"role": "tool", "content": [{"type": "text", "text": "a part"}]})
    assert not collapsible_message({"role": "tool", "content": {"text": "odd"}})
    for key in ("reasoning_content", "reasoning", "thinking"):
        assert not collapsible_message({"role": "assistant", "content": "x", key: "the provider's thoughts"})
    assert collapsible_message({"role": "assistant", "content": "x", "reasoning": ""})  # empty: nothing to keep
    assert not collapsible_message(["not", "a", "dict"]) and not collapsible_message(None)


def test_list_content_or_provider_reasoning_keeps_its_step_out_of_every_run():
    history = HEAD + turn(0, 5)
    history[7] = {**history[7], "content": [{"type": "text", "text": history[7]["content"]}]}  # c2's result
    history[10] = {**history[10], "reasoning_content": "signed thoughts"}  # step 4's assistant message
    steps = settled_steps(history, len(history), lambda i: collapsible_message(history[i]))
    assert spans(steps) == [(2, 4), (4, 6), (8, 10)]
    assert runs(steps, [len(history)]) == []


def test_a_lines_handle_keeps_the_output_exactly_as_the_history_holds_it():
    history = HEAD + turn(0, 3)
    padded = "\n  " + output_text("c0") + "\n\n"  # leading and trailing blank space are part of the output
    history[3] = {**history[3], "content": padded}
    store = Store()
    line = collapse_run(history, history, settled_steps(history, len(history), everything), store)[0]["content"]
    handle = line.splitlines()[1].rsplit(" ", 1)[1]
    assert store.kept[handle][0] == padded and f", {len(padded):,} chars, handle " in line


class RecordingHandles:
    """The lean view's store protocol, recording what it was asked to keep."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, str]] = []  # (tool name, text)

    def handle_for(self, text: str, *, kind: BlobKind, tool_name: str, arguments: str) -> StubHandle | None:
        self.kept.append((tool_name, text))
        return StubHandle(f"{len(self.kept):016x}")

    def spilled_tokens(self, preview: str) -> int | None:
        return None


def test_a_read_back_step_is_a_line_that_says_repeat_the_call_and_is_not_stored_again():
    from stowage.context_engine.view.lean import LeanView, ViewSettings

    messages: list[Message] = [*HEAD]
    for n in range(12):  # a long turn of read-backs: stowage_fetch outputs, which the store already holds
        messages.append(
            {"role": "assistant", "content": f"step {n}", "tool_calls": [call(f"c{n}", f"h{n}", "stowage_fetch")]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": output_text(f"c{n}", 2400)})
    view = LeanView(
        ViewSettings(hot_tokens=1000, step_tokens=3000, pin_turns=1, collapse_steps=True),
        lambda m: len(json.dumps(m)) // 4,
    )
    store = RecordingHandles()
    sent = view.apply(messages, store).messages
    lines = [
        line
        for m in sent
        if str(m.get("content") or "").startswith(COLLAPSE_MARK)
        for line in m["content"].splitlines()
    ]
    steps = [line for line in lines if line[:1].isdigit()]
    assert steps and all(line.endswith("repeat the call to read it again") for line in steps), lines
    assert not any(tool == "stowage_fetch" for tool, _ in store.kept)  # no second copy of what was read back
    assert validate_messages(sent, "strict") == []
