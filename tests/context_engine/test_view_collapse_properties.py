"""Collapsed steps and condensed answers through ``LeanView.apply``, over histories grown one message at a time.

Each request (the history after a user message, or after the last result of
a tool batch) is checked the way a provider and the prompt cache see it:

* between plan steps it extends the previous request byte for byte;
* it is valid for the strictest provider profile (every call answered right
  after its message, no orphan result, roles alternate);
* every handle in a collapse line reads back, from the session's store, the
  exact output of the call the line names;
* an answer is condensed only once a user message and then a reply of the
  model followed it (the newest answer, and the one a pending question
  follows, stay whole), and its handle reads the whole answer back.

Both settings are set here explicitly: the tests do not lean on the defaults.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.chat.markers import REASONING_MARK
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.pins import request_refs
from stowage.context_engine.view.collapse import COLLAPSE_MARK
from stowage.context_engine.view.lean import LeanView, ViewSettings
from stowage.context_engine.view.plan import ViewPlan

from .view_sessions import make

Message = dict[str, Any]
LINE = re.compile(r"^(\d+)\. (\w+): cat part_(c[\w]+)\.py -> (.*)$")
LINE_HANDLE = re.compile(r", ([\d,]+) chars, handle ([0-9a-f]{16,64})$")
CONDENSED_HANDLE = re.compile(r'stowage_fetch\(handle="([0-9a-f]{16,64})"\)\]$')
SIZES = {"inline": 90, "medium": 900, "big": 3000}
LONG = " ".join(f"clause {i} of the model's thinking about what to do next" for i in range(14))  # ~700 chars


def output_text(cid: str, chars: int) -> str:
    """Numbered lines after a definition only this output shows (``helper_<cid>``: what a later step may quote)."""
    return (
        f"def helper_{cid}(value):\n"
        + "".join(f"{cid} line {i:04d} of the output\n" for i in range(chars // 26))[: chars - 24 - len(cid)]
    )


@dataclass(frozen=True)
class StepSpec:
    calls: int = 1
    size: str = "big"
    content: str = "short"  # short | none | long | parts | provider (reasoning_content) | quote (pins an output)


@dataclass(frozen=True)
class TurnSpec:
    steps: tuple[StepSpec, ...]
    answer: str = "long"  # long | short | none (the history ends inside this turn)


def build(turns: list[TurnSpec]) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    newest = ""  # the newest output's call id: a "quote" step names its helper (a quote pin)
    for t, spec in enumerate(turns):
        messages.append({"role": "user", "content": f"task {t}: fix part {t} of the parser"})
        for s, step in enumerate(spec.steps):
            ids = [f"c{t}x{s}" + "abc"[i - 1] if i else f"c{t}x{s}" for i in range(step.calls)]
            text: Any = {
                "short": f"step {s} of turn {t}",
                "none": None,
                "long": f"turn {t} step {s}: {LONG}",
                "parts": [{"type": "text", "text": f"step {s} of turn {t} in parts"}],
                "provider": f"step {s} of turn {t}",
                "quote": f"step {s} of turn {t}: helper_{newest} again" if newest else "no output yet",
            }[step.content]
            assistant: Message = {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps({"command": f"cat part_{cid}.py"})},
                    }
                    for cid in ids
                ],
            }
            if step.content == "provider":
                assistant["reasoning_content"] = "signed provider thoughts"
            messages.append(assistant)
            messages += [
                {"role": "tool", "tool_call_id": cid, "content": output_text(cid, SIZES[step.size])} for cid in ids
            ]
            newest = ids[0]
        if spec.answer != "none":
            body = f"answer {t}: part {t} is fixed." + (f" {LONG}" if spec.answer == "long" else "")
            messages.append({"role": "assistant", "content": body})
    return messages


def request_points(messages: list[Message]) -> list[int]:
    """History lengths at which the host sends a request: after a user message or a batch's last result."""
    points = []
    for end in range(2, len(messages) + 1):
        last, following = messages[end - 1], messages[end] if end < len(messages) else None
        if last["role"] == "user" or (last["role"] == "tool" and (following is None or following["role"] != "tool")):
            points.append(end)
    return points


def fetch(engine: StowageEngineCore, handle: str) -> str:
    reply = json.loads(engine.handle_tool_call("stowage_fetch", {"handle": handle, "mode": "full"}))
    assert "text" in reply, reply
    return reply["text"]


@dataclass
class Seen:
    requests: int = 0
    extended: int = 0
    collapse_lines: int = 0
    handles_read: int = 0
    condensed_answers: int = 0
    pinned: int = 0
    steps_kept_earlier_runs: int = 0
    last: list[Message] = field(default_factory=list)  # the newest request as sent


