"""What the plan needs to know of each message: sizes, what stubbing would save, and the pins.

A pure pass over the history (plus the quote index's cache): an output is worth
stubbing when it is plain text over ``min_chars``; it is pinned (kept verbatim
for ``pin_turns`` model turns) after a read-back of it, a re-read of its file
region, a quote of it (``quote_pins.py``) or work on its file (``edit_pins.py``);
an assistant message is worth condensing when its text is well over the kept
head: reasoning before tool calls, or an answer the conversation moved past.
"""

from __future__ import annotations

import bisect
import json
from typing import Any, Callable, Sequence

from ..chat.markers import REASONING_MARK, SPILL_HEADER
from ..chat.messages import (
    Message,
    call_arguments_text,
    call_id,
    call_name,
    content_text,
    role_of,
    tool_calls_of,
    tool_result_id,
)
from ..chat.stubs import is_stub
from .edit_pins import edit_pins
from .plan import ViewItem
from .quote_pins import QuoteIndex
from .render import REASONING_HEAD_CHARS
from .reread import READ_TOOL, read_key
from .supersede import Superseded, superseded
from .view_settings import ViewSettings

READ_BACK_TOOLS = frozenset({"stowage_fetch", "stowage_grep"})
STUB_TOKENS = 40  # about what a view stub costs; an output must be worth more than that to be stubbed


class ViewMeasure:
    """Measures one session's histories; keeps the quote index between requests (it only grows)."""

    def __init__(self, settings: ViewSettings, count: Callable[[Message], int]) -> None:
        self.settings = settings
        self._count = count
        self._quotes = QuoteIndex()

    def items(self, messages: list[Message]) -> tuple[list[ViewItem], dict[str, Any]]:
        """One plan item per message, and the tool calls by id (the stubs name their call)."""
        calls: dict[str, Any] = {}
        model_turns: list[int] = []
        references: list[tuple[int, str]] = []  # (position, handle) of read-back calls
        rereads: list[tuple[int, tuple[str, str, str]]] = []  # (position, region) of the host's read_file calls
        for index, message in enumerate(messages):
            if message.__class__ is not dict or message.get("role") != "assistant":
                continue
            model_turns.append(index)
            for call in tool_calls_of(message):
                cid = call_id(call)
                if cid:
                    calls[cid] = call
                if call_name(call) in READ_BACK_TOOLS:
                    handle = _handle_argument(call_arguments_text(call))
                    if handle:
                        references.append((index, handle))
                elif call_name(call) == READ_TOOL:
                    region = read_key(call_arguments_text(call))
                    if region is not None:
                        rereads.append((index, region))
        pin_span = self.settings.pin_turns
        quoted: dict[int, list[tuple[int, int]]] = {}
        pin_end = lambda at: _after_turns(model_turns, at, pin_span)  # noqa: E731 - one rule for both pins
        stale: dict[int, Superseded] = {}
        if self.settings.working_set:
            stale = superseded(messages, disposable=True)
            pin_end = _working_set_end(messages, model_turns, pin_span)
        if pin_span > 0 and self.settings.pin_quoted:
            quoted = self._quotes.pins(
                messages, lambda m: plain_text(m.get("content")), pin_end, self.settings.min_chars
            )
        if pin_span > 0 and self.settings.pin_edited:
            for output, pins in edit_pins(messages, pin_end, self.settings.pin_named).items():
                quoted[output] = [*quoted.get(output, ()), *pins]
        for output, later in stale.items():  # the working set moved on: a superseded output's pins end there
            if output in quoted:
                quoted[output] = [(start, min(end, later.at)) for start, end in quoted[output] if start < later.at]
        moved_past = _answers_moved_past(messages) if self.settings.condense_answers else 0
        items = []
        for index, message in enumerate(messages):
            tokens = self._count(message) if message.__class__ is dict else 0
            items.append(
                self._item(
                    index,
                    message,
                    tokens,
                    calls,
                    model_turns,
                    references,
                    pin_span,
                    quoted.get(index, ()),
                    rereads,
                    answer_cold=index < moved_past,
                    stale=stale.get(index),
                )
            )
        return items, calls

    def _item(
        self,
        index: int,
        message: Any,
        tokens: int,
        calls: dict[str, Any],
        model_turns: list[int],
        references: list[tuple[int, str]],
        pin_span: int,
        quoted: Sequence[tuple[int, int]] = (),
        rereads: Sequence[tuple[int, tuple[str, str, str]]] = (),
        answer_cold: bool = False,
        stale: Superseded | None = None,
    ) -> ViewItem:
        if message.__class__ is not dict:
            return ViewItem(tokens)
        role = message.get("role")
        if role == "assistant":
            calls_here = tool_calls_of(message)
            limit = self.settings.max_args_chars
            over = sum(max(0, size - limit) for size in map(len, map(call_arguments_text, calls_here)))
            saving = over if over > 4 * STUB_TOKENS else 0
            if (calls_here or answer_cold) and condensable(message.get("content"), self.settings):
                saving += len(message["content"]) - REASONING_HEAD_CHARS
            return ViewItem(tokens, cold_tokens=saving // 4, batch=bool(calls_here))
        if role != "tool":
            return ViewItem(tokens)
        text = plain_text(message.get("content"))
        if text is None or len(text) < self.settings.min_chars or tokens <= 2 * STUB_TOKENS or is_stub(text):
            return ViewItem(tokens)
        pins: list[tuple[int, int]] = list(quoted)
        if pin_span > 0:
            call = calls.get(tool_result_id(message))
            if call is not None and call_name(call) in READ_BACK_TOOLS:
                pins.append((index, _after_turns(model_turns, index, pin_span)))
            if call is not None and call_name(call) == READ_TOOL:
                # read again: the model wants this content; the host's dedup tells it to look here
                region = read_key(call_arguments_text(call))
                pins += [
                    (at, _after_turns(model_turns, at, pin_span)) for at, ref in rereads if at > index and ref == region
                ]
            if text.startswith(SPILL_HEADER):
                head = text[:4000]
                pins += [
                    (at, _after_turns(model_turns, at, pin_span))
                    for at, handle in references
                    if at > index and handle in head
                ]
        if stale is not None:
            return ViewItem(
                tokens,
                tokens - STUB_TOKENS,
                pins=tuple(pins),
                superseded_at=stale.at,
                superseded_by=stale.by,
                early=True,
            )
        return ViewItem(tokens, cold_tokens=tokens - STUB_TOKENS, pins=tuple(pins))


def condensable(content: Any, settings: ViewSettings) -> bool:
    """Assistant text worth condensing (plain text well over the kept head)."""
    return (
        settings.condense_reasoning
        and content.__class__ is str
        and len(content) > REASONING_HEAD_CHARS + 4 * STUB_TOKENS + 80
        and REASONING_MARK not in content
    )


def plain_text(content: Any) -> str | None:
    """The text of a string or all-text content; None for anything else (left alone)."""
    if content.__class__ is str:
        return content
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(p, dict) and p.get("type") in ("text", None) and isinstance(p.get("text"), str) for p in content
        )
    ):
        return content_text(content)
    return None


