"""The lean view inside the engine: stubs with handles that read back, history untouched, failures verbatim."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.context_engine.chat.stubs import ARGUMENTS_KEY
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore

VIEW = {"hot_tokens": 1000, "step_tokens": 1000, "pin_turns": 3}
HANDLE = re.compile(r'stowage_fetch\(handle="([0-9a-f]{16,64})"\)')


def make(tmp_path, **view: Any) -> StowageEngineCore:
    engine = StowageEngineCore(load_settings({"stowage": {"view": {**VIEW, **view}}}))
    engine.update_model("m", 128_000)
    engine.on_session_start("s1", hermes_home=str(tmp_path))
    return engine


def history(steps: int, *, output_chars: int = 2400, args: dict | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Fix the parser."},
    ]
    for n in range(steps):
        arguments = json.dumps(args or {"command": f"cat part{n}.py"})
        messages.append(
            {
                "role": "assistant",
                "content": f"step {n}",
                "tool_calls": [
                    {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": arguments}}
                ],
            }
        )
        body = "".join(f"line {n}.{i} of the output\n" for i in range(output_chars // 24))
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": body})
    return messages


def shape(engine: StowageEngineCore, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return engine.shape_request([], messages).messages


def fetch(engine: StowageEngineCore, handle: str) -> str:
    reply = json.loads(engine.handle_tool_call("stowage_fetch", {"handle": handle, "mode": "full"}))
    return reply.get("content") or reply.get("text") or json.dumps(reply)


def test_old_outputs_become_stubs_whose_handles_read_back_the_whole_output(tmp_path):
    engine = make(tmp_path)
    messages = history(12)
    before = copy.deepcopy(messages)
    sent = shape(engine, messages)
    assert messages == before  # the history is never changed
    stubs = [
        (i, m["content"])
        for i, m in enumerate(sent)
        if m["role"] == "tool" and m["content"].startswith(VIEW_STUB_PREFIX)
    ]
    assert len(stubs) >= 4
    for index, stub in stubs:
        handle = HANDLE.search(stub).group(1)
        assert messages[index]["content"] in fetch(engine, handle)
        assert stub.startswith(f"{VIEW_STUB_PREFIX} terminal -> ok; ") and "chars" in stub
    assert sent[-1] == messages[-1]  # the newest output is verbatim
    status = engine.get_status()["view"]
    assert status["tokens_saved"] > 0 and status["last_request"]["stubbed_outputs"] == len(stubs)
    assert validate_messages(sent, "strict") == []


def test_the_same_history_gives_the_same_bytes_in_another_engine(tmp_path):
    messages = history(12)
    first = shape(make(tmp_path), messages)
    second = shape(make(tmp_path), copy.deepcopy(messages))  # a new process would build a new engine
    assert json.dumps(first) == json.dumps(second)


def test_between_steps_each_request_extends_the_previous_one(tmp_path):
    engine = make(tmp_path)
    messages = history(30)
    previous_sent, previous_steps, checked = None, None, 0
    for end in range(4, len(messages) + 1, 2):
        sent = shape(engine, messages[:end])
        steps = engine.state.view.stats.steps
        if previous_sent is not None and steps == previous_steps:
            assert sent[: len(previous_sent)] == previous_sent
            checked += 1
        previous_sent, previous_steps = sent, steps
    assert checked >= 5 and engine.state.view.stats.steps >= 2  # steps seen by later requests


def test_oversized_arguments_are_cut_with_a_handle_to_the_whole_text(tmp_path):
    engine = make(tmp_path)
    big = {"path": "notes.md", "content": "word " * 800}
    messages = history(12, args=big)
    sent = shape(engine, messages)
    cut = [m for m in sent[:4] if m["role"] == "assistant"][0]["tool_calls"][0]["function"]["arguments"]
    parsed = json.loads(cut)
    assert parsed["path"] == "notes.md" and len(cut) < len(json.dumps(big))
    handle = HANDLE.search(parsed[ARGUMENTS_KEY]).group(1)
    assert fetch(engine, handle).count("word") >= 800


def test_without_a_store_nothing_is_stubbed_and_status_says_why(tmp_path):
    engine = StowageEngineCore(load_settings({"stowage": {"view": VIEW}}))
    engine.update_model("m", 128_000)  # no hermes_home: no store
    messages = history(12)
    assert shape(engine, messages) == messages
    status = engine.get_status()["view"]
    assert status["unstored_outputs"] > 0 and "store" in status["last_error"]


def test_a_store_that_fails_to_write_keeps_outputs_verbatim(tmp_path, monkeypatch):
    engine = make(tmp_path)

    def broken(*args: Any, **kwargs: Any) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine.state.store, "handle_for", broken)
    messages = history(12)
    assert shape(engine, messages) == messages
    assert "No space left" in engine.get_status()["view"]["last_error"]


def test_a_read_back_output_stays_verbatim_while_pinned(tmp_path):
    engine = make(tmp_path, pin_turns=50)
    messages = history(3)
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "f1",
                    "type": "function",
                    "function": {"name": "stowage_fetch", "arguments": json.dumps({"handle": "ab" * 8})},
                }
            ],
        }
    )
    fetched = "fetched text\n" * 300
    messages.append({"role": "tool", "tool_call_id": "f1", "content": fetched})
    messages += history(12)[2:]
    sent = shape(engine, messages)
    assert sent[len(history(3)) + 1]["content"] == fetched
    assert engine.get_status()["view"]["last_request"]["pinned"] == 1
    unpinned = make(tmp_path, pin_turns=0)
    again = shape(unpinned, messages)[len(history(3)) + 1]["content"]
    assert again.startswith(VIEW_STUB_PREFIX) and "repeat the call" in again


@pytest.mark.parametrize(
    "odd",
    [
        "not a message",
        None,
        {"role": "tool", "tool_call_id": "x", "content": None},
        {"role": "tool", "tool_call_id": "y", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]},
        {"role": "assistant", "content": None, "tool_calls": "broken"},
    ],
)
def test_malformed_messages_pass_untouched(tmp_path, odd):
    engine = make(tmp_path)
    messages = history(6)
    messages.insert(3, odd)
    messages += history(12)[2:]
    sent = shape(engine, messages)
    assert sent[3] is odd or sent[3] == odd
    assert len(sent) == len(messages)


def test_with_the_view_off_requests_are_unchanged(tmp_path):
    engine = make(tmp_path, enabled=False)
    messages = history(12)
    assert shape(engine, messages) == messages
    assert engine.threshold_tokens == int(128_000 * engine.settings.compaction.threshold)


def test_the_host_preflight_is_deferred_while_the_sent_request_is_under_the_budget(tmp_path):
    engine = make(tmp_path)
    messages = history(40, output_chars=6000)
    shape(engine, messages)
    saved = engine.state.view.stats.last_request.saved_tokens
    assert saved > 0
    budget = engine.threshold_tokens
    assert engine.should_defer_preflight_to_real_usage(budget + saved - 1)
    assert not engine.should_defer_preflight_to_real_usage(budget + saved + 1)


def test_a_host_that_selects_context_estimates_the_lean_request_so_savings_count_once(tmp_path):
    # 0.20+ measure pressure after select_context: subtracting the view's savings again would undercount
    engine = make(tmp_path)
    messages = history(40, output_chars=6000)
    assert engine.select_context(messages, conversation_messages=messages, budget_tokens=0) is not None
    saved = engine.state.view.stats.last_request.saved_tokens
    assert saved > 0
    budget = engine.threshold_tokens
    assert not engine.should_defer_preflight_to_real_usage(budget + saved - 1)
    assert not engine.should_defer_preflight_to_real_usage(budget + 1, future_keyword=True)


def test_host_callbacks_accept_keywords_newer_hosts_pass(tmp_path):
    engine = make(tmp_path)
    engine.record_completed_compaction(used_fallback=False, feasibility_skip=True)
    assert engine.state.governor.verify_pending is True
    engine.update_from_response({"prompt_tokens": 10}, extra=1)
    assert engine.has_content_to_compress([], hint=1) is False


def test_saved_counts_spilled_outputs_against_the_same_history_unshaped(tmp_path):
    """One "saved" figure: requests as sent vs the history with spilled outputs whole, view stubs undone."""
    engine = make(tmp_path, hot_tokens=100_000)  # nothing stubbed: all the saving is the spill's
    big = "".join(f"row {i}: value {i * 7}\n" for i in range(6000))
    preview = engine.spill_tool_result("terminal", {"command": "cat big.csv"}, big).text
    assert preview is not None and len(preview) < len(big) // 10
    messages = history(1)
    messages[-1]["content"] = preview
    shape(engine, messages)
    shape(engine, messages)  # every request that carries the preview counts it
    view = engine.get_status()["view"]
    original = engine.state.counter.count_text(big)
    per_request = view["spill_tokens_saved"] // 2
    assert view["view_tokens_saved"] == 0 and original - per_request < 0.1 * original
    assert view["tokens_saved"] == view["spill_tokens_saved"] == view["unshaped_tokens"] - view["sent_tokens"] > 0
    assert engine.get_status()["requests"][-1]["full"] - engine.get_status()["requests"][-1]["sent"] == per_request


def test_the_trigger_names_the_key_that_decides_it(tmp_path):
    from stowage.context_engine.policy.trigger import governing

    engine = make(tmp_path)
    assert engine.get_status()["trigger"]["key"] == "view.compact_at"
    share = load_settings({}).view.compact_at  # the shipped default
    assert engine.get_status()["trigger"]["tokens"] == engine.threshold_tokens == int(128_000 * share)
    plain = StowageEngineCore(
        load_settings({"stowage": {"view": {"enabled": False}, "compaction": {"threshold": 0.6}}})
    )
    plain.update_model("m", 100_000)
    assert plain.get_status()["trigger"] == {
        "key": "compaction.threshold",
        "share": 0.6,
        "tokens": 60_000,
        "context_length": 100_000,
        "measured_on": "the whole history",
    }
    plain.model_thresholds = {"m": 0.5}
    plain.update_model("m", 100_000)
    assert plain.get_status()["trigger"]["key"] == "compression.model_thresholds" and plain.threshold_tokens == 50_000
    flat = {"view.enabled": True, "view.compact_at": 0.42, "compaction.threshold": 0.75, "compaction.target_ratio": 0.2}
    assert governing(flat) == {"view.enabled": True, "view.compact_at": 0.42}
    assert "view.compact_at" not in governing({**flat, "view.enabled": False})


def test_a_read_file_call_pins_the_earlier_reads_of_its_region(tmp_path):
    """The host's dedup answer refers the model to the earlier read: the view keeps that read in the request
    while the re-read is recent (an output stubbed before the re-read stays stubbed: the prompt cache)."""

    def read(n: int, path: str, body: str | None = None) -> list[dict[str, Any]]:
        call = {
            "id": f"r{n}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
        }
        text = body or "".join(f"{path} line {i}: some content here\n" for i in range(200))
        return [
            {"role": "assistant", "content": f"read {n}", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"r{n}", "content": text},
        ]

    head = history(0) + read(0, "a.py") + read(1, "b.py")
    fillers = history(2)[2:]  # within the pin (pin_turns 3)
    plain = {
        m.get("tool_call_id"): m["content"]
        for m in shape(make(tmp_path, step_tokens=2000), head + fillers)
        if m["role"] == "tool"
    }
    assert all(plain.get(r, VIEW_STUB_PREFIX).startswith(VIEW_STUB_PREFIX) for r in ("r0", "r1"))  # or collapsed
    again = head + read(2, "a.py", '{"status": "unchanged"}') + fillers
    sent = {
        m.get("tool_call_id"): m["content"]
        for m in shape(make(tmp_path / "2", step_tokens=2000), again)
        if m["role"] == "tool"
    }
    assert not sent["r0"].startswith(VIEW_STUB_PREFIX)  # a.py was read again: its earlier read is pinned
    assert sent.get("r1", VIEW_STUB_PREFIX).startswith(VIEW_STUB_PREFIX)  # b.py was not (a stub, or a collapse line)


def test_with_the_view_off_saved_still_counts_the_spills(tmp_path):
    from stowage.command.live import session_rows

    engine = make(tmp_path, enabled=False)
    big = "".join(f"row {i}: value {i * 7}\n" for i in range(6000))
    messages = history(1)
    messages[-1]["content"] = engine.spill_tool_result("terminal", {"command": "cat big.csv"}, big).text
    assert shape(engine, messages) == messages  # nothing shaped but the spill the history already holds
    status = engine.get_status()
    view = status["view"]
    assert view["enabled"] is False and view["requests"] == 1 and view["view_tokens_saved"] == 0
    assert view["tokens_saved"] == view["spill_tokens_saved"] > 0.9 * engine.state.counter.count_text(big) - 2000
    rows = dict(session_rows(engine.status()))
    assert rows["lean view"] == "off" and rows["saved"].startswith(
        f"{view['tokens_saved']:,} tokens saved over 1 request"
    )


def test_the_preflight_compares_the_last_real_prompt_plus_the_rough_growth_with_the_budget(tmp_path):
    """The host's rough figure overcounts code; the budget is on real tokens: growth is rough, the rest real."""
    engine = make(tmp_path)
    messages = history(40, output_chars=6000)
    shape(engine, messages)
    saved = engine.state.view.stats.last_request.saved_tokens
    budget = engine.threshold_tokens
    rough = budget + saved + 5_000  # the rough figure of the whole history: over the budget by the old measure
    assert not engine.should_defer_preflight_to_real_usage(rough)  # asked before the request
    engine.update_from_response({"prompt_tokens": budget - 3_000})  # the request as sent was 3,000 under
    assert engine.should_defer_preflight_to_real_usage(rough + 2_999)  # grew by less than the room left
    assert not engine.should_defer_preflight_to_real_usage(rough + 3_000)
    engine.last_prompt_tokens = -1  # the host's sentinel after a compaction: no real figure to build on
    assert not engine.should_defer_preflight_to_real_usage(rough + 2_999)