def grow(engine: StowageEngineCore, messages: list[Message], deep_at: int = 0, **view: Any) -> Seen:
    """Send every request of the growing history through one LeanView; check each as described above."""
    lean = LeanView(
        ViewSettings(**{"pin_turns": 3, **view}, collapse_steps=True, condense_answers=True),
        engine.state.counter.count_message,
    )
    store = engine.state.store
    outputs = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    answers = {m["content"]: i for i, m in enumerate(messages) if m["role"] == "assistant" and not m.get("tool_calls")}
    seen, previous, previous_steps = Seen(), None, -1
    previous_plan = ViewPlan()
    for end in request_points(messages):
        history = messages[:end]
        snapshot = json.dumps(history)
        outcome = lean.apply(history, store, deep_at=deep_at)
        sent = outcome.messages
        assert json.dumps(history) == snapshot  # the history is never changed
        seen.requests += 1
        assert validate_messages(sent, "strict") == [], (end, validate_messages(sent, "strict"))
        assert outcome.lean_tokens == sum(
            map(engine.state.counter.count_message, sent)
        )  # the figures (and the preflight) see what is sent
        if previous is not None and lean.stats.steps == previous_steps:
            assert json.dumps(sent[: len(previous)]) == json.dumps(previous), end  # byte for byte
            seen.extended += 1
        elif previous is not None:
            _check_earlier_runs_stay(history, previous, previous_plan, sent, outcome.plan, seen)
        for index in outcome.plan.pinned:  # an output a pin keeps verbatim is sent as it is, never as a line
            if history[index]["role"] == "tool":
                assert history[index] in sent, (end, index)
                seen.pinned += 1
        previous, previous_steps, previous_plan = sent, lean.stats.steps, outcome.plan
        for message in sent:
            content = message.get("content")
            if isinstance(content, str) and content.startswith(COLLAPSE_MARK):
                _check_collapse(engine, content, outputs, seen)
        _check_answers(engine, history, sent, answers, seen)
    seen.last = previous or []
    return seen


def spans(history: list[Message], sent: list[Message]) -> list[tuple[int, int]]:
    """For each sent message, the history messages ``[start, end)`` it stands for (a collapse: its whole run)."""
    call_at = {c["id"]: i for i, m in enumerate(history) for c in m.get("tool_calls") or []}
    result_at = {m["tool_call_id"]: i for i, m in enumerate(history) if m["role"] == "tool"}
    out, next_index = [], 0
    for message in sent:
        content = message.get("content")
        if isinstance(content, str) and content.startswith(COLLAPSE_MARK):
            first = LINE.match(content.splitlines()[1])
            assert first, content
            start, next_index = call_at[first.group(3)], call_at[message["tool_calls"][0]["id"]] + 1
        elif message["role"] == "tool":
            start = result_at[message["tool_call_id"]]
            next_index = start + 1
        else:
            start = next_index
            next_index += 1
        out.append((start, next_index))
    for (start, end), (following, _) in zip(out, out[1:] + [(len(history), 0)], strict=True):
        assert start < end <= following, out  # in order, nothing sent twice
    return out


def _check_earlier_runs_stay(
    history: list[Message],
    previous: list[Message],
    previous_plan: ViewPlan,
    sent: list[Message],
    plan: ViewPlan,
    seen: Seen,
) -> None:
    """A view step that stubs only what left the hot zone since the last one leaves what lay before it as it was
    (up to the tool step the last boundary cut, if it cut one).

    (A step that also stubs an older output a pin had kept may join the runs around it: not checked then.)
    """
    if not previous_plan.step_ends:
        return
    boundary = previous_plan.step_ends[-1]
    if any(i < boundary for i in set(plan.stubbed) - set(previous_plan.stubbed)):
        return
    while boundary > 0 and history[boundary]["role"] == "tool":  # a step the boundary cut may join a new run
        boundary -= 1
    before = [m for m, (_, end) in zip(previous, spans(history, previous), strict=True) if end <= boundary]
    after = [m for m, (_, end) in zip(sent, spans(history, sent), strict=True) if end <= boundary]
    assert json.dumps(after) == json.dumps(before)
    seen.steps_kept_earlier_runs += 1


def _check_collapse(engine: StowageEngineCore, content: str, outputs: dict[str, str], seen: Seen) -> None:
    lines = content.split("\n[stowage: end of the earlier steps]")[0].splitlines()[1:]
    assert lines
    for line in lines:
        match = LINE.match(line)
        assert match, line
        cid, tail = match.group(3), match.group(4)
        original = outputs[cid]
        seen.collapse_lines += 1
        with_handle = LINE_HANDLE.search(tail)
        if with_handle is None:  # a short output is quoted in its line
            assert len(original) <= 160 and tail == " ".join(original.split()), line
            continue
        assert with_handle.group(1) == f"{len(original):,}"
        assert fetch(engine, with_handle.group(2)) == original, line  # the exact output, from the session's store
        assert with_handle.group(2) in request_refs([{"role": "assistant", "content": content}])  # the cap spares it
        seen.handles_read += 1


