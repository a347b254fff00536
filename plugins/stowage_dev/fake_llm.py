"""Scripted OpenAI-compatible model server for offline end-to-end tests.

The server runs inside the pytest process (a stdlib ``ThreadingHTTPServer`` on
``127.0.0.1`` with a random free port) while the Hermes agent under test runs
in a subprocess and talks to it over HTTP.  The test owns the *script* (what
the "model" answers) and the *recordings* (what the host sent).

Endpoints:

* ``GET /v1/models`` and ``GET /v1/models/<id>``: the one fake model, with a
  ``context_length``;
* ``POST /v1/chat/completions``: streaming requests (``"stream": true``, what
  the host's main loop sends) are answered with Server-Sent Events exactly as
  the OpenAI API does; non-streaming requests (what ``call_llm`` sends for
  auxiliary tasks such as the compaction summary) get a JSON completion.

Replies are chosen by an ordered list of :class:`Rule` objects: the first
rule whose matcher accepts the request and which still has uses left wins;
otherwise :attr:`Script.default` answers.  Example::

    with FakeLLMServer() as llm:
        llm.on(Match.user_turn("RUN-TOOL"),
               Reply.tool(ToolCall("terminal", {"command": "echo hi"})))
        llm.on(Match.aux(), Reply.text("## Goal\\nsummary"), times=None)
        ...
        assert llm.aux_requests()
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

__all__ = [
    "MODEL_ID",
    "FakeLLMServer",
    "Match",
    "Matcher",
    "RecordedRequest",
    "Reply",
    "Rule",
    "Script",
    "ToolCall",
    "message_text",
]

MODEL_ID = "fake-model"
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "cookie", "proxy-authorization"})
# Sentinel: pick "tool_calls" or "stop" from the reply's content.
AUTO = "auto"


# --------------------------------------------------------------------------
# Recorded requests
# --------------------------------------------------------------------------


def message_text(message: Mapping[str, Any] | None) -> str:
    """Return the plain text of a chat message (string or content-part list)."""
    if not message:
        return ""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return str(content)


@dataclass
class RecordedRequest:
    """One HTTP request the server received, with chat-specific helpers."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    time: float
    raw_body: bytes = b""
    rule: str | None = None  # name of the rule that answered, None = default
    # the prompt's tokens as a tokenizer-counting provider counts them (``FakeLLMServer(window=...)``), else None
    prompt_tokens: int | None = None

    # -- classification -----------------------------------------------------
    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def is_aux(self) -> bool:
        """An auxiliary ``call_llm`` (aux tasks, e.g. the compaction summary).

        Up to 0.19.0 those are the non-streaming requests; 0.20+ stream them
        while a progress hook is active, so a streamed request without tools
        and without a system prompt (the agent loop always sends both) is one
        too, and gets the scripted aux answer as a stream.
        """
        if not self.is_chat:
            return False
        return not self.stream or (not self.tools and "system" not in self.roles)

    @property
    def is_main(self) -> bool:
        """The agent loop's own model call (streamed, with its system prompt and tools)."""
        return self.is_chat and not self.is_aux

    # -- content ------------------------------------------------------------
    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return self.body["messages"]
        return []

    @property
    def roles(self) -> list[str]:
        return [str(m.get("role")) for m in self.messages]

    @property
    def tools(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict) and isinstance(self.body.get("tools"), list):
            return self.body["tools"]
        return []

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.tools:
            fn = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(fn, dict) and fn.get("name"):
                names.append(str(fn["name"]))
        return names

    @property
    def system_prompt(self) -> str:
        return "\n".join(message_text(m) for m in self.messages if m.get("role") == "system")

    @property
    def last_message(self) -> dict[str, Any] | None:
        return self.messages[-1] if self.messages else None

    @property
    def last_user_message(self) -> dict[str, Any] | None:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message
        return None

    @property
    def last_user_text(self) -> str:
        return message_text(self.last_user_message)

    @property
    def tool_results(self) -> dict[str, str]:
        """``tool_call_id -> text`` of every ``role: tool`` message."""
        return {str(m.get("tool_call_id")): message_text(m) for m in self.messages if m.get("role") == "tool"}

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """Every tool call made by assistant messages in the transcript."""
        calls: list[dict[str, Any]] = []
        for message in self.messages:
            if message.get("role") == "assistant":
                calls.extend(message.get("tool_calls") or [])
        return calls

    @property
    def text(self) -> str:
        """All message texts joined, for substring assertions."""
        return "\n".join(message_text(m) for m in self.messages)

    def contains(self, needle: str) -> bool:
        return needle in self.text

    def summary(self) -> str:
        """One-line description for assertion messages and debugging."""
        kind = "main" if self.is_main else "aux" if self.is_aux else self.method
        return (
            f"#{self.index} {kind} {self.path} roles={self.roles} "
            f"tools={len(self.tools)} last_user={self.last_user_text[:60]!r} rule={self.rule}"
        )


