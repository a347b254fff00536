"""The next request as it will be sent, counted with the tokenizer: what lets a turn go on over the trigger judges.

The host's own figures are characters/4 (a Chinese document, emoji or base64
count about four times that), and the provider's real count comes only after
a request, or never (many local servers report no usage).  So each request
the session shapes is counted as sent (:class:`SentRequest`, the tokenizer's
count of the messages as sent plus the tool schemas, replaced by the
provider's count once usage comes back), and the next one is judged as that
plus what the history grew since, counted with the tokenizer: only the new
messages are counted, each once (the counter caches per message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

CountMessage = Callable[[Any], int]


@dataclass(frozen=True)
class SentRequest:
    """The newest request the session shaped, as sent."""

    tokens: int = 0  # the tokenizer's count of its messages as sent plus the tool schemas
    conversation_messages: int = 0  # its messages other than the system prompt: the history it was shaped from
    real: int = 0  # the provider's count of it, once usage came back (0: not yet, or a provider without usage)

    @classmethod
    def fixed_part_only(cls, fixed_tokens: int) -> "SentRequest":
        """The basis right after a compaction: a request of the system prompt and tool schemas alone, so the
        next request is judged as them plus the whole (compacted) history (none when they are not known)."""
        return cls(tokens=max(0, fixed_tokens))

    def counted_figure(self) -> int:
        """Its size: the provider's count when there is one, else the tokenizer's."""
        return self.real if self.real > 0 else self.tokens


def conversation_of(messages: Sequence[Any]) -> list[Any]:
    """The messages a compaction works on: all but the system prompt (hosts send it, their history lacks it)."""
    return [m for m in messages if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))]


def judged_request(
    sent: SentRequest, conversation: Sequence[Any] | None, count: CountMessage, *, provider_count: bool = True
) -> int | None:
    """The next request as it will be sent: the last one plus the messages that came since, counted.

    ``conversation`` is the live history without its system prompt (None:
    not known, then the last request's own size is the floor).  None when
    nothing was sent yet, or when the history is shorter than the last
    request's (a compaction since): there is no basis then.
    ``provider_count`` False judges on the tokenizer's count of the last
    request alone: what the content itself weighs, whatever was reported.
    """
    if sent.tokens <= 0:
        return None
    basis = sent.counted_figure() if provider_count else sent.tokens
    if conversation is None:
        return basis
    if len(conversation) < sent.conversation_messages:
        return None
    return basis + sum(count(message) for message in conversation[sent.conversation_messages :])