def _check_answers(
    engine: StowageEngineCore, history: list[Message], sent: list[Message], answers: dict[str, int], seen: Seen
) -> None:
    sent_texts = {m.get("content") for m in sent if isinstance(m.get("content"), str)}
    for text, index in answers.items():
        if index >= len(history) or text in sent_texts:
            continue
        # condensed: a user message and then a reply of the model came after it
        later_user = next((i for i in range(index + 1, len(history)) if history[i]["role"] == "user"), None)
        assert later_user is not None, (index, len(history))
        assert any(history[i]["role"] == "assistant" for i in range(later_user + 1, len(history))), index
        (condensed,) = [
            m["content"] for m in sent if isinstance(m.get("content"), str) and m["content"].startswith(text[:40])
        ]
        assert REASONING_MARK in condensed
        assert fetch(engine, CONDENSED_HANDLE.search(condensed).group(1)) == text
        seen.condensed_answers += 1


def plain_turns(count: int, steps: int) -> list[TurnSpec]:
    return [
        TurnSpec(tuple(StepSpec(content="long" if s % 3 == 0 else "short") for s in range(steps))) for _ in range(count)
    ]


def test_a_long_session_collapses_steps_and_condenses_answers_and_keeps_every_invariant(tmp_path):
    turns = plain_turns(4, 9)
    turns[1] = TurnSpec(tuple(StepSpec(calls=2 if s == 4 else 1, size="inline" if s == 2 else "big") for s in range(9)))
    turns[-1] = TurnSpec(turns[-1].steps, answer="none")  # the newest turn is still working
    seen = grow(make(tmp_path), build(turns), hot_tokens=1500, step_tokens=1500)
    assert seen.collapse_lines >= 10 and seen.handles_read >= 10 and seen.condensed_answers >= 2, seen
    assert seen.extended >= seen.requests // 2 and seen.steps_kept_earlier_runs >= 2, seen


def test_an_output_a_pin_keeps_verbatim_keeps_its_step_out_of_the_lines(tmp_path):
    steps = [StepSpec(content="quote" if s == 3 else "short") for s in range(16)]  # step 3 names step 2's helper
    messages = build([TurnSpec(tuple(steps), answer="none")])
    seen = grow(make(tmp_path), messages, hot_tokens=800, step_tokens=3000, pin_turns=30)
    pinned = next(m for m in messages if m.get("tool_call_id") == "c0x2")
    assert pinned in seen.last and seen.pinned >= 1, seen  # verbatim while the pin lasts
    lines = "\n".join(m["content"] for m in seen.last if str(m.get("content")).startswith(COLLAPSE_MARK))
    assert "part_c0x4.py" in lines and "part_c0x2.py" not in lines and "part_c0x3.py" not in lines, lines
    assert seen.steps_kept_earlier_runs >= 1, seen


def test_the_newest_answer_and_the_one_the_pending_question_follows_stay_whole(tmp_path):
    messages = build(plain_turns(4, 6))
    pending = [*messages, {"role": "user", "content": "and now the lexer"}]
    engine = make(tmp_path)
    lean = LeanView(
        ViewSettings(hot_tokens=800, step_tokens=800, collapse_steps=True, condense_answers=True),
        engine.state.counter.count_message,
    )
    sent = [m.get("content") for m in lean.apply(pending, engine.state.store).messages]
    answers = [m["content"] for m in messages if m["role"] == "assistant" and not m.get("tool_calls")]
    assert answers[-1] in sent  # the answer the pending question follows
    assert answers[0] not in sent and answers[1] not in sent  # moved past: a question and a reply followed them
    off = LeanView(
        ViewSettings(hot_tokens=800, step_tokens=800, collapse_steps=False, condense_answers=False),
        engine.state.counter.count_message,
    )
    assert all(a in [m.get("content") for m in off.apply(pending, engine.state.store).messages] for a in answers)


def test_in_a_chat_without_tools_the_answer_a_pending_question_follows_stays_whole(tmp_path):
    # no tool batch holds the hot zone open here: each answer leaves it as soon as the next question comes
    messages = build([TurnSpec((), answer="long") for _ in range(6)])
    pending = [*messages, {"role": "user", "content": "and the lexer?"}]
    seen = grow(make(tmp_path), pending, hot_tokens=150, step_tokens=150)
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    assert answers[-1] in [m["content"] for m in seen.last] and seen.condensed_answers >= 4, seen