# --------------------------------------------------------------------------
# Matchers
# --------------------------------------------------------------------------


class Matcher:
    """A named predicate over :class:`RecordedRequest`; combine with ``& | ~``."""

    def __init__(self, predicate: Callable[[RecordedRequest], bool], description: str) -> None:
        self._predicate = predicate
        self.description = description

    def __call__(self, request: RecordedRequest) -> bool:
        return bool(self._predicate(request))

    def __and__(self, other: "Matcher") -> "Matcher":
        return Matcher(lambda r: self(r) and other(r), f"({self.description} & {other.description})")

    def __or__(self, other: "Matcher") -> "Matcher":
        return Matcher(lambda r: self(r) or other(r), f"({self.description} | {other.description})")

    def __invert__(self) -> "Matcher":
        return Matcher(lambda r: not self(r), f"~{self.description}")

    def __repr__(self) -> str:
        return f"Matcher({self.description})"


class Match:
    """Factory of common matchers (all only match chat-completion requests)."""

    @staticmethod
    def where(predicate: Callable[[RecordedRequest], bool], description: str = "custom") -> Matcher:
        return Matcher(lambda r: r.is_chat and predicate(r), description)

    @staticmethod
    def any() -> Matcher:
        return Matcher(lambda r: r.is_chat, "any")

    @staticmethod
    def main() -> Matcher:
        """A streaming request: the agent loop's own call."""
        return Matcher(lambda r: r.is_main, "main")

    @staticmethod
    def aux() -> Matcher:
        """A non-streaming request: an auxiliary ``call_llm`` (summary, ...)."""
        return Matcher(lambda r: r.is_aux, "aux")

    @staticmethod
    def summary_request(contains: str | None = None) -> Matcher:
        """An aux request made of a single user message, without tools: the
        shape of the compaction summary call (streamed on 0.20+)."""

        def pred(r: RecordedRequest) -> bool:
            return r.is_aux and r.roles == ["user"] and not r.tools and (contains is None or contains in r.text)

        return Matcher(pred, f"summary_request({contains!r})")

    @staticmethod
    def last_user_contains(marker: str) -> Matcher:
        return Matcher(lambda r: r.is_chat and marker in r.last_user_text, f"last_user~{marker!r}")

    @staticmethod
    def turn_start() -> Matcher:
        """The first model call of a user turn (the transcript ends on a user message)."""
        return Matcher(lambda r: r.is_chat and (r.last_message or {}).get("role") == "user", "turn_start")

    @staticmethod
    def user_turn(marker: str) -> Matcher:
        """First main call of the user turn whose message contains *marker*."""
        return Match.main() & Match.turn_start() & Match.last_user_contains(marker)

    @staticmethod
    def after_tool_result(call_id: str | None = None, contains: str | None = None) -> Matcher:
        """The transcript ends with tool results (optionally for *call_id* /
        containing *contains*): the follow-up call after tools ran."""

        def pred(r: RecordedRequest) -> bool:
            if not r.is_chat or (r.last_message or {}).get("role") != "tool":
                return False
            trailing: list[dict[str, Any]] = []
            for message in reversed(r.messages):
                if message.get("role") != "tool":
                    break
                trailing.append(message)
            return any(
                (call_id is None or m.get("tool_call_id") == call_id)
                and (contains is None or contains in message_text(m))
                for m in trailing
            )

        return Matcher(pred, f"after_tool_result({call_id!r},{contains!r})")

    @staticmethod
    def has_tool_result(call_id: str | None = None, contains: str | None = None) -> Matcher:
        """Any ``role: tool`` message in the transcript matches."""

        def pred(r: RecordedRequest) -> bool:
            return any(
                (call_id is None or cid == call_id) and (contains is None or contains in text)
                for cid, text in r.tool_results.items()
            )

        return Matcher(lambda r: r.is_chat and pred(r), f"has_tool_result({call_id!r},{contains!r})")

    @staticmethod
    def any_message_contains(needle: str) -> Matcher:
        return Matcher(lambda r: r.is_chat and needle in r.text, f"any~{needle!r}")

    @staticmethod
    def system_contains(needle: str) -> Matcher:
        return Matcher(lambda r: r.is_chat and needle in r.system_prompt, f"system~{needle!r}")

    @staticmethod
    def offers_tool(name: str) -> Matcher:
        return Matcher(lambda r: r.is_chat and name in r.tool_names, f"offers_tool({name!r})")