def _after_turns(model_turns: list[int], position: int, turns: int) -> int:
    """The position of the ``turns``-th model turn after ``position`` (end of a pin)."""
    at = bisect.bisect_right(model_turns, position) + turns - 1
    return model_turns[at] if at < len(model_turns) else 1 << 62


def _working_set_end(messages: list[Message], model_turns: list[int], turns: int) -> Callable[[int], int]:
    """``view.working_set``: a pin lasts to the end of its user turn (the task), at least ``turns`` model turns.

    What supersedes the output ends it sooner (``supersede.py``, applied by the caller).
    """
    user_at = [index for index, message in enumerate(messages) if role_of(message) == "user"]

    def end(at: int) -> int:
        following = bisect.bisect_right(user_at, at)
        task_end = user_at[following] if following < len(user_at) else 1 << 62
        return max(task_end, _after_turns(model_turns, at, turns))

    return end


def _answers_moved_past(messages: list[Message]) -> int:
    """Answers (assistant messages without tool calls) before this index may be condensed.

    The conversation has moved past an answer once a user message and then a
    reply of the model followed it: the pending question is never answered
    against a condensed copy of the answer it follows.
    """
    replied = False
    for index in range(len(messages) - 1, -1, -1):
        role = role_of(messages[index])
        if role == "assistant":
            replied = True
        elif role == "user" and replied:
            return index
    return 0


def _handle_argument(arguments: str) -> str | None:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return None
    handle = value.get("handle") if isinstance(value, dict) else None
    return handle.strip().lower() if isinstance(handle, str) and handle.strip() else None
