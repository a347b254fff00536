"""Hypothesis fuzz of ``compress()``: judged by an independent strict validator, and nothing lost.

Transcripts carry the shapes hosts really hand over (tool results with
``content: None`` or list content, user blocks with empty text, tool-call
arguments as dicts, U+2028 in outputs).  A compaction that changed the list
must satisfy ``strict_provider.strict_problems``; and every tool output of the
input must still be in the output or recoverable byte for byte through the
handles the output names (directly, or inside a stored window).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.archive import decode_window

from .strict_provider import strict_problems

pytestmark = pytest.mark.reliability
HANDLE = re.compile(r"\b[0-9a-f]{16,64}\b")
SUMMARY = "## Goal\nKeep going.\n\n## Next Steps\n- continue"
STATS = {"cases": 0, "changed": 0, "strict_failures": 0, "outputs_checked": 0, "outputs_lost": 0}


def _output(kind: str, size: int, seed: int):
    if kind == "none":
        return None
    if kind == "list":
        return [{"type": "text", "text": f"part {seed} " + "y" * size}]
    if kind == "sep":
        return "\n".join(f"row {seed}.{i} \u2028 tail \u0085 x" for i in range(size // 30 + 1))
    return "\n".join(f"[{seed}:{i:04d}] step {i} ok" for i in range(size // 25 + 1))


call = st.tuples(
    st.sampled_from(["log", "sep", "none", "list"]),
    st.integers(0, 5000),
    st.sampled_from(["str", "dict"]),
    st.integers(0, 800),
)
turn = st.tuples(
    st.sampled_from(["text", "parts", "empty_block"]), st.lists(st.lists(call, min_size=1, max_size=3), max_size=3)
)


@st.composite
def transcripts(draw):
    messages = [{"role": "system", "content": "You are a careful agent."}]
    n = 0
    turns = draw(st.lists(turn, min_size=2, max_size=12))
    for t, (shape, steps) in enumerate(turns):
        text = f"Request {t}: work on item {t}."
        if shape == "text":
            messages.append({"role": "user", "content": text})
        elif shape == "parts":
            messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": text}]})
        for s, step in enumerate(steps):
            calls, results = [], []
            for kind, size, arg_shape, arg_size in step:
                n += 1
                args = {"command": f"run {t}.{s}", "payload": "a" * arg_size}
                calls.append(
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps(args) if arg_shape == "str" else args},
                    }
                )
                results.append(
                    {"role": "tool", "tool_call_id": f"c{n}", "name": "terminal", "content": _output(kind, size, n)}
                )
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages += results
        messages.append({"role": "assistant", "content": f"Done with {t}."})
    return messages


def reachable(store, session, text_blobs, seen):
    """Every blob named in ``text_blobs`` (recursively through windows): sha -> bytes."""
    out = {}
    todo = [h for text in text_blobs for h in HANDLE.findall(text)]
    while todo:
        handle = todo.pop()
        try:
            sha = store.resolve(handle, session)
        except Exception:  # noqa: BLE001 - not a handle of ours (a hex word in the text)
            continue
        if sha in seen:
            continue
        seen.add(sha)
        data = store.read_bytes(sha)
        out[sha] = data
        try:
            inner = decode_window(data)
        except ValueError:
            continue
        for message in inner:
            if isinstance(message, dict):
                todo += HANDLE.findall(json.dumps(message, ensure_ascii=False))
    return out


def recoverable_texts(store, session, messages):
    texts = set()
    rendered = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            texts.add(content)
        rendered.append(json.dumps(m, ensure_ascii=False, default=str))
    for data in reachable(store, session, rendered, set()).values():
        texts.add(data.decode("utf-8", "replace"))
        try:
            window = decode_window(data)
        except ValueError:
            continue
        for m in window:
            if isinstance(m, dict) and isinstance(m.get("content"), str):
                texts.add(m["content"])
    return texts


@given(
    messages=transcripts(),
    focus=st.sampled_from([None, "item 3"]),
    force=st.booleans(),
    context_length=st.sampled_from([8_000, 32_000]),
)
@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
def test_compress_output_is_strictly_valid_and_nothing_is_lost(
    tmp_path_factory, messages, focus, force, context_length
):
    home = tmp_path_factory.mktemp("home")
    engine = StowageEngineCore(
        load_settings(
            {"stowage": {"compaction": {"threshold": 0.3, "protect_last_n": 2}, "spill": {"threshold_tokens": 300}}}
        ),
        summary_model=lambda prompt, runtime, timeout=None: SUMMARY,
    )
    engine.update_model("m", context_length)
    engine.on_session_start("fuzz", hermes_home=str(home))
    STATS["cases"] += 1
    out = engine.compress(messages, current_tokens=context_length, focus_topic=focus, force=force)
    if out is messages:
        return
    STATS["changed"] += 1
    problems = strict_problems(out)
    STATS["strict_failures"] += bool(problems)
    assert not problems, problems[:5]
    store = engine.state.store.store
    texts = recoverable_texts(store, "fuzz", out)
    lost = []
    for m in messages:
        if m.get("role") == "tool" and isinstance(m.get("content"), str) and m["content"]:
            STATS["outputs_checked"] += 1
            if m["content"] not in texts:
                lost.append(m["tool_call_id"])
    STATS["outputs_lost"] += len(lost)
    assert not lost, f"tool outputs not recoverable: {lost}"


def test_fuzz_figures(figures):
    """Runs after the fuzz (file order) and reports its totals."""
    figures.update(STATS)
    assert STATS["strict_failures"] == 0 and STATS["outputs_lost"] == 0
