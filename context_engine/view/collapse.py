"""Settled tool steps sent as one line each: the view's cheapest form of an old step.

Once the view has stubbed a step's outputs and condensed its reasoning, the
step still costs its JSON: the assistant message, its calls and a stub per
output, about 130 tokens.  A run of such steps inside one user turn is sent as
*one* assistant message that lists each step on one line (the call, the
verdict, the handle of its output) and keeps the run's last step as it was, so
every tool call in the request still has its result and the roles still
alternate.  The history keeps every step whole; a line's handle reads the
output back, and ``stowage_grep`` finds the reasoning in the store.

Only steps the plan has *settled* are collapsed (before the hot zone's start at
the last step), grouped by the step that settled them: between steps each
request still extends the previous one byte for byte, and a new step leaves
the runs of earlier steps as they were.  Pure functions over message dicts.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..chat.markers import BlobKind
from ..chat.messages import Message, call_arguments_text, call_name, role_of, tool_calls_of, tool_result_id
from ..chat.stubs import outcome_of

COLLAPSE_MARK = "[stowage: earlier steps of this turn, one line each"
MIN_RUN = 3  # steps; collapsing fewer saves less than the header costs
INLINE_OUTPUT_CHARS = 160  # a short output is quoted in its line instead of a stub
CALL_CHARS = 160  # the head of a call's arguments a line keeps


@dataclass(frozen=True)
class Step:
    """One settled step: an assistant message with tool calls and the results right after it."""

    start: int  # index of the assistant message
    end: int  # one past its last result


def settled_steps(messages: Sequence[Message], settled: int, collapsible: Callable[[int], bool]) -> list[Step]:
    """Steps that lie wholly before ``settled`` and whose every message ``collapsible`` accepts."""
    steps: list[Step] = []
    index = 0
    while index < settled:
        message = messages[index]
        calls = tool_calls_of(message) if role_of(message) == "assistant" else []
        if not calls:
            index += 1
            continue
        wanted = {str(call.get("id") or "") for call in calls if isinstance(call, dict)}
        end = index + 1
        while end < len(messages) and role_of(messages[end]) == "tool" and tool_result_id(messages[end]) in wanted:
            wanted.discard(tool_result_id(messages[end]))
            end += 1
        if not wanted and end <= settled and all(collapsible(i) for i in range(index, end)):
            steps.append(Step(index, end))
        index = end
    return steps


def runs(steps: Sequence[Step], step_ends: Sequence[int]) -> list[list[Step]]:
    """Adjacent steps grouped by the plan step that settled them; only runs of ``MIN_RUN`` or more."""
    groups: list[list[Step]] = []
    current: list[Step] = []
    for step in steps:
        if current and (
            current[-1].end != step.start or _settled_by(current[-1], step_ends) != _settled_by(step, step_ends)
        ):
            groups.append(current)
            current = []
        current.append(step)
    if current:
        groups.append(current)
    return [group for group in groups if len(group) >= MIN_RUN]


REPEAT_THE_CALL = ""  # what ``stored`` answers for an output not worth storing again (a read-back's)
Stored = Callable[[str, BlobKind, str, str], "str | None"]  # (text, kind, tool, arguments) -> its handle


def collapse_run(
    shaped: Sequence[Message],
    history: Sequence[Message],
    run: Sequence[Step],
    stored: Stored,
    quote_chars: int = INLINE_OUTPUT_CHARS,
) -> list[Message]:
    """The run as sent: its last step as shaped, its assistant message first listing the steps before it.

    Lines are read from ``history`` (the messages whole); ``stored`` keeps an
    output, reasoning or cut arguments in the store and returns its handle
    (None: not stored, and the output is quoted whole instead).  An output
    shorter than ``quote_chars`` (the view's ``min_chars``: too short to be
    worth a stub) is quoted whole in its line, as the view sends it whole.
    """
    last = run[-1]
    lines = [
        f"{COLLAPSE_MARK} (call -> verdict, size, handle); the history keeps them whole: stowage_fetch(handle=...) "
        "reads an output, stowage_grep searches the outputs and the reasoning]"
    ]
    for number, step in enumerate(run[:-1], 1):
        lines.extend(_step_lines(history, step, number, stored, quote_chars))
    lines.append("[stowage: end of the earlier steps]")
    head = shaped[last.start]
    own = head.get("content")
    replaced = dict(head)
    replaced["content"] = "\n".join(lines) + (f"\n{own}" if isinstance(own, str) and own else "")
    return [replaced, *shaped[last.start + 1 : last.end]]


def _step_lines(history: Sequence[Message], step: Step, number: int, stored: Stored, quote_chars: int) -> list[str]:
    assistant = history[step.start]
    reasoning = assistant.get("content")
    if isinstance(reasoning, str) and reasoning.strip():
        stored(reasoning, BlobKind.REASONING, "assistant", "")  # stowage_grep finds it; the line does not repeat it
    results = {tool_result_id(m): m for m in history[step.start + 1 : step.end]}
    lines = []
    for call in tool_calls_of(assistant):
        name = call_name(call) or "tool"
        arguments = call_arguments_text(call) if isinstance(call, dict) else ""
        if len(arguments) > CALL_CHARS:
            stored(arguments, BlobKind.ARGUMENTS, name, "")
        result = results.get(str(call.get("id") or "")) if isinstance(call, dict) else None
        content = result.get("content") if result is not None else None
        text = content if isinstance(content, str) else ""  # stored as it is: the handle reads the exact output
        lines.append(
            f"{number}. {name}: {call_head(arguments)} {_result_tail(text, name, arguments, stored, quote_chars)}"
        )
    return lines


def call_head(arguments: str) -> str:
    """The call's one argument, or its arguments as compact JSON, cut to ``CALL_CHARS``."""
    try:
        value: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = arguments
    if isinstance(value, dict):
        strings = [v for v in value.values() if isinstance(v, str)]
        value = strings[0] if len(value) == 1 and strings else json.dumps(value, ensure_ascii=False)
    flat = " ".join(str(value).split())
    return flat if len(flat) <= CALL_CHARS else flat[: CALL_CHARS - 1] + "…"


