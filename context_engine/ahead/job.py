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

from ..chat.messages import Message, call_id, message_text, role_of, tool_calls_of, tool_result_id
from ..compaction.boundaries import Window, align_backward, align_forward
from ..compaction.inputs import CompactionPlan
from ..compaction.prune import prune
from ..compaction.summarize import window_prompt
from ..compaction.window_choice import choose, since_prepared

CountFn = Callable[[Message], int]
STUB_TOKENS = 60  # about what a pruned output's stub costs (tool, argument gist, outcome, size)


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

    The alignment rules of :mod:`..compaction.boundaries` hold at both ends, and no call
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


def prefix_miss(messages: list[Message], chosen: Window, job: SummaryJob) -> str | None:
    """Why ``job``'s window is not a prefix :func:`prepared_prefix` accepts for ``chosen`` (None: it is)."""
    window = job.window
    if window.head_end != chosen.head_end:
        return "the window's head moved"
    if window.tail_start > chosen.tail_start:
        return "the compaction's window ends before the prepared one"
    if window.tail_start > len(messages) or window_digest(messages[window.head_end : window.tail_start]) != job.digest:
        return "the history changed under the prepared window"
    if not clean_cut(messages, window):
        return "the prepared window no longer ends at a clean cut"
    return None


def arrived_since(messages: list[Message], plan: CompactionPlan, count: CountFn, job: SummaryJob) -> int | None:
    """What a compaction of ``messages`` now would keep between ``job``'s window and its own cut (tokens).

    The compactor's own rule (:func:`..compaction.compactor.compact`): the prepared
    window must be a clean prefix of the window it chooses, and what arrived
    after it is kept, older tool outputs stubbed, in a tail at most
    :func:`..compaction.window_choice.prepared_slack` longer than its own.  None: the
    compaction could not use the window at all.  Plain stubs here (the
    store's also name a handle: a few tokens more each).
    """
    choice = choose(messages, plan, count)
    window = job.window
    if choice.window.size == 0 or prepared_prefix(messages, choice.window, job) is None:
        return None
    pruned = prune(
        messages,
        protect_from=choice.prune_from,
        settings=choice.plan.prune,
        skip=range(window.head_end, window.tail_start),
    )
    return since_prepared(pruned.messages, window, choice.window, count)


def kept_size(messages: list[Message], count: CountFn, min_chars: int) -> int:
    """The history's tokens with every prunable tool output counted as its stub.

    What a prepared window's kept tail grows by per request (a compaction
    stubs older outputs in it), cheap enough for every request.
    """
    total = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        if role_of(message) == "tool" and len(message_text(message)) >= min_chars:
            total += STUB_TOKENS
        else:
            total += count(message)
    return total