# --------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake model makes; ``id`` defaults to ``call_<n>``."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments))


@dataclass
class Reply:
    """What the fake model answers.  Build with the class methods.

    ``usage`` entries override the computed defaults (``prompt_tokens`` is
    roughly ``len(request JSON) / 4``); set ``prompt_tokens`` high to push a
    context engine over its threshold.  ``finish_reason=None`` ends a stream
    without a finish reason (a dropped stream); ``"auto"`` picks
    ``tool_calls``/``stop``.
    """

    text: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    usage: Mapping[str, Any] | None = None
    reasoning: str | None = None
    finish_reason: str | None = AUTO
    status: int = 200
    error: Mapping[str, Any] | None = None  # OpenAI error object for status >= 400
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before any byte is sent (simulate a timeout)
    raw_body: str | bytes | None = None  # sent verbatim (garbage)
    disconnect: bool = False  # close the socket without answering
    send_done: bool = True  # streams: end with ``data: [DONE]``

    # -- constructors --------------------------------------------------------
    @classmethod
    def say(cls, text: str, **kw: Any) -> "Reply":
        """A plain assistant text answer."""
        return cls(text=text, **kw)

    @classmethod
    def tool(cls, *calls: ToolCall, text: str | None = None, **kw: Any) -> "Reply":
        """One or several (parallel) tool calls, optionally with text."""
        return cls(text=text, tool_calls=tuple(calls), **kw)

    @classmethod
    def empty(cls, **kw: Any) -> "Reply":
        """An answer with empty content and no tool calls."""
        return cls(text="", **kw)

    @classmethod
    def http_error(
        cls,
        status: int,
        message: str = "",
        *,
        type: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> "Reply":
        """An HTTP error with an OpenAI-style ``{"error": {...}}`` body."""
        default_type = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            413: "invalid_request_error",
            429: "rate_limit_error",
        }.get(status, "server_error")
        error = {
            "message": message or f"fake error {status}",
            "type": type or default_type,
            "param": None,
            "code": code,
        }
        return cls(status=status, error=error, headers=dict(headers or {}), **kw)

    @classmethod
    def timeout(cls, seconds: float = 30.0, **kw: Any) -> "Reply":
        """Sleep *seconds* before answering (longer than the client timeout)."""
        kw.setdefault("text", "late answer")
        return cls(delay=seconds, **kw)

    @classmethod
    def garbage(cls, body: str | bytes = "<html>502 Bad Gateway</html> not json", **kw: Any) -> "Reply":
        """A 200 response whose body is not a valid completion (nor valid SSE JSON)."""
        return cls(raw_body=body, **kw)

    @classmethod
    def drop(cls, **kw: Any) -> "Reply":
        """Close the connection without sending a response."""
        return cls(disconnect=True, **kw)

    # -- helpers -------------------------------------------------------------
    def resolved_finish_reason(self) -> str | None:
        if self.finish_reason == AUTO:
            return "tool_calls" if self.tool_calls else "stop"
        return self.finish_reason


ReplyFactory = Callable[[RecordedRequest], Reply]


@dataclass
class Rule:
    """Answer requests accepted by ``match`` with ``reply``.

    ``times`` is how many requests the rule answers (``None`` = unlimited).
    ``reply`` may be a callable receiving the request.
    """

    match: Matcher
    reply: Reply | ReplyFactory
    times: int | None = 1
    name: str = ""
    used: int = 0

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.used >= self.times

    def render(self, request: RecordedRequest) -> Reply:
        return self.reply(request) if callable(self.reply) else self.reply