def _result_tail(text: str, name: str, arguments: str, stored: Stored, quote_chars: int) -> str:
    """``-> verdict, size, handle``, or a short output itself (also one whose bytes could not be stored)."""
    flat = _flat_within(text, INLINE_OUTPUT_CHARS)
    if flat is not None:
        return f"-> {flat}" if flat else "-> (no output)"
    if len(text) >= quote_chars:  # measured as the view measures it (measure.py), unstripped
        handle = stored(text, BlobKind.OUTPUT, name, arguments)
        if handle == REPEAT_THE_CALL:  # a read-back's output: the store already holds what it read
            return f"-> {outcome_of(text)}, {len(text):,} chars; repeat the call to read it again"
        if handle is not None:
            return f"-> {outcome_of(text)}, {len(text):,} chars, handle {handle}"
    return f"-> {text.strip()}"  # too short to be worth a handle, or the store refused its bytes


def _flat_within(text: str, limit: int) -> str | None:
    """``text`` with each whitespace run as one space, or None when that is longer than ``limit``.

    Lines are rebuilt for every request: a long output is split only as far as
    its first ``limit // 2 + 1`` words (each takes a character and a space, so
    one more word would already pass ``limit``), not into all of its words.
    """
    most = limit // 2 + 1
    words = text.split(None, most)
    if len(words) > most:
        return None
    flat = " ".join(words)
    return flat if len(flat) <= limit else None


def collapsible_message(message: Any) -> bool:
    """A message a line can stand for: plain text (or none), no provider reasoning fields to keep."""
    if message.__class__ is not dict:
        return False
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return False
    return not (message.get("reasoning_content") or message.get("reasoning") or message.get("thinking"))


def _settled_by(step: Step, step_ends: Sequence[int]) -> int:
    """Which plan step settled ``step``: the first whose boundary its last message lies before (ends ascend)."""
    return bisect.bisect_left(step_ends, step.end)
