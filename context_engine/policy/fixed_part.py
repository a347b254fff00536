"""The part of every request no compaction can shrink: the system prompt and the tool schemas.

A trigger below it (``view.compact_at 0.1`` of a 128k window is 12.8k tokens,
while Hermes's system prompt and tool schemas alone are often 14k) makes every
compaction a no-op and then a back-off: the session never compacts and the
user is never told why.  This measures that part on the requests as sent and
words the warning (engine log, ``stowage status``, ``stowage doctor``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..records.part_status import FixedPartFigures

# a trigger this far above the fixed part still leaves room for a summary and the kept tail
ROOM_SHARE = 0.1


class FixedPart:
    """System prompt tokens of the newest request (counted once per distinct prompt) plus its tools' tokens."""

    def __init__(self) -> None:
        self.system_text = ""
        self.system_tokens = 0
        self.tools_tokens = 0
        self.warned = False

    @property
    def tokens(self) -> int:
        return self.system_tokens + self.tools_tokens

    def measure(self, messages: Sequence[Any], tools_tokens: int, count_text: Callable[[str], int]) -> int:
        system = _system_text(messages)
        if system != self.system_text:
            self.system_text, self.system_tokens = system, count_text(system) if system else 0
        self.tools_tokens = max(0, int(tools_tokens))
        return self.tokens

    def figures(self) -> FixedPartFigures | None:
        """The figures status reports; None before a request was measured."""
        if not self.tokens:
            return None
        return FixedPartFigures(system_tokens=self.system_tokens, tools_tokens=self.tools_tokens, tokens=self.tokens)


def _system_text(messages: Sequence[Any]) -> str:
    first = messages[0] if messages else None
    if not isinstance(first, dict) or first.get("role") != "system":
        return ""
    content = first.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def below_fixed_part(
    fixed: FixedPartFigures | None, threshold_tokens: int, context_length: int, key: str = "view.compact_at"
) -> str | None:
    """The warning when the trigger is at or below what every request carries; None when it is above."""
    if fixed is None or threshold_tokens <= 0:
        return None
    tokens = fixed.tokens
    if not tokens or tokens < threshold_tokens:
        return None
    text = (
        f"the compaction trigger ({threshold_tokens:,} tokens) is below what every request carries before any "
        f"history: {tokens:,} tokens (system prompt {fixed.system_tokens:,}, tool schemas "
        f"{fixed.tools_tokens:,}), so each compaction can only fail and back off"
    )
    if context_length > 0:
        share = min(0.95, math.ceil((tokens / context_length + ROOM_SHARE) * 20) / 20)
        text += f". Fix: set {key} to at least {share:g} (`hermes config set stowage.{key} {share:g}`)"
    else:
        text += f". Fix: raise {key}"
    return text
