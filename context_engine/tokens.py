"""Token accounting with tiktoken, cached per message.

Compaction asks "how many tokens is this message?" again and again for the
same messages (every turn, every pass).  The counter caches each message's
count under a cheap structural key, so repeated estimates cost O(new
messages), not O(history).  Texts over 1 KB are estimated from a tokenized
sample of chunks spread evenly over them (the tokens-per-character ratio of
the sample times the length), so a 1 MB tool output costs the same as a 1 KB
one; tests check the estimate stays close to the exact count.
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


class TokenCounter:
    """Counts tokens of texts and messages; never raises."""

    def __init__(self, encoding_name: str = "o200k_base", *, allow_download: bool = False,
                 cache_size: int = 50_000) -> None:
        self.encoding_name = encoding_name
        self.allow_download = allow_download
        self._cache: OrderedDict[Hashable, int] = OrderedDict()
        self._cache_size = cache_size
        self._loaded: LoadedEncoding | None = None
        self.hits = 0
        self.misses = 0

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
        return clone

    # -- texts -----------------------------------------------------------
    def count_text(self, text: str) -> int:
        if not text:
            return 0
        encoding = self.loaded.encoding
        if encoding is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN_FALLBACK)
        if len(text) <= SAMPLE_THRESHOLD_CHARS:
            return len(encoding.encode_ordinary(text))
        size = min(SAMPLE_CHARS, len(text) // SAMPLE_CHUNKS)
        step = (len(text) - size) / (SAMPLE_CHUNKS - 1)
        tokens = chars = 0
        for i in range(SAMPLE_CHUNKS):
            chunk = text[int(i * step): int(i * step) + size]
            first, last = chunk.find(" "), chunk.rfind(" ")
            if 0 <= first < last:
                chunk = chunk[first:last]  # a word cut in two costs an extra token: cut at spaces
            tokens += len(encoding.encode_ordinary(chunk))
            chars += len(chunk)
        return math.ceil(len(text) * tokens / chars)

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
        if not isinstance(message, Mapping):
            return MESSAGE_OVERHEAD_TOKENS
        total = MESSAGE_OVERHEAD_TOKENS
        for part in content_parts(message.get("content")):
            if is_image_part(part):
                total += IMAGE_TOKENS
            elif isinstance(part, str):
                total += self.count_text(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                total += self.count_text(part["text"])
        for call in tool_calls_of(message):
            total += 4 + self.count_text(call_name(call)) + self.count_text(call_arguments_text(call))
        return total


def _message_key(message: Any) -> Hashable | None:
    """A hashable fingerprint of what determines a message's token count.

    Strings hash once and cache their hash, so building this key is cheap even
    for long contents.  Returns None for shapes we cannot key (never cached).
    """
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    if isinstance(content, str) or content is None:
        content_key: Hashable = content
    elif isinstance(content, list):
        parts: list[Hashable] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text")
                parts.append((part.get("type"), text if isinstance(text, str) else None))
            else:
                return None
        content_key = tuple(parts)
    else:
        return None
    calls = tuple((call_name(c), call_arguments_text(c)) for c in tool_calls_of(message))
    return (message.get("role"), content_key, calls)
