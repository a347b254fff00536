"""Serialize the summary window into a masked text transcript.

What leaves the process for the summary model passes through here: secrets
are masked (by :mod:`.egress`, on each whole message before anything is
cut), reasoning blocks dropped, long messages cut to head and tail.
The cut is not a loss: the window itself is kept whole in the store.  When
the window is too big for the summary model, per-message caps shrink first,
then the oldest and newest messages are kept and the middle is elided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..chat.markers import OUTPUT_NOT_SHOWN
from ..chat.messages import (
    Message,
    call_arguments_text,
    call_name,
    is_summary,
    message_text,
    role_of,
    tool_calls_of,
    tool_result_id,
)
from .egress import mask_messages, verdict, verdict_only

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>[\s\S]*?</\1>\s*", re.IGNORECASE)
_MEDIA = re.compile(r"MEDIA:\S+")


@dataclass(frozen=True)
class TranscriptLimits:
    message_head_chars: int = 3000
    message_tail_chars: int = 1500
    argument_chars: int = 1200
    total_chars: int = 240_000  # ~60k tokens: fits any summary model Hermes accepts (>= 64k)
    # Longer tool outputs appear as their verdict and size, as a pruned stub
    # would show them (the outputs stay whole in the stored window).
    tool_output_chars: int = 200


def strip_reasoning(text: str) -> str:
    return _THINK_BLOCK.sub("", text) if "</" in text else text  # a block needs its closing tag


def _cut(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail + 80:
        return text
    return f"{text[:head]}\n…[{len(text) - head - tail:,} chars omitted here; kept in the store]…\n{text[-tail:]}"


class _Block(NamedTuple):
    """One message of the transcript: Stowage's own text around the parts from the conversation.

    Rendered as ``header [calls ")"] "\n" lead body after``; only ``calls`` and
    ``body`` came from the conversation (masked before the block was built).
    """

    header: str  # position, role, tool name, call id
    calls: str  # the model's tool calls and arguments
    body: str  # the message text, or a long output's verdict
    lead: str = ""
    after: str = ""


def _block(message: Message, number: int, names: dict[str, str], limits: TranscriptLimits) -> _Block:
    # Runs once per window message on every compaction: plain-string content
    # and well-formed dicts take the short path.
    if message.__class__ is dict:
        role, content = message.get("role"), message.get("content")
        text = content if content.__class__ is str else "" if content is None else message_text(message)
    else:
        role, text = role_of(message), message_text(message)
    calls = ""
    if role == "tool":
        cid = tool_result_id(message)
        header = f"### [{number}] TOOL RESULT of {names.get(cid) or 'tool'} (call {cid})"
        if verdict_only(role, text, limits.tool_output_chars):  # before any scan of the text
            # The size in characters only: counting lines would read the whole
            # output, and the summary model never retrieves by line.  The
            # output was left unmasked (mask_messages): verdict() masks what it quotes.
            return _Block(header, "", verdict(text), f"{OUTPUT_NOT_SHOWN} -> ", f"; {len(text):,} chars")
    elif role == "assistant" and (tool_calls := tool_calls_of(message)):
        header = f"### [{number}] ASSISTANT (calls tools: "
        calls = "; ".join(
            [f"{call_name(c)}({_cut(call_arguments_text(c), limits.argument_chars, 0)})" for c in tool_calls]
        )
    elif is_summary(message):
        header = f"### [{number}] EARLIER SUMMARY"
    else:
        header = f"### [{number}] {role.upper() if role.__class__ is str and role else 'UNKNOWN'}"
    text = strip_reasoning(text)
    if "MEDIA:" in text:
        text = _MEDIA.sub("[media attachment]", text)
    return _Block(header, calls, _cut(text, limits.message_head_chars, limits.message_tail_chars))


def render_blocks(
    window: list[Message], names: dict[str, str], first_number: int, limits: TranscriptLimits
) -> list[str]:
    """The window's messages as transcript blocks (``window`` already masked by :func:`.egress.mask_messages`)."""
    blocks = [_block(m, first_number + i, names, limits) for i, m in enumerate(window)]
    return [
        ((f"{b.header}{b.calls})" if b.calls else b.header) + f"\n{b.lead}{b.body}{b.after}").rstrip() for b in blocks
    ]


def serialize_window(
    window: list[Message],
    *,
    names: dict[str, str],
    first_number: int = 1,
    limits: TranscriptLimits = TranscriptLimits(),
) -> str:
    """The window as one masked transcript that fits ``limits.total_chars``.

    Every message is masked whole first: the cuts below then only ever cut
    masked text.
    """
    window = mask_messages(window, verdict_chars=limits.tool_output_chars)
    current = limits
    for _ in range(6):
        blocks = render_blocks(window, names, first_number, current)
        text = "\n\n".join(blocks)
        if len(text) <= limits.total_chars:
            return text
        current = replace(
            current,
            message_head_chars=max(200, current.message_head_chars // 2),
            message_tail_chars=max(100, current.message_tail_chars // 2),
            argument_chars=max(120, current.argument_chars // 2),
        )
    return _elide_middle(blocks, limits.total_chars)


def _elide_middle(blocks: list[str], budget: int) -> str:
    """Keep blocks from both ends until the budget is spent."""
    head: list[str] = []
    tail: list[str] = []
    spent = 0
    left, right = 0, len(blocks) - 1
    take_left = True
    while left <= right:
        block = blocks[left] if take_left else blocks[right]
        if spent + len(block) + 2 > budget - 120:
            break
        spent += len(block) + 2
        if take_left:
            head.append(block)
            left += 1
        else:
            tail.insert(0, block)
            right -= 1
        take_left = not take_left
    omitted = right - left + 1
    marker = f"…[{omitted} messages omitted from this summary input; they are kept in the store]…"
    return "\n\n".join(head + ([marker] if omitted > 0 else []) + tail)
