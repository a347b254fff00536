"""Outputs an engine hid that the agent then needed: "needed while hidden".

A tool output is *hidden* in a request when the request does not carry it
verbatim: stubbed or pruned (the message is there with other content), or
absent (the message is gone: compacted away, or folded into a collapse
line).  It was *needed while hidden* when the assistant message answering
that request uses one of the output's distinctive tokens
(``view/quotes.py``: an identifier, path or code line of 6+ characters,
first seen in that output) that appears nowhere in the request.  The
recorded agent saw the output whole; an agent given the request as sent
would have had to fetch it again or guess.

In a chained session (``chain.Session.starts``) each transcript had its own
recorded agent, which never saw the transcripts before it: first-seen
ownership starts afresh at each ``start``, so a later task naming the same
identifier is not counted as a use of an earlier task's output.

Only *rare* tokens count: one that occurs in many of the replayed
transcripts (:func:`common_tokens`: ``INSTALLED_APPS``, ``sys.exit``,
``SimpleTestCase``) is vocabulary an agent writes without having read it.

:class:`HiddenUseTracker` is a replay :class:`~.driver.Observer`: the k-th
``request`` event is answered by the transcript's k-th assistant message
(the driver makes one request per assistant message).  Plain dicts in, plain
figures out; nothing here knows an engine.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ....context_engine.view.collapse import COLLAPSE_MARK, call_head
from ....context_engine.view.quotes import FirstSeen, assistant_text, quotable
from .target import Observer

EXAMPLES = 3
COMMON_SHARE = 0.05  # a token in this share of the transcripts (or COMMON_FLOOR of them) is common vocabulary
COMMON_FLOOR = 3


@dataclass
class _Output:
    call_id: str
    text: str  # stripped, as the host sends it
    tool: str
    tokens: frozenset[str]
    after_reply: int  # the number of assistant messages before it (it is in every later request's history)
    arguments: str = ""  # its call's arguments (a collapse line names the call by their head)


@dataclass
class HiddenFigures:
    outputs: int = 0
    hidden: int = 0  # outputs hidden in at least one request
    hidden_stubbed: int = 0  # ... of which some request carried the message with other content
    used_later: int = 0  # outputs some later assistant message used (hidden or not)
    needed_while_hidden: int = 0  # outputs used by the answer to a request that hid them
    gaps: list[int] = field(default_factory=list)  # requests between first hidden and the use
    examples: list[dict[str, Any]] = field(default_factory=list)
    cases: list[dict[str, Any]] = field(default_factory=list)  # every needed-while-hidden output, as the examples

    def as_dict(self) -> dict[str, Any]:
        return {
            "outputs": self.outputs,
            "outputs_hidden": self.hidden,
            "outputs_hidden_stubbed": self.hidden_stubbed,
            "outputs_used_later": self.used_later,
            "needed_while_hidden": self.needed_while_hidden,
            "needed_gaps": list(self.gaps),
            "needed_examples": list(self.examples),
            "needed_cases": list(self.cases),
        }


class HiddenUseTracker(Observer):
    """Watches one replayed session's requests; ``figures()`` after the replay."""

    def __init__(
        self,
        messages: Sequence[Mapping[str, Any]],
        forward: Observer | None = None,
        starts: Sequence[int] = (),
        common: frozenset[str] = frozenset(),
    ) -> None:
        self.forward = forward
        self._common = common
        self._outputs: dict[str, _Output] = {}
        self._replies: list[dict[str, set[str]]] = []  # per assistant message: output call id -> tokens it used
        self._order: list[str] = []  # output call ids in transcript order
        self._read(messages, frozenset(starts))
        self._request = 0
        self._first_hidden: dict[str, int] = {}
        self._stubbed: set[str] = set()
        self._needed: dict[str, dict[str, Any]] = {}

    def _read(self, messages: Sequence[Mapping[str, Any]], starts: frozenset[int]) -> None:
        first = FirstSeen()
        names: dict[str, str] = {}
        arguments: dict[str, str] = {}
        for index, message in enumerate(messages):
            if index in starts:  # a new recorded agent: it can only have quoted what it saw from here on
                first = FirstSeen()
            role = message.get("role")
            if role == "tool":
                call_id = str(message.get("tool_call_id") or "")
                text = message.get("content")
                text = text.strip() if isinstance(text, str) else ""
                if not call_id or call_id in self._outputs:
                    continue
                tokens = first.add_output(call_id, text)
                self._outputs[call_id] = _Output(
                    call_id,
                    text,
                    names.get(call_id, ""),
                    frozenset(tokens),
                    len(self._replies),
                    arguments.get(call_id, ""),
                )
                self._order.append(call_id)
            elif role == "assistant":
                words = assistant_text(message)
                uses = {key: used - self._common for key, used in first.uses(words).items()}
                self._replies.append({key: used for key, used in uses.items() if used})
                first.add_other(words)
                for call in message.get("tool_calls") or []:
                    if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
                        names[str(call.get("id"))] = str(call["function"].get("name") or "")
                        raw = call["function"].get("arguments")
                        arguments[str(call.get("id"))] = raw if isinstance(raw, str) else ""
            else:
                content = message.get("content")
                first.add_other(content if isinstance(content, str) else "")

    # -- events ------------------------------------------------------------
    def event(self, name: str, **data: Any) -> None:
        if name == "request":
            self._on_request(data.get("request") or {})
        if self.forward is not None:
            self.forward.event(name, **data)

    def _on_request(self, request: Mapping[str, Any]) -> None:
        k = self._request
        self._request += 1
        carried: dict[str, Any] = {}
        for message in request.get("messages") or []:
            if isinstance(message, Mapping) and message.get("role") == "tool":
                carried[str(message.get("tool_call_id") or "")] = message.get("content")
        hidden_now = set()
        for call_id in self._order:
            output = self._outputs[call_id]
            if output.after_reply > k:
                break
            content = carried.get(call_id, _ABSENT)
            if content is _ABSENT or not _same(content, output.text):
                hidden_now.add(call_id)
                self._first_hidden.setdefault(call_id, k)
                if content is not _ABSENT:
                    self._stubbed.add(call_id)
        if k >= len(self._replies):
            return
        uses = {cid: tokens for cid, tokens in self._replies[k].items() if cid in hidden_now}
        if not uses:
            return
        text = _request_text(request)
        for call_id, tokens in uses.items():
            absent = sorted(t for t in tokens if t not in text)
            if absent and call_id not in self._needed:
                output = self._outputs[call_id]
                self._needed[call_id] = {
                    "tool": output.tool,
                    "quoted": absent[0][:80],
                    "request": k,
                    "hidden_for_requests": k - self._first_hidden[call_id],
                    "how": "stubbed" if call_id in carried else "absent",
                    "where": _where(call_id in carried, output, request),
                    "call_id": call_id,
                    "chars": len(output.text),
                }

    # -- figures -------------------------------------------------------------
    def figures(self) -> HiddenFigures:
        used = {cid for reply in self._replies for cid in reply}
        # By request, then transcript order: the outputs one answer quotes are found through a set,
        # whose order follows the process's hash seed, and the bench JSON must be the same every run.
        position = {call_id: i for i, call_id in enumerate(self._order)}
        needed = [
            self._needed[cid] for cid in sorted(self._needed, key=lambda c: (self._needed[c]["request"], position[c]))
        ]
        return HiddenFigures(
            outputs=len(self._outputs),
            hidden=len(self._first_hidden),
            hidden_stubbed=len(self._stubbed),
            used_later=len(used),
            needed_while_hidden=len(needed),
            gaps=[n["hidden_for_requests"] for n in needed],
            examples=needed[:EXAMPLES],
            cases=needed,
        )


