"""Phase 1: prune old tool results, images and oversized tool-call arguments.

Pure: takes a message list and the index where the protected tail starts,
returns a new list (untouched messages are shared, changed ones are copies)
plus what was pruned.  No LLM, no I/O.  What replaces a pruned output is
decided by a renderer callable, so the store's stub service
(``store_session/stubs.py``) can swap the default stub for one naming the
original's handle without this module knowing about it; every stub's words
come from ``stubs.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from ..chat.markers import IMAGE_PLACEHOLDER
from ..chat.messages import (
    Message,
    call_arguments_text,
    call_id,
    call_name,
    content_parts,
    content_text,
    is_image_part,
    role_of,
    tool_calls_of,
    tool_result_id,
    with_call_arguments,
)
from ..chat.stubs import PrunedOutput, default_stub, is_stub, shrink_json_arguments

StubRenderer = Callable[[PrunedOutput], str]
PartKeeper = Callable[[Any], str]  # a removed part (an image) -> the text that replaces it (naming where it is kept)
ArgumentCutter = Callable[[str, str, int], str]  # (tool name, arguments JSON, max chars) -> shorter valid JSON


@dataclass(frozen=True)
class PruneSettings:
    min_chars: int = 200
    max_args_chars: int = 500


@dataclass
class PruneResult:
    messages: list[Message]
    pruned: list[PrunedOutput] = field(default_factory=list)
    images_removed: int = 0
    arguments_shrunk: int = 0
    chars_saved: int = 0
    calls: dict[str, Any] = field(default_factory=dict)  # every tool call by id (read by later phases too)

    @property
    def changed(self) -> bool:
        return bool(self.pruned or self.images_removed or self.arguments_shrunk)


def prune(
    messages: list[Message],
    *,
    protect_from: int,
    settings: PruneSettings = PruneSettings(),
    render: StubRenderer = default_stub,
    keep_images_at: frozenset[int] = frozenset(),
    skip: range = range(0),
    cut_arguments: ArgumentCutter | None = None,
    keep_part: PartKeeper | None = None,
) -> PruneResult:
    """Prune everything before ``protect_from``; the tail stays verbatim.

    ``keep_images_at`` lists indices whose images survive anyway (the newest
    user turn: the model must still see what the user just showed it).
    ``skip`` is left as it is: the summary window, which the summary replaces
    (stubbing its outputs would be work thrown away).  ``cut_arguments``
    shortens oversized tool-call arguments (the store's version keeps the
    whole text and names its handle); by default string values are cut.
    ``keep_part`` keeps a removed image and returns its placeholder (the
    store's version names its handle); by default a plain placeholder.
    """
    protect_from = max(0, min(protect_from, len(messages)))
    history = _History(messages, settings.min_chars)
    result = PruneResult(messages=list(messages), calls=history.calls)
    indices = (
        chain(range(min(skip.start, protect_from)), range(skip.stop, protect_from)) if skip else range(protect_from)
    )
    for index in indices:
        message = messages[index]
        role = role_of(message)
        if role == "tool":
            _prune_tool_result(result, index, message, history, settings, render)
        elif role == "assistant" and message.get("tool_calls"):
            _shrink_call_arguments(result, index, settings.max_args_chars, cut_arguments or _cut_plainly)
        elif role not in ("user", "assistant"):
            continue
        if message.get("content").__class__ is list and index not in keep_images_at:
            _strip_images(result, index, keep_part or _plain_placeholder)  # only list contents hold images
    return result


class _History:
    """What pruning looks up across the whole history, gathered in one pass.

    Every tool call by id (for the stubs' names and argument gists), and
    where the long tool outputs are, by length: a duplicate has the same
    length, so finding an output's newest copy compares a handful of texts
    and hashes none.
    """

    def __init__(self, messages: list[Message], min_chars: int) -> None:
        self.calls: dict[str, Any] = {}
        self._messages = messages
        self._by_length: dict[int, list[int]] = {}
        for index, message in enumerate(messages):
            if message.__class__ is not dict:
                continue
            if message.get("role") == "tool":
                content = message.get("content")
                size = len(content) if content.__class__ is str else len(content_text(content))
                if size >= min_chars:
                    self._by_length.setdefault(size, []).append(index)
            elif message.get("tool_calls"):
                for call in tool_calls_of(message):
                    cid = call_id(call)
                    if cid:
                        self.calls[cid] = call

    def newest_copy(self, text: str) -> str | None:
        """Call id of the newest long tool output whose text is ``text``."""
        for index in reversed(self._by_length.get(len(text), ())):
            message = self._messages[index]
            content = message.get("content")
            if (content if content.__class__ is str else content_text(content)) == text:
                return tool_result_id(message)
        return None


def _prune_tool_result(
    result: PruneResult, index: int, message: Message, history: _History, settings: PruneSettings, render: StubRenderer
) -> None:
    content = message.get("content")
    text = content if content.__class__ is str else content_text(content)
    if len(text) < settings.min_chars or is_stub(text):
        return
    cid = tool_result_id(message)
    call = history.calls.get(cid)
    newer = history.newest_copy(text)
    output = PrunedOutput(
        index,
        cid,
        _tool_name(message, call),
        call_arguments_text(call) if call else "",
        text,
        newer if newer and newer != cid else None,
    )
    stub = render(output)
    if len(stub) >= len(text):
        return
    replaced = message.copy() if message.__class__ is dict else dict(message)
    replaced["content"] = stub
    result.messages[index] = replaced
    result.pruned.append(output)
    result.chars_saved += len(text) - len(stub)


def _tool_name(message: Message, call: Any) -> str:
    """The called tool's name, else the name Hermes stores on the result."""
    name: Any = call_name(call) if isinstance(call, dict) else ""
    if not name:
        name = message.get("name")
    return name if isinstance(name, str) else ""


def _cut_plainly(tool_name: str, text: str, max_chars: int) -> str:
    return shrink_json_arguments(text, max_chars)


def _shrink_call_arguments(result: PruneResult, index: int, max_chars: int, cut: ArgumentCutter) -> None:
    message = result.messages[index]
    new_calls = []
    changed = False
    for call in message.get("tool_calls") or []:
        text = call_arguments_text(call) if isinstance(call, dict) else ""
        if isinstance(call, dict) and len(text) > max_chars:
            shrunk = cut(call_name(call), text, max_chars)
            call = with_call_arguments(call, shrunk)
            result.chars_saved += len(text) - len(shrunk)
            changed = True
        new_calls.append(call)
    if changed:
        replaced = dict(message)
        replaced["tool_calls"] = new_calls
        result.messages[index] = replaced
        result.arguments_shrunk += 1


def _plain_placeholder(part: Any) -> str:
    return IMAGE_PLACEHOLDER


def _strip_images(result: PruneResult, index: int, keep_part: PartKeeper) -> None:
    message = result.messages[index]
    content = message.get("content")
    if not isinstance(content, list) or not any(is_image_part(p) for p in content):
        return
    parts = [{"type": "text", "text": keep_part(p)} if is_image_part(p) else p for p in content_parts(content)]
    replaced = dict(message)
    replaced["content"] = parts
    result.messages[index] = replaced
    result.images_removed += sum(1 for p in content if is_image_part(p))
