"""Property-based tests: any valid transcript compacts into a valid transcript.

Hypothesis draws the *structure* of a transcript (turns, parallel tool calls,
multi-part content, images, a system prompt, an earlier summary, output sizes
and duplicates) and the behaviour of the summary model (good, garbage, empty,
or failing with any kind); contents are built deterministically from that
structure so examples stay fast.
"""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.chat.messages import is_real_user_turn, last_index, message_text
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.summary.reply import FAILURE_KINDS, SummaryFailure, wrap

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 20}}
GOOD = "## Goal\nKeep working on the task.\n\n## Progress\n### Done\n- several steps\n\n## Next Steps\n- continue"
TOOLS = ("terminal", "read_file", "web_search", "patch")


def _output(kind: str, size: int, seed: int) -> str:
    if kind == "log":
        return "\n".join(f"[{seed}:{i:04d}] step {i} finished in {i * 7 % 97} ms" for i in range(size // 40 + 1))
    if kind == "json":
        return json.dumps({"exit_code": seed % 3, "output": "x" * size, "seed": seed})
    if kind == "error":
        return "running...\n" * (size // 12) + f"Traceback (most recent call last):\nValueError: case {seed}"
    return "ok"


call_spec = st.tuples(
    st.sampled_from(TOOLS),
    st.sampled_from(["log", "json", "error", "short"]),
    st.integers(0, 6000),  # output size
    st.booleans(),  # duplicate of the previous output
    st.integers(0, 1500),  # argument size
)
step_spec = st.lists(call_spec, min_size=1, max_size=4)  # parallel calls of one assistant message
turn_spec = st.tuples(
    st.sampled_from(["text", "parts", "image"]),  # user message shape
    st.lists(step_spec, min_size=0, max_size=4),
    st.sampled_from(["text", "none", "parts"]),  # how the turn ends
)


@st.composite
def transcripts(draw) -> list[dict]:
    messages: list[dict] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": "You are a careful coding agent."})
    earlier = draw(st.sampled_from(["none", "user", "merged"]))
    if earlier == "user":
        messages += [{"role": "user", "content": wrap("## Goal\nEARLIER-SUMMARY goal\n\n## Progress\n- old")}]
        messages += [{"role": "assistant", "content": "Continuing."}]
    # a summary merged into a user turn (an older layout) always has a real user turn after it
    turns = draw(st.lists(turn_spec, min_size=2 if earlier == "merged" else 1, max_size=30))
    call_number = 0
    previous_output = "none yet"
    for turn_index, (user_shape, steps, ending) in enumerate(turns):
        text = f"Request {turn_index}: please work on item {turn_index} of the list."
        if earlier == "merged" and turn_index == 0:
            text = wrap("## Goal\nEARLIER-SUMMARY merged") + "\n\n" + text
        if user_shape == "text":
            messages.append({"role": "user", "content": text})
        elif user_shape == "parts":
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": text}, {"type": "text", "text": "(second part)"}]}
            )
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": text}, IMAGE]})
        for step_index, step in enumerate(steps):
            calls, results = [], []
            for tool, kind, size, duplicate, arg_size in step:
                call_number += 1
                cid = f"call_{call_number}"
                args = {"command": f"run {turn_index}.{step_index}", "payload": "a" * arg_size}
                calls.append({"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}})
                output = previous_output if duplicate else _output(kind, size, call_number)
                previous_output = output
                results.append({"role": "tool", "tool_call_id": cid, "name": tool, "content": output})
            content = draw(st.sampled_from([None, "", f"Working on step {step_index}."]))
            messages.append({"role": "assistant", "content": content, "tool_calls": calls})
            messages += results
        if ending == "text" or (ending == "parts" and not steps):
            messages.append({"role": "assistant", "content": f"Finished item {turn_index}."})
        elif ending == "parts":
            messages.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"Item {turn_index}"}, {"type": "text", "text": "done."}],
                }
            )
        elif not steps:
            messages.append({"role": "assistant", "content": "Nothing to do."})
        # "none": the turn ends with tool results (an interrupted turn) unless it had no steps
        if ending == "none" and steps and turn_index < len(turns) - 1:
            messages.append({"role": "assistant", "content": "Interrupted, moving on."})
    return messages


behaviour = st.one_of(
    st.just(GOOD),
    st.sampled_from(
        [
            "",
            "   ",
            "<html><body>502</body></html>",
            json.dumps({"error": "overloaded"}),
            "<think>only thinking</think>",
            "ok",
            "\x00\x01\x02" * 50,
        ]
    ),
    st.sampled_from(FAILURE_KINDS).map(lambda kind: SummaryFailure(kind, f"simulated {kind}")),
    st.just(RuntimeError("bug in the aux client")),
)


class ScriptedModel:
    def __init__(self, script: list) -> None:
        self.script = script
        self.calls = 0

    def __call__(self, prompt: str, runtime: dict, timeout: float | None = None) -> str:
        item = self.script[self.calls % len(self.script)]
        self.calls += 1
        if isinstance(item, BaseException):
            raise item
        return item


engine_config = st.fixed_dictionaries(
    {
        "threshold": st.sampled_from([0.1, 0.3, 0.75]),
        "protect_first_n": st.integers(0, 5),
        "protect_last_n": st.integers(1, 12),
        "abort_on_summary_failure": st.booleans(),
    }
)


def newest_user_text(messages: list[dict]) -> str | None:
    index = last_index(messages, is_real_user_turn)
    return message_text(messages[index]) if index >= 0 else None


def test_generator_makes_valid_transcripts():
    @given(transcripts())
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(messages):
        assert validate_messages(messages) == [], [str(p) for p in validate_messages(messages)]
        assert newest_user_text(messages)

    check()


@given(
    messages=transcripts(),
    config=engine_config,
    script=st.lists(behaviour, min_size=1, max_size=4),
    force=st.booleans(),
    focus=st.sampled_from([None, "tests"]),
    context_length=st.sampled_from([16_000, 64_000, 200_000]),
)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_compress_never_raises_and_returns_valid_lists(messages, config, script, force, focus, context_length):
    assert validate_messages(messages) == []
    engine = StowageEngineCore(load_settings({"stowage": {"compaction": config}}), summary_model=ScriptedModel(script))
    engine.update_model(model="m", context_length=context_length)
    before = copy.deepcopy(messages)
    newest = newest_user_text(messages)

    out = engine.compress(
        messages, current_tokens=engine.state.counter.count_messages(messages), focus_topic=focus, force=force
    )
    assert messages == before, "the input list must not be mutated"
    assert isinstance(out, list)
    assert validate_messages(out) == [], [str(p) for p in validate_messages(out)]
    assert newest_user_text(out) == newest, "the newest user request must survive verbatim"
    if engine._last_compress_aborted or not engine._last_compression_made_progress:
        assert out is messages

    # a second pass on the result (a later turn, or /compress again) keeps the same guarantees
    engine.end_turn()
    again = engine.compress(out, force=not force)
    assert validate_messages(again) == [], [str(p) for p in validate_messages(again)]
    assert newest_user_text(again) == newest
    if engine._last_compression_made_progress:
        assert engine.state.counter.count_messages(again) <= engine.state.counter.count_messages(out) * 1.05 + 500
