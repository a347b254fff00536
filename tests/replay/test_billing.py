"""Billing: token counts as sent, the cached prefix, the two price models."""

from __future__ import annotations

import pytest

from stowage.command.replay.offline.billing import (
    MESSAGE_OVERHEAD,
    PRICE_MODELS,
    PriceModel,
    RequestBiller,
    SessionBill,
    TokenMeter,
    message_key,
    tools_text,
)


def words(text: str) -> int:
    return len(text.split())


def meter() -> TokenMeter:
    return TokenMeter(encode=words)


SYSTEM = {"role": "system", "content": "you are a bot"}  # 5 words with the role
USER = {"role": "user", "content": "fix the failing test"}  # 5 words with the role
ASSISTANT = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}],
}
TOOL = {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"}
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "run", "parameters": {}}}]


def test_message_tokens_are_the_wire_text_plus_framing() -> None:
    m = meter()
    # role + content words
    assert m.message_tokens(message_key(SYSTEM)) == 5 + MESSAGE_OVERHEAD
    assert m.message_tokens(message_key(USER)) == 5 + MESSAGE_OVERHEAD
    # role, then the call's id, name and arguments
    assert m.message_tokens(message_key(ASSISTANT)) == len('assistant c1 bash {"command": "ls"}'.split()) + 4
    # role, the answered call id, the content
    assert m.message_tokens(message_key(TOOL)) == len("tool c1 a.py b.py".split()) + 4


def test_hand_computed_session_with_cached_prefix_and_both_price_models() -> None:
    m = meter()
    biller = RequestBiller(m)
    bill = SessionBill()
    tools_tokens = words(tools_text(TOOLS))
    s, u, a, t = (m.message_tokens(message_key(x)) for x in (SYSTEM, USER, ASSISTANT, TOOL))

    first = biller.bill({"tools": TOOLS, "messages": [SYSTEM, USER]})
    assert (first.tokens, first.cached) == (tools_tokens + s + u, 0)  # nothing before it: all written
    second = biller.bill({"tools": TOOLS, "messages": [SYSTEM, USER, ASSISTANT, TOOL]})
    assert second.tokens == tools_tokens + s + u + a + t
    assert second.cached == tools_tokens + s + u  # the previous request is its prefix
    # a changed message in the middle caches only what precedes it
    third = biller.bill({"tools": TOOLS, "messages": [SYSTEM, {"role": "user", "content": "other"}, ASSISTANT, TOOL]})
    assert third.cached == tools_tokens + s
    bill.add_request(first)
    bill.add_request(second)
    bill.add_request(third)
    bill.add_summary(100)

    read_cheap, read_half = PRICE_MODELS
    assert (read_cheap.read, read_cheap.write, read_half.read, read_half.write) == (0.1, 1.25, 0.5, 1.0)
    total = first.tokens + second.tokens + third.tokens
    cached = second.cached + third.cached
    assert bill.prompt_tokens == total and bill.cached_tokens == cached
    assert bill.billed_tokens == total + 100
    assert bill.summary_calls == 1
    for model in PRICE_MODELS:
        assert bill.cost[model.name] == pytest.approx(
            cached * model.read + (total - cached) * model.write + 100 * model.write
        )
    assert bill.peak_request_tokens == second.tokens


def test_a_changed_tool_list_caches_nothing() -> None:
    biller = RequestBiller(meter())
    biller.bill({"tools": TOOLS, "messages": [SYSTEM, USER]})
    other_tools = TOOLS + [{"type": "function", "function": {"name": "grep", "description": "", "parameters": {}}}]
    assert biller.bill({"tools": other_tools, "messages": [SYSTEM, USER]}).cached == 0


def test_equal_content_in_new_objects_is_still_a_cache_hit() -> None:
    biller = RequestBiller(meter())
    biller.bill({"tools": TOOLS, "messages": [SYSTEM, USER]})
    again = biller.bill({"tools": [dict(TOOLS[0])], "messages": [dict(SYSTEM), dict(USER)]})
    assert again.cached == again.tokens


def test_price_model_arithmetic() -> None:
    model = PriceModel("x", read=0.1, write=1.25)
    assert model.request_cost(cached=1000, uncached=200) == pytest.approx(100 + 250)
    assert model.summary_cost(400) == pytest.approx(500)


def test_real_tokenizer_counts_are_exact_o200k() -> None:
    real = TokenMeter()
    from stowage.context_engine.chat.tokenizer_loader import load_encoding

    encoding = load_encoding("o200k_base").encoding
    if encoding is None:
        pytest.skip("tiktoken files unavailable")
    text = "def f(x):\n    return x * 2  # doubled\n" * 50
    assert real.count_text(text) == len(encoding.encode_ordinary(text))