def test_steps_too_small_to_stub_wait_for_a_view_step_to_be_collapsed(tmp_path):
    # small outputs are never stubbed, so nothing but the view's steps may decide when their steps become lines
    steps = [StepSpec(size="big")] * 8 + [StepSpec(size="inline")] * 24 + [StepSpec(size="big")] * 8
    seen = grow(make(tmp_path), build([TurnSpec(tuple(steps), answer="none")]), hot_tokens=300, step_tokens=1500)
    inline = [
        line for m in seen.last if str(m.get("content")).startswith(COLLAPSE_MARK) for line in m["content"].splitlines()
    ]
    assert any("-> def helper_c0x9(value): c0x9 line 0000" in line for line in inline), seen
    assert seen.extended >= seen.requests // 2, seen


def test_steps_with_list_content_or_provider_reasoning_are_sent_whole(tmp_path):
    steps = [StepSpec(content="parts" if s == 3 else "provider" if s == 7 else "short") for s in range(12)]
    messages = build([TurnSpec(tuple(steps), answer="none")])
    engine = make(tmp_path)
    lean = LeanView(
        ViewSettings(hot_tokens=800, step_tokens=4000, collapse_steps=True, condense_answers=False),
        engine.state.counter.count_message,
    )
    outcome = lean.apply(messages, engine.state.store)
    assert outcome.collapsed_steps > 0
    sent = outcome.messages
    assert [m for m in sent if isinstance(m.get("content"), list)] == [
        m for m in messages if isinstance(m.get("content"), list)
    ]
    assert [m for m in sent if m.get("reasoning_content")] == [m for m in messages if m.get("reasoning_content")]
    lines = "\n".join(
        m["content"] for m in sent if isinstance(m.get("content"), str) and m["content"].startswith(COLLAPSE_MARK)
    )
    assert "part_c0x3.py" not in lines and "part_c0x7.py" not in lines and "part_c0x0.py" in lines


def step_specs() -> st.SearchStrategy[StepSpec]:
    return st.builds(
        StepSpec,
        calls=st.sampled_from([1, 1, 1, 2, 3]),
        size=st.sampled_from(["big", "big", "medium", "inline"]),
        content=st.sampled_from(["short", "short", "none", "long", "long", "parts", "provider", "quote"]),
    )


def turn_specs() -> st.SearchStrategy[TurnSpec]:
    return st.builds(
        TurnSpec, steps=st.lists(step_specs(), max_size=9).map(tuple), answer=st.sampled_from(["long", "long", "short"])
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(turn_specs(), min_size=1, max_size=4),
    st.booleans(),
    st.sampled_from([(150, 300), (800, 800), (1500, 1500), (1000, 4000), (4000, 1000)]),
    st.sampled_from([0, 0, 3000, 8000]),  # deep steps as the engine asks for them near the compaction trigger
    st.booleans(),
)
def test_every_request_of_a_growing_history_keeps_the_invariants(
    tmp_path_factory, turns, pending, budgets, deep_at, file_pins
):
    if pending:
        turns[-1] = TurnSpec(turns[-1].steps, answer="none")
    hot, step = budgets
    pins = {"pin_edited": file_pins, "pin_named": file_pins}
    grow(make(tmp_path_factory.mktemp("s")), build(turns), deep_at, hot_tokens=hot, step_tokens=step, **pins)


def test_with_a_store_that_cannot_write_every_output_still_reaches_the_model(tmp_path, monkeypatch):
    messages = build([TurnSpec(tuple(StepSpec() for _ in range(14)), answer="none")])
    engine = make(tmp_path)
    lean = LeanView(
        ViewSettings(hot_tokens=800, step_tokens=3000, collapse_steps=True, condense_answers=False),
        engine.state.counter.count_message,
    )
    working = lean.apply(messages, engine.state.store)
    assert working.collapsed_steps > 0

    def broken(*args: Any, **kwargs: Any) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine.state.store, "handle_for", broken)
    failing = LeanView(lean.settings, engine.state.counter.count_message)
    outcome = failing.apply(messages, engine.state.store)
    sent = json.dumps(outcome.messages)
    assert validate_messages(outcome.messages, "strict") == []
    for message in messages:
        if message["role"] == "tool":
            assert json.dumps(message["content"].strip())[1:-1] in sent  # whole: as its message or in its line
    assert re.search(r'handle[ =\\"]+[0-9a-f]{16}', sent) is None  # no handle points to nothing
    assert "No space left" in failing.stats.last_error