_ABSENT = object()


def message_words(message: Mapping[str, Any]) -> str:
    """The text of a message as quotes are read from it (an assistant's tool-call arguments included)."""
    if message.get("role") == "assistant":
        return assistant_text(message)
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


def common_tokens(
    transcripts: Iterable[Sequence[Mapping[str, Any]]], share: float = COMMON_SHARE, floor: int = COMMON_FLOOR
) -> frozenset[str]:
    """Quotable tokens found in at least ``share`` of the transcripts (and at least ``floor`` of them)."""
    counts: Counter[str] = Counter()
    total = 0
    for messages in transcripts:
        total += 1
        found: set[str] = set()
        for message in messages:
            found |= quotable(message_words(message))
        counts.update(found)
    least = max(floor, math.ceil(share * total))
    return frozenset(token for token, count in counts.items() if count >= least)


def _same(content: Any, text: str) -> bool:
    if isinstance(content, str):
        return content == text or content.strip() == text
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping)).strip() == text
    return False


def _where(carried: bool, output: _Output, request: Mapping[str, Any]) -> str:
    """How a hidden output left the request: ``stubbed`` (or pruned), folded into a ``collapsed`` line, or
    ``compacted`` away (absent, and no collapse line names its call)."""
    if carried:
        return "stubbed"
    head = call_head(output.arguments)[:80]
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str) and COLLAPSE_MARK in content and head and head in content:
            return "collapsed"
    return "compacted"


def _request_text(request: Mapping[str, Any]) -> str:
    parts = []
    for message in request.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if message.get("role") == "assistant":
            parts.append(assistant_text({"tool_calls": message.get("tool_calls")}))
    return "\n".join(parts)
