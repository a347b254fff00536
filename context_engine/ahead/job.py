"""What a prepared summary is for, and when it may stand in for the compaction's own call.

Pure functions over message dicts.  A job is keyed by a hash of the exact
window messages and of the prompt the compactor would send for them (which
holds the previous summary, the focus topic, the memory context and the
date), so a prepared reply is only ever used for that same content.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from typing import Callable

from ..boundaries import Window, align_backward, align_forward
from ..compactor import CompactionPlan, choose, window_prompt
from ..messages import Message, call_id, role_of, tool_calls_of, tool_result_id

CountFn = Callable[[Message], int]


@dataclass(frozen=True)
class SummaryJob:
    """One summary to write ahead: ``messages[window]`` and the exact prompt for it."""

    key: str
    prompt: str
    window: Window
    digest: str  # of the window messages alone (matching a prefix needs it before any prompt is built)


def window_digest(window_messages: list[Message]) -> str:
    """A hash of the exact messages (every field, keys sorted)."""
    text = json.dumps(window_messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def job_key(prompt: str, window_messages: list[Message]) -> str:
    """The key of a reply: the prompt it answers and the messages it summarizes."""
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass"))
    digest.update(window_digest(window_messages).encode())
    return digest.hexdigest()


def build_job(
    messages: list[Message], plan: CompactionPlan, count: CountFn, *, today: str | None = None
) -> SummaryJob | None:
    """The job for the window a compaction of ``messages`` would summarize now (None: nothing to summarize).

    The focus topic and memory context are those of an automatic compaction
    (none); a ``/compress <focus>`` builds another prompt and never matches.
    """
    choice = choose(messages, plan, count)
    window = choice.window
    if window.size == 0:
        return None
    prompt, _ = window_prompt(
        messages,
        window,
        choice.plan,
        summaries=choice.summaries,
        focus_topic=None,
        memory_context="",
        today=today or date.today().isoformat(),
    )
    window_messages = messages[window.head_end : window.tail_start]
    return SummaryJob(job_key(prompt, window_messages), prompt, window, window_digest(window_messages))


def clean_cut(messages: list[Message], window: Window) -> bool:
    """True when ``messages[window]`` keeps every tool call together with its results.

    The alignment rules of :mod:`..boundaries` hold at both ends, and no call
    id is answered on the other side of either cut.
    """
    head, tail = window.head_end, window.tail_start
    if not 0 <= head < tail <= len(messages):
        return False
    if align_forward(messages, head) != head or align_backward(messages, tail) != tail:
        return False
    inside = messages[head:tail]
    called = {cid for m in inside for call in tool_calls_of(m) if (cid := call_id(call))}
    answered = {tool_result_id(m) for m in inside if role_of(m) == "tool"}
    outside_answers = {tool_result_id(m) for m in messages[:head] + messages[tail:] if role_of(m) == "tool"}
    return called <= answered and not (called & outside_answers) and answered <= called


def prepared_prefix(messages: list[Message], chosen: Window, job: SummaryJob) -> Window | None:
    """The job's window when it is ``chosen`` itself or a clean prefix of it, with the same messages."""
    window = job.window
    if window.head_end != chosen.head_end or not window.head_end < window.tail_start <= chosen.tail_start:
        return None
    if window_digest(messages[window.head_end : window.tail_start]) != job.digest:
        return None  # the history changed under the prepared window
    return window if clean_cut(messages, window) else None
