"""Pins for outputs the agent is working with: those its recent messages quote.

When an assistant message (its words or its tool-call arguments) uses a
distinctive token of an earlier tool output (``quotes.py``: an identifier,
path or code line seen first in that output), the agent is working with that
output, and it will likely quote it again.  Such an output is pinned from
that message for ``turns`` model turns, like an output read back with
``stowage_fetch``: a view step passes it over, and the first step after the
pin ends stubs it.

A pin starts at the quoting message, so it depends only on the history up to
there: the plan stays a pure function of the history, and an output stubbed
before the quote stays stubbed (the prompt cache is never broken backwards).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .quotes import assistant_text, quotable

_MEMO_LIMIT = 16384


class QuoteIndex:
    """Finds quote pins; remembers each text's quotable tokens (texts repeat in every request)."""

    def __init__(self) -> None:
        self._memo: dict[str, frozenset[str]] = {}
        self._assistant_memo: dict[str, frozenset[str]] = {}

    def _quotable(self, text: str) -> frozenset[str]:
        found = self._memo.get(text)
        if found is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            found = self._memo[text] = frozenset(quotable(text))
        return found

    def _assistant_words(self, message: dict[str, Any]) -> frozenset[str]:
        content = message.get("content")
        key = [content if isinstance(content, str) else repr(content)]
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            key.append(repr(function.get("arguments")) if isinstance(function, dict) else "")
        joined = "\x00".join(key)
        found = self._assistant_memo.get(joined)
        if found is None:
            if len(self._assistant_memo) >= _MEMO_LIMIT:
                self._assistant_memo.clear()
            found = self._assistant_memo[joined] = frozenset(quotable(assistant_text(message)))
        return found

    def pins(
        self,
        messages: Sequence[Any],
        output_text: Callable[[Any], str | None],
        pin_end: Callable[[int], int],
        min_chars: int = 0,
    ) -> dict[int, list[tuple[int, int]]]:
        """Output index -> ``(start, end)`` pins: from each assistant message that quotes it to ``pin_end(start)``.

        ``output_text`` gives a tool message's plain text (None: not text);
        outputs shorter than ``min_chars`` (never stubbed) and every other
        message only mark their tokens as seen.
        """
        seen: set[str] = set()
        owner: dict[str, int] = {}
        pins: dict[int, list[tuple[int, int]]] = {}
        for index, message in enumerate(messages):
            if message.__class__ is not dict:
                continue
            role = message.get("role")
            if role == "tool":
                text = output_text(message)
                if text is None:
                    continue
                fresh = self._quotable(text) - seen
                if len(text) >= min_chars:
                    for token in fresh:
                        owner[token] = index
                seen |= fresh
                continue
            if role == "assistant":
                words = self._assistant_words(message)
                quoted = {owner[token] for token in words if token in owner}
                if quoted:
                    end = pin_end(index)
                    for output in quoted:
                        pins.setdefault(output, []).append((index, end))
                seen |= words
            else:
                content = message.get("content")
                if isinstance(content, str):
                    seen |= self._quotable(content)
        return pins
