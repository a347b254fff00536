"""What a provider would bill for the requests of a replayed session.

Every main request is counted as sent (tools, then messages), with tiktoken
``o200k_base`` and the same counter for every engine.  A message counts the
tokens of its wire text (role, content, each tool call's id, name and
arguments, the tool-call id it answers) plus :data:`MESSAGE_OVERHEAD` for the
chat framing; the tool list counts the tokens of its JSON.

Prompt caching: the cached part of a request is its longest common prefix
with the previous main request of the same session, measured in whole
messages (tools first: a changed tool list caches nothing).  Real providers
cache in blocks of a few dozen tokens at arbitrary points; the message grain
undercounts a cache hit by at most the tail of the first differing message.
A request's cost in input-token units is ``cached * read + uncached * write``
under a :class:`PriceModel`; summary requests (the compactor's own model
calls) are never cached and cost ``tokens * write``.

Counts are cached per message under a structural key (strings hash once), so
a history sent again costs only its new messages; :meth:`TokenMeter.clear`
drops the cache between sessions (memory stays bounded while streaming).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Sequence, cast

MESSAGE_OVERHEAD = 4  # role markers and separators per chat message (OpenAI's published figure, rounded)


@dataclass(frozen=True)
class PriceModel:
    """Prices of cached and uncached input tokens, relative to plain input."""

    name: str
    read: float
    write: float

    def request_cost(self, cached: int, uncached: int) -> float:
        return cached * self.read + uncached * self.write

    def summary_cost(self, tokens: int) -> float:
        return tokens * self.write


# reads 0.1x / writes 1.25x: Anthropic-style explicit caching; reads 0.5x / writes 1.0x: OpenAI-style automatic.
PRICE_MODELS: tuple[PriceModel, ...] = (
    PriceModel("read0.1_write1.25", 0.1, 1.25),
    PriceModel("read0.5_write1.0", 0.5, 1.0),
)


def default_encoder() -> Callable[[str], int]:
    """Exact o200k token counts (tiktoken, loaded offline like Stowage's counter)."""
    from ....context_engine.chat.tokenizer_loader import load_encoding

    encoding = load_encoding("o200k_base").encoding
    if encoding is None:  # no tokenizer files: the documented chars/4 fallback
        return lambda text: (len(text) + 3) // 4
    encode = encoding.encode_ordinary
    return lambda text: len(encode(text)) if text else 0


def message_key(message: Mapping[str, Any]) -> Hashable:
    """What of a wire message decides its tokens and its cache identity."""
    content = message.get("content")
    if not (isinstance(content, str) or content is None):
        content = json.dumps(content, ensure_ascii=False, sort_keys=True)
    calls: tuple[Hashable, ...] = ()
    raw_calls = message.get("tool_calls")
    if isinstance(raw_calls, list):
        keyed: list[Hashable] = []
        for call in raw_calls:
            if not isinstance(call, Mapping):
                keyed.append(json.dumps(call, ensure_ascii=False, sort_keys=True, default=str))
                continue
            raw_function = call.get("function")
            function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
            keyed.append((str(call.get("id") or ""), str(function.get("name") or ""), arguments))
        calls = tuple(keyed)
    return (
        str(message.get("role") or ""),
        content,
        calls,
        str(message.get("tool_call_id") or ""),
        str(message.get("name") or ""),
    )


def _key_text(key: Hashable) -> str:
    role, content, calls, call_id, name = cast("tuple[str, str | None, tuple[Any, ...], str, str]", key)
    pieces = [role, name, call_id, content or ""]
    for call in calls:
        pieces.extend(call if isinstance(call, tuple) else (call,))
    return "\n".join(p for p in pieces if p)


class TokenMeter:
    """Token counts of messages and tool lists, cached by structure."""

    def __init__(self, encode: Callable[[str], int] | None = None) -> None:
        self._encode = encode or default_encoder()
        self._messages: dict[Hashable, int] = {}
        self._tools: dict[str, int] = {}

    def count_text(self, text: str) -> int:
        return self._encode(text) if text else 0

    def message_tokens(self, key: Hashable) -> int:
        tokens = self._messages.get(key)
        if tokens is None:
            tokens = self._messages[key] = self._encode(_key_text(key)) + MESSAGE_OVERHEAD
        return tokens

    def tools_tokens(self, tools_text: str) -> int:
        tokens = self._tools.get(tools_text)
        if tokens is None:
            tokens = self._tools[tools_text] = self._encode(tools_text) if tools_text else 0
        return tokens

    def clear(self) -> None:
        self._messages.clear()
        self._tools.clear()


def tools_text(tools: Any) -> str:
    if not tools:
        return ""
    return json.dumps(tools, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


@dataclass
class RequestBill:
    tokens: int
    cached: int
    messages: int


@dataclass
class SessionBill:
    """Running totals of one session under every price model."""

    price_models: Sequence[PriceModel] = PRICE_MODELS
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    summary_calls: int = 0
    summary_tokens: int = 0
    peak_request_tokens: int = 0
    cost: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cost = {model.name: 0.0 for model in self.price_models}

    @property
    def billed_tokens(self) -> int:
        """Main requests plus the summary requests' input."""
        return self.prompt_tokens + self.summary_tokens

    def add_request(self, bill: RequestBill) -> None:
        self.requests += 1
        self.prompt_tokens += bill.tokens
        self.cached_tokens += bill.cached
        self.peak_request_tokens = max(self.peak_request_tokens, bill.tokens)
        for model in self.price_models:
            self.cost[model.name] += model.request_cost(bill.cached, bill.tokens - bill.cached)

    def add_summary(self, tokens: int) -> None:
        self.summary_calls += 1
        self.summary_tokens += tokens
        for model in self.price_models:
            self.cost[model.name] += model.summary_cost(tokens)


class RequestBiller:
    """Bills the main requests of one session, in order, with their cached prefix."""

    def __init__(self, meter: TokenMeter) -> None:
        self.meter = meter
        self._previous_tools: str | None = None
        self._previous_keys: list[Hashable] = []
        self._tools_memo: tuple[tuple[int, ...], Any, str] | None = None
        self._key_memo: dict[int, tuple[Any, Hashable]] = {}

    def bill(self, request: Mapping[str, Any]) -> RequestBill:
        """Bill a request; messages and tool schemas are memoized by identity (never mutate them once sent)."""
        return self.bill_keys(
            self.tools_text_of(request.get("tools")), [self.key_of(m) for m in request.get("messages") or []]
        )

    def key_of(self, message: Any) -> Hashable:
        entry = self._key_memo.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        key = message_key(message) if isinstance(message, Mapping) else ("", str(message), (), "", "")
        self._key_memo[id(message)] = (message, key)
        return key

    def tools_text_of(self, tools: Any) -> str:
        if not isinstance(tools, list):
            return tools_text(tools)
        ids = tuple(map(id, tools))
        memo = self._tools_memo
        if memo is not None and memo[0] == ids:
            return memo[2]
        text = tools_text(tools)
        self._tools_memo = (ids, list(tools), text)  # the list keeps the schemas alive, so their ids stay theirs
        return text

    def forget(self) -> None:
        """Drop the identity memos (end of a session)."""
        self._key_memo.clear()
        self._tools_memo = None

    def bill_keys(self, tools_text_: str, keys: list[Hashable]) -> RequestBill:
        tools_tokens = self.meter.tools_tokens(tools_text_)
        counts = [self.meter.message_tokens(k) for k in keys]
        total = tools_tokens + sum(counts)
        cached = 0
        if self._previous_tools is not None and tools_text_ == self._previous_tools:
            cached = tools_tokens
            for index, (key, previous) in enumerate(zip(keys, self._previous_keys, strict=False)):
                if key != previous:
                    break
                cached += counts[index]
        self._previous_tools, self._previous_keys = tools_text_, keys
        return RequestBill(tokens=total, cached=cached, messages=len(keys))
