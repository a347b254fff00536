"""The scripted model server speaks the OpenAI wire format (checked with the
``openai`` client the host itself uses), follows its script and records."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall

pytestmark = pytest.mark.e2e


def client(server: FakeLLMServer, timeout: float = 10.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-secret", max_retries=0, timeout=timeout)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_models_endpoint_lists_fake_model(fake_llm: FakeLLMServer) -> None:
    models = client(fake_llm).models.list()
    assert [m.id for m in models.data] == ["fake-model"]
    assert models.data[0].model_extra["context_length"] == 128_000


def test_default_reply_non_streaming(fake_llm: FakeLLMServer) -> None:
    reply = client(fake_llm).chat.completions.create(model="fake-model", messages=user("hi"))
    assert reply.choices[0].message.content == "OK (default reply)"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.prompt_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    (recorded,) = fake_llm.aux_requests()
    assert recorded.is_aux and not recorded.stream
    assert recorded.headers["authorization"] == "***"  # secrets are not recorded
    assert recorded.last_user_text == "hi"


def test_streaming_text_and_usage_chunk(fake_llm: FakeLLMServer) -> None:
    long_text = "streamed " * 20
    fake_llm.on(Match.where(lambda r: r.stream, "streamed"), Reply.say(long_text, usage={"prompt_tokens": 100_000}))
    stream = client(fake_llm).chat.completions.create(
        model="fake-model", messages=user("go"), stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == long_text
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1  # really split
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == 100_000
    assert all(c.usage is None for c in chunks[:-1])


def test_streaming_without_include_usage_has_no_usage_chunk(fake_llm: FakeLLMServer) -> None:
    chunks = list(client(fake_llm).chat.completions.create(model="fake-model", messages=user("x"), stream=True))
    assert all(c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_streaming_parallel_tool_calls(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(
        Match.user_turn("TOOLS"),
        Reply.tool(
            ToolCall("terminal", {"command": "echo " + "x" * 60}), ToolCall("read_file", {"path": "a"}, id="call_fixed")
        ),
    )
    chunks = list(
        client(fake_llm).chat.completions.create(
            model="fake-model", stream=True, messages=[{"role": "system", "content": "agent"}, *user("TOOLS")]
        )
    )
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] = tc.id or entry["id"]
            entry["name"] = tc.function.name if tc.function and tc.function.name else entry["name"]
            entry["arguments"] += (tc.function.arguments or "") if tc.function else ""
    assert calls[0]["name"] == "terminal" and calls[0]["id"].startswith("call_")
    assert json.loads(calls[0]["arguments"]) == {"command": "echo " + "x" * 60}
    assert calls[1] == {"id": "call_fixed", "name": "read_file", "arguments": '{"path": "a"}'}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_non_streaming_tool_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(Match.aux(), Reply.tool(ToolCall("harness_echo", {"text": "t"})))
    message = client(fake_llm).chat.completions.create(model="fake-model", messages=user("x")).choices[0].message
    assert message.tool_calls[0].function.name == "harness_echo"
    assert json.loads(message.tool_calls[0].function.arguments) == {"text": "t"}


@pytest.mark.parametrize(
    ("status", "error_cls"),
    [(500, openai.InternalServerError), (401, openai.AuthenticationError), (429, openai.RateLimitError)],
)
def test_http_errors_have_openai_error_bodies(fake_llm: FakeLLMServer, status: int, error_cls: type) -> None:
    fake_llm.on(Match.any(), Reply.http_error(status, "scripted failure"))
    with pytest.raises(error_cls) as info:
        client(fake_llm).chat.completions.create(model="fake-model", messages=user("x"))
    assert info.value.status_code == status
    assert info.value.body["message"] == "scripted failure"


def test_delay_longer_than_client_timeout_times_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(Match.any(), Reply.timeout(5))
    with pytest.raises(openai.APITimeoutError):
        client(fake_llm, timeout=0.5).chat.completions.create(model="fake-model", messages=user("x"))


def test_garbage_empty_and_dropped_replies(fake_llm: FakeLLMServer) -> None:
    fake_llm.on(Match.last_user_contains("GARBAGE"), Reply.garbage())
    fake_llm.on(Match.last_user_contains("EMPTY"), Reply.empty())
    fake_llm.on(Match.last_user_contains("DROP"), Reply.drop())
    c = client(fake_llm)
    raw = httpx.post(f"{fake_llm.base_url}/chat/completions", json={"model": "m", "messages": user("GARBAGE")})
    assert raw.status_code == 200 and raw.text.startswith("<html>")
    assert c.chat.completions.create(model="fake-model", messages=user("EMPTY")).choices[0].message.content == ""
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="fake-model", messages=user("DROP"))


def test_rules_are_ordered_one_shot_or_repeating(fake_llm: FakeLLMServer) -> None:
    once = fake_llm.on(Match.last_user_contains("A"), Reply.say("first A"))
    always = fake_llm.on(Match.last_user_contains("A"), Reply.say("later A"), times=None)
    dynamic = fake_llm.on(Match.last_user_contains("B"), lambda r: Reply.say(f"saw {len(r.messages)}"), times=2)
    c = client(fake_llm)

    def ask(text: str) -> str:
        return c.chat.completions.create(model="fake-model", messages=user(text)).choices[0].message.content

    assert [ask("A"), ask("A"), ask("A")] == ["first A", "later A", "later A"]
    assert [ask("B"), ask("B"), ask("B")] == ["saw 1", "saw 1", "OK (default reply)"]
    assert (once.used, always.used, dynamic.used) == (1, 2, 2)
    assert fake_llm.script.pending() == []
    assert [r.rule for r in fake_llm.chat_requests()][-1] is None  # default answered


def test_matchers_on_tool_results_and_turn_start(fake_llm: FakeLLMServer) -> None:
    transcript = [  # the agent loop always sends its system prompt (a bare streamed user message is aux)
        {"role": "system", "content": "agent"},
        {"role": "user", "content": "MARK"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "RESULT-XYZ"},
    ]
    fake_llm.on(Match.after_tool_result("c1", contains="XYZ"), Reply.say("got tool"))
    fake_llm.on(Match.user_turn("MARK"), Reply.say("turn start"))
    c = client(fake_llm)
    kw = {"model": "fake-model", "stream": True}
    first = "".join(
        ch.choices[0].delta.content or ""
        for ch in c.chat.completions.create(messages=transcript[:2], **kw)
        if ch.choices
    )
    second = "".join(
        ch.choices[0].delta.content or "" for ch in c.chat.completions.create(messages=transcript, **kw) if ch.choices
    )
    assert (first, second) == ("turn start", "got tool")
    last = fake_llm.last_main_request()
    assert last.tool_results == {"c1": "RESULT-XYZ"}
    assert Match.has_tool_result(contains="XYZ")(last)
    assert not Match.turn_start()(last)


def test_summary_request_shape(fake_llm: FakeLLMServer) -> None:
    c = client(fake_llm)
    c.chat.completions.create(model="fake-model", messages=user("summarize this"))
    c.chat.completions.create(model="fake-model", messages=[{"role": "system", "content": "s"}, *user("title")])
    assert [r.last_user_text for r in fake_llm.summary_requests()] == ["summarize this"]
    assert len(fake_llm.aux_requests()) == 2


def test_stop_interrupts_pending_delays() -> None:
    server = FakeLLMServer().start()
    server.on(Match.any(), Reply.timeout(60))
    try:
        with pytest.raises(openai.APITimeoutError):
            client(server, timeout=0.3).chat.completions.create(model="fake-model", messages=user("x"))
    finally:
        started = time.monotonic()
        server.stop()
    assert time.monotonic() - started < 30  # functional: did not wait out the 60 s delay
    with pytest.raises(RuntimeError):
        _ = server.base_url


def test_a_client_hanging_up_prints_no_traceback(fake_llm: FakeLLMServer, capfd: pytest.CaptureFixture[str]) -> None:
    """``run.py demo`` once printed socketserver's traceback for a connection Hermes reset mid-request."""
    import socket
    import struct

    with socket.create_connection(("127.0.0.1", fake_llm.port)) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # an unfinished request
        time.sleep(0.2)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    time.sleep(0.5)  # the handler thread reads, meets the reset, and reports it (or not)
    reply = client(fake_llm).chat.completions.create(model="fake-model", messages=user("still there?"))
    assert reply.choices[0].message.content == "OK (default reply)"
    assert "Traceback" not in capfd.readouterr().err