class Script:
    """Ordered rules plus a default reply; thread-safe."""

    def __init__(self, default: Reply | ReplyFactory | None = None) -> None:
        self.rules: list[Rule] = []
        self.default: Reply | ReplyFactory = default or Reply.say("OK (default reply)")
        self._lock = threading.Lock()

    def add(self, rule: Rule) -> Rule:
        with self._lock:
            if not rule.name:
                rule.name = f"rule{len(self.rules)}:{rule.match.description}"
            self.rules.append(rule)
        return rule

    def on(self, match: Matcher, reply: Reply | ReplyFactory, *, times: int | None = 1, name: str = "") -> Rule:
        """Append a rule (see :class:`Rule`)."""
        return self.add(Rule(match=match, reply=reply, times=times, name=name))

    def choose(self, request: RecordedRequest) -> tuple[Rule | None, Reply]:
        with self._lock:
            for rule in self.rules:
                if not rule.exhausted and rule.match(request):
                    rule.used += 1
                    return rule, rule.render(request)
        default = self.default
        return None, default(request) if callable(default) else default

    def pending(self) -> list[Rule]:
        """Rules with a finite ``times`` that were not fully used."""
        with self._lock:
            return [r for r in self.rules if r.times is not None and r.used < r.times]

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()


# --------------------------------------------------------------------------
# Wire format
# --------------------------------------------------------------------------


def _rough_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def build_usage(request: RecordedRequest, reply: Reply) -> dict[str, Any]:
    """The ``usage`` object: rough defaults (the tokenizer's count where the server counts) overridden by
    ``reply.usage``."""
    completion = _rough_tokens([reply.text or "", [(c.name, c.arguments_json()) for c in reply.tool_calls]])
    rough_prompt = _rough_tokens(request.messages) + _rough_tokens(request.tools) - 1
    usage: dict[str, Any] = {
        "prompt_tokens": request.prompt_tokens if request.prompt_tokens is not None else rough_prompt,
        "completion_tokens": completion,
    }
    overrides = dict(reply.usage or {})
    usage.update(overrides)
    if "total_tokens" not in overrides:
        usage["total_tokens"] = int(usage["prompt_tokens"]) + int(usage["completion_tokens"])
    return usage


def _split(text: str, size: int) -> list[str]:
    if size <= 0 or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


class _Ids:
    """Per-server id counters (completion ids and default tool-call ids)."""

    def __init__(self) -> None:
        self._completion = itertools.count(1)
        self._call = itertools.count(1)
        self._lock = threading.Lock()

    def completion(self) -> str:
        with self._lock:
            return f"chatcmpl-fake{next(self._completion):04d}"

    def call(self) -> str:
        with self._lock:
            return f"call_{next(self._call):04d}"


