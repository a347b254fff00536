"""Token accounting with tiktoken, cached per message.

Compaction asks "how many tokens is this message?" again and again for the
same messages (every turn, every pass).  The counter caches each message's
count under a cheap structural key, so repeated estimates cost O(new
messages), not O(history).  Texts over 1 KB are estimated from a tokenized
sample of chunks spread evenly over them (the tokens-per-character ratio of
the sample times the length), so a 1 MB tool output costs the same as a 1 KB
one; tests check the estimate stays close to the exact count.

The hot path of a compaction (walking back to size the verbatim tail) uses
:meth:`TokenCounter.estimate_message`: a message's cached count when there
is one, otherwise its length times the tokens-per-character ratio tiktoken
measured on this history (:meth:`calibrate` tokenizes one small sample per
compaction).  Tokenizing a cold 25k-token tail exactly would cost more than
the whole compaction is allowed to.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Hashable, Iterable, Mapping

from .messages import call_arguments_text, call_name, content_parts, is_image_part, tool_calls_of
from .tokenizer_loader import LoadedEncoding, load_encoding

IMAGE_TOKENS = 1600
MESSAGE_OVERHEAD_TOKENS = 4
SAMPLE_THRESHOLD_CHARS = 1_024
SAMPLE_CHUNKS = 12  # spread evenly: head/middle/tail alone misjudge mixed content by 20-40%
SAMPLE_CHARS = 256  # per chunk
CHARS_PER_TOKEN_FALLBACK = 4.0
DEFAULT_TOKENS_PER_CHAR = 0.27  # typical of English, code and logs in o200k; replaced by measurements
CALIBRATION_CHUNKS = 8
CALIBRATION_CHARS = 192
CALIBRATED_CHARS = 200_000  # measured this much text: the ratio is settled


class TokenCounter:
    """Counts tokens of texts and messages; never raises."""

    def __init__(
        self, encoding_name: str = "o200k_base", *, allow_download: bool = False, cache_size: int = 50_000
    ) -> None:
        self.encoding_name = encoding_name
        self.allow_download = allow_download
        self._cache: OrderedDict[Hashable, int] = OrderedDict()
        self._cache_size = cache_size
        self._loaded: LoadedEncoding | None = None
        self.hits = 0
        self.misses = 0
        self._measured_tokens = 0
        self._measured_chars = 0

    # -- backend ---------------------------------------------------------
    @property
    def loaded(self) -> LoadedEncoding:
        if self._loaded is None:
            self._loaded = load_encoding(self.encoding_name, allow_download=self.allow_download)
        return self._loaded

    @property
    def backend(self) -> str:
        """``tiktoken:<encoding>`` or ``estimate`` (chars / 4)."""
        return f"tiktoken:{self.encoding_name}" if self.loaded.encoding is not None else "estimate"

    def __deepcopy__(self, memo: dict[int, Any]) -> "TokenCounter":
        """Agents get their own cache but share the (immutable) encoding."""
        clone = TokenCounter(self.encoding_name, allow_download=self.allow_download, cache_size=self._cache_size)
        clone._loaded = self._loaded
        clone._measured_tokens, clone._measured_chars = self._measured_tokens, self._measured_chars
        return clone

    # -- texts -----------------------------------------------------------
    def count_text(self, text: str) -> int:
        if not text:
            return 0
        encoding = self.loaded.encoding
        if encoding is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN_FALLBACK)
        if len(text) <= SAMPLE_THRESHOLD_CHARS:
            tokens = len(encoding.encode_ordinary(text))
            self._learn(tokens, len(text))
            return tokens
        size = min(SAMPLE_CHARS, len(text) // SAMPLE_CHUNKS)
        step = (len(text) - size) / (SAMPLE_CHUNKS - 1)
        chunks = []
        for i in range(SAMPLE_CHUNKS):
            chunk = text[int(i * step) : int(i * step) + size]
            first, last = chunk.find(" "), chunk.rfind(" ")
            if 0 <= first < last:
                chunk = chunk[first:last]  # a word cut in two costs an extra token: cut at spaces
            chunks.append(chunk)
        # One encode call for the whole sample (per-call overhead dominates at
        # this size); each "\n" separator costs about one token.
        tokens = max(1, len(encoding.encode_ordinary("\n".join(chunks))) - (len(chunks) - 1))
        chars = max(1, sum(map(len, chunks)))
        self._learn(tokens, chars)
        return math.ceil(len(text) * tokens / chars)

    # -- estimates ---------------------------------------------------------
    def _learn(self, tokens: int, chars: int) -> None:
        if chars >= 16:
            self._measured_tokens += tokens
            self._measured_chars += chars

    @property
    def tokens_per_char(self) -> float:
        """Tokens per character measured by tiktoken on this counter's texts so far."""
        if self._measured_chars >= 512:
            return self._measured_tokens / self._measured_chars
        if self.loaded.encoding is None:
            return 1 / CHARS_PER_TOKEN_FALLBACK
        return DEFAULT_TOKENS_PER_CHAR

    def calibrate(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Measure tokens per character on a sample of these messages (one tokenizer call).

        Skipped once the counter has measured plenty of this session's text.
        """
        encoding = self.loaded.encoding
        if encoding is None or self._measured_chars >= CALIBRATED_CHARS:
            return
        check_cache = bool(self._cache)
        chunks: list[str] = []
        for message in messages:
            if check_cache and _message_key(message) in self._cache:
                continue
            content = message.get("content") if isinstance(message, dict) else None
            text = content if isinstance(content, str) and content else _billed_text(message)
            if len(text) >= 64:
                middle = len(text) // 2
                chunks.append(text[max(0, middle - CALIBRATION_CHARS // 2) : middle + CALIBRATION_CHARS // 2])
                if len(chunks) >= CALIBRATION_CHUNKS:
                    break
        if chunks:
            tokens = max(1, len(encoding.encode_ordinary("\n".join(chunks))) - (len(chunks) - 1))
            self._learn(tokens, sum(map(len, chunks)))

    def estimate_message(self, message: Mapping[str, Any]) -> int:
        """The cached exact count, or length x measured tokens-per-char (no tokenizing)."""
        if self._cache:
            key = _message_key(message)
            cached = self._cache.get(key) if key is not None else None
            if cached is not None:
                return cached
        if not isinstance(message, dict):
            return MESSAGE_OVERHEAD_TOKENS
        content = message.get("content")
        if content.__class__ is str and not message.get("tool_calls"):  # the common case, kept cheap
            return MESSAGE_OVERHEAD_TOKENS + math.ceil(len(content) * self.tokens_per_char)
        images = sum(1 for p in content_parts(content) if is_image_part(p))
        calls = tool_calls_of(message)
        return (
            MESSAGE_OVERHEAD_TOKENS
            + images * IMAGE_TOKENS
            + 4 * len(calls)
            + math.ceil(_text_length(content, calls) * self.tokens_per_char)
        )

    # -- messages --------------------------------------------------------
    def count_message(self, message: Mapping[str, Any]) -> int:
        key = _message_key(message)
        if key is not None:
            cached = self._cache.get(key)
            if cached is not None:
                self.hits += 1
                self._cache.move_to_end(key)
                return cached
        self.misses += 1
        value = self._count_uncached(message)
        if key is not None:
            self._cache[key] = value
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return value

    def count_messages(self, messages: Iterable[Mapping[str, Any]]) -> int:
        return sum(self.count_message(m) for m in messages)

    def _count_uncached(self, message: Mapping[str, Any]) -> int:
        if not isinstance(message, dict):
            return MESSAGE_OVERHEAD_TOKENS
        total = MESSAGE_OVERHEAD_TOKENS
        for part in content_parts(message.get("content")):
            if is_image_part(part):
                total += IMAGE_TOKENS
            elif isinstance(part, str):
                total += self.count_text(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                total += self.count_text(part["text"])
        for call in tool_calls_of(message):
            total += 4 + self.count_text(call_name(call)) + self.count_text(call_arguments_text(call))
        return total


def _text_pieces(content: Any, calls: list[dict[str, Any]]) -> list[str]:
    """Every text of a message that costs tokens: content parts, call names and arguments."""
    pieces = (
        [content]
        if content.__class__ is str
        else [
            part if isinstance(part, str) else part["text"]
            for part in content_parts(content)
            if isinstance(part, str) or (isinstance(part, dict) and isinstance(part.get("text"), str))
        ]
    )
    for call in calls:
        pieces.append(call_name(call))
        pieces.append(call_arguments_text(call))
    return pieces


def _billed_text(message: Mapping[str, Any]) -> str:
    """All the text of a message that costs tokens, joined."""
    pieces = _text_pieces(message.get("content"), tool_calls_of(message))
    return pieces[0] if len(pieces) == 1 else "".join(pieces)


def _text_length(content: Any, calls: list[dict[str, Any]]) -> int:
    """``len(_billed_text(message))`` without building the joined string."""
    return sum(map(len, _text_pieces(content, calls)))


def _message_key(message: Any) -> Hashable | None:
    """A hashable fingerprint of what determines a message's token count.

    Strings hash once and cache their hash, so building this key is cheap even
    for long contents.  Returns None for shapes we cannot key (never cached).
    """
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str) or content is None:
        content_key: Hashable = content
    elif isinstance(content, list):
        parts: list[Hashable] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                parts.append((part.get("type"), text if isinstance(text, str) else None))
            else:
                return None
        content_key = tuple(parts)
    else:
        return None
    calls = tuple((call_name(c), call_arguments_text(c)) for c in tool_calls_of(message))
    return (message.get("role"), content_key, calls)