def completion_json(
    reply: Reply, model: str, completion_id: str, call_ids: list[str], usage: dict[str, Any] | None
) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` object (without ``usage`` where the server reports none)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json()}}
            for cid, call in zip(call_ids, reply.tool_calls)
        ]
    completion: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": reply.resolved_finish_reason()}
        ],
    }
    if usage is not None:
        completion["usage"] = usage
    return completion


def stream_events(
    reply: Reply,
    model: str,
    completion_id: str,
    call_ids: list[str],
    usage: dict[str, Any] | None,
    chunk_chars: int = 24,
) -> Iterator[str]:
    """The ``data:`` payloads of an OpenAI chat-completion SSE stream.

    Order (as OpenAI sends it): a role chunk, reasoning/content deltas,
    tool-call deltas (first chunk of each call carries index/id/type/name and
    empty arguments, later ones argument fragments), a chunk with an empty
    delta and the finish reason, then, when ``stream_options.include_usage``
    is set, a chunk with ``choices: []`` and the usage (every other chunk
    then carries ``"usage": null``), and finally ``[DONE]``.
    """
    created = int(time.time())
    with_usage = usage is not None

    def chunk(choices: list[dict[str, Any]], final_usage: Any = None) -> str:
        payload: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": choices,
        }
        if with_usage:
            payload["usage"] = final_usage
        return json.dumps(payload, ensure_ascii=False)

    def delta(d: dict[str, Any], finish: str | None = None) -> str:
        return chunk([{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}])

    first: dict[str, Any] = {"role": "assistant", "content": "" if reply.text is not None else None}
    if reply.tool_calls and not reply.text:
        first["content"] = None
    yield delta(first)
    if reply.reasoning:
        for piece in _split(reply.reasoning, chunk_chars):
            yield delta({"reasoning_content": piece})
    if reply.text:
        for piece in _split(reply.text, chunk_chars):
            yield delta({"content": piece})
    for index, (cid, call) in enumerate(zip(call_ids, reply.tool_calls)):
        yield delta(
            {
                "tool_calls": [
                    {"index": index, "id": cid, "type": "function", "function": {"name": call.name, "arguments": ""}}
                ]
            }
        )
        for piece in _split(call.arguments_json(), chunk_chars):
            yield delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    finish = reply.resolved_finish_reason()
    if finish is not None:
        yield delta({}, finish)
        if with_usage:
            yield chunk([], usage)


# --------------------------------------------------------------------------
# HTTP server
# --------------------------------------------------------------------------


MESSAGE_TOKENS = 4  # a provider's per-message framing, as OpenAI counts it


def prompt_tokens(request: RecordedRequest) -> int:
    """The prompt's tokens as a provider counts them: o200k over every text it carries, plus per-message framing.

    Every content text, tool call and the tool schemas, exactly (no sampling): the provider's count the window
    is judged by, whatever script or language the text is in.
    """
    from stowage.context_engine.chat.tokenizer_loader import load_encoding

    encoding = load_encoding("o200k_base").encoding
    if encoding is None:
        raise RuntimeError("the scripted provider counts with tiktoken, which is not available offline here")
    total = 0
    for message in request.messages:
        total += MESSAGE_TOKENS + len(encoding.encode_ordinary(message_text(message)))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {} if isinstance(call, dict) else {}
            total += len(encoding.encode_ordinary(f"{function.get('name', '')}{function.get('arguments', '')}"))
    if request.tools:
        total += len(encoding.encode_ordinary(json.dumps(request.tools, ensure_ascii=False)))
    return total


def over_window_error(window: int, tokens: int) -> dict[str, Any]:
    """The error object OpenAI-compatible providers send for a prompt over the model's window (HTTP 400)."""
    return {
        "message": f"This model's maximum context length is {window} tokens. However, your messages resulted in "
        f"{tokens} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        return  # keep pytest output clean

    # -- plumbing -------------------------------------------------------------
    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(self, raw: bytes) -> RecordedRequest:
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        return self.server.owner._record(method=self.command, path=self.path, headers=headers, body=body, raw=raw)

    def _send_json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self._send_bytes(status, data, "application/json", extra)

    def _send_bytes(self, status: int, data: bytes, content_type: str, extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # -- routes ---------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._record(b"")
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        model = owner.model_card()
        if path.endswith("/models"):
            self._send_json(200, {"object": "list", "data": [model]})
        elif path.endswith(f"/models/{owner.model}"):
            self._send_json(200, model)
        else:
            self._not_found()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        raw = self._read_body()
        request = self._record(raw)
        if not request.is_chat:
            self._not_found()
            return
        if not isinstance(request.body, dict):
            self._send_json(
                400,
                {
                    "error": {
                        "message": "body is not JSON",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
            return
        owner = self.server.owner
        if owner.window is not None:
            request.prompt_tokens = prompt_tokens(request)
            if request.prompt_tokens > owner.window:  # a real provider refuses it, whatever the script says
                request.rule = "over the window"
                self._send_json(400, {"error": over_window_error(owner.window, request.prompt_tokens)})
                return
        rule, reply = owner.script.choose(request)
        request.rule = rule.name if rule else None
        try:
            self._answer(request, reply)
        except OSError:  # the client gave up (timeout) or the server is stopping
            self.close_connection = True

    def _not_found(self) -> None:
        self._send_json(
            404,
            {
                "error": {
                    "message": f"no route {self.command} {self.path}",
                    "type": "not_found_error",
                    "param": None,
                    "code": None,
                }
            },
        )

    def _answer(self, request: RecordedRequest, reply: Reply) -> None:
        owner = self.server.owner
        if reply.delay > 0 and owner._stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.disconnect:
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        if reply.status >= 400:
            self._send_json(reply.status, {"error": dict(reply.error or {})}, reply.headers)
            return
        if reply.raw_body is not None and not request.stream:
            raw = reply.raw_body.encode() if isinstance(reply.raw_body, str) else reply.raw_body
            self._send_bytes(reply.status, raw, "application/json", reply.headers)
            return

        completion_id = owner._ids.completion()
        call_ids = [call.id or owner._ids.call() for call in reply.tool_calls]
        usage = build_usage(request, reply) if owner.reports_usage else None
        model = request.model or owner.model
        if not request.stream:
            self._send_json(reply.status, completion_json(reply, model, completion_id, call_ids, usage), reply.headers)
            return

        include_usage = usage is not None and bool((request.body.get("stream_options") or {}).get("include_usage"))
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if reply.raw_body is not None:
            raw = reply.raw_body.encode() if isinstance(reply.raw_body, str) else reply.raw_body
            self._write_chunk(b"data: " + raw + b"\n\n")
        else:
            for payload in stream_events(
                reply, model, completion_id, call_ids, usage if include_usage else None, owner.chunk_chars
            ):
                self._write_chunk(f"data: {payload}\n\n".encode())
        if reply.send_done:
            self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: "FakeLLMServer") -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (Hermes retrying, a test ending) is normal; anything else is still printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeLLMServer:
    """The scripted model server; a context manager (start on enter, stop on exit)."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        model: str = MODEL_ID,
        context_length: int = 128_000,
        chunk_chars: int = 24,
        window: int | None = None,
        reports_usage: bool = True,
    ) -> None:
        """``window``: count every prompt with the tokenizer (:func:`prompt_tokens`), report that count as its
        usage and refuse a prompt over ``window`` tokens with the HTTP 400 real providers give
        (``context_length_exceeded``).  ``reports_usage`` False: no usage at all, as many local servers."""
        self.script = script or Script()
        self.model = model
        self.context_length = context_length
        self.chunk_chars = chunk_chars
        self.window = window
        self.reports_usage = reports_usage
        self._ids = _Ids()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------
    def start(self) -> "FakeLLMServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping on a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def model_card(self) -> dict[str, Any]:
        return {
            "id": self.model,
            "object": "model",
            "created": 0,
            "owned_by": "stowage-harness",
            "context_length": self.context_length,
            "max_model_len": self.context_length,
        }

    # -- script shortcuts ---------------------------------------------------
    def on(self, match: Matcher, reply: Reply | ReplyFactory, *, times: int | None = 1, name: str = "") -> Rule:
        """Append a rule to the script; see :meth:`Script.on`."""
        return self.script.on(match, reply, times=times, name=name)

    def set_default(self, reply: Reply | ReplyFactory) -> None:
        self.script.default = reply

    # -- recordings -----------------------------------------------------------
    def _record(self, *, method: str, path: str, headers: dict[str, str], body: Any, raw: bytes) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(
                index=len(self._requests),
                method=method,
                path=path,
                headers=headers,
                body=body,
                time=time.time(),
                raw_body=raw,
            )
            self._requests.append(request)
            self._lock.notify_all()
        return request

    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    def chat_requests(self, stream: bool | None = None) -> list[RecordedRequest]:
        """Chat-completion requests, optionally only streaming/non-streaming."""
        return [r for r in self.requests() if r.is_chat and (stream is None or r.stream == stream)]

    def main_requests(self) -> list[RecordedRequest]:
        """The agent loop's own calls (see :attr:`RecordedRequest.is_main`)."""
        return [r for r in self.requests() if r.is_main]

    def aux_requests(self) -> list[RecordedRequest]:
        """Auxiliary ``call_llm`` calls, streamed or not (see :attr:`RecordedRequest.is_aux`)."""
        return [r for r in self.requests() if r.is_aux]

    def summary_requests(self, contains: str | None = None) -> list[RecordedRequest]:
        matcher = Match.summary_request(contains)
        return [r for r in self.requests() if matcher(r)]

    def refused_requests(self) -> list[RecordedRequest]:
        """Requests refused as over the window (``window`` set)."""
        return [r for r in self.requests() if r.rule == "over the window"]

    def last_main_request(self) -> RecordedRequest:
        main = self.main_requests()
        if not main:
            raise AssertionError("no main (streaming) request recorded:\n" + self.describe())
        return main[-1]

    def last_aux_request(self) -> RecordedRequest:
        aux = self.aux_requests()
        if not aux:
            raise AssertionError("no aux (non-streaming) request recorded:\n" + self.describe())
        return aux[-1]

    def requests_between(self, start: float, end: float) -> list[RecordedRequest]:
        """Requests received in the wall-clock window ``[start, end]`` (e.g. a
        driver step's ``started_at``/``ended_at``)."""
        return [r for r in self.requests() if start <= r.time <= end]

    def matching(self, matcher: Matcher) -> list[RecordedRequest]:
        return [r for r in self.requests() if matcher(r)]

    def clear(self) -> None:
        """Forget recordings (the script is kept)."""
        with self._lock:
            self._requests.clear()

    def wait_for(self, matcher: Matcher, timeout: float = 10.0) -> RecordedRequest:
        """Block until a request accepted by *matcher* was recorded."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for request in self._requests:
                    if matcher(request):
                        return request
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no request matched {matcher.description}")
                self._lock.wait(remaining)

    def describe(self, requests: Iterable[RecordedRequest] | None = None) -> str:
        """Human-readable list of recorded requests (for assertion messages)."""
        items = list(requests) if requests is not None else self.requests()
        return "\n".join(r.summary() for r in items) or "(no requests)"
