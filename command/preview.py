"""``/stowage preview`` as text: a compaction's dry run, from the engine's typed ``CompactionPreview``.

Pure formatting over that record, so it is tested without a session.  It
says how old the history it describes is: Hermes 0.19.0 hands a slash
command no messages, so the engine previews the newest history it was shown
(the last provider request or compaction).
"""

from __future__ import annotations

from typing import Any

from ..context_engine.compaction.preview import CompactionPreview
from .formatting import fields, relative_time


def _n(value: int) -> str:
    return f"{value:,}"


def preview_text(session_id: str, p: CompactionPreview, now: float | None = None) -> str:
    """What a compaction now would do, in the order it would do it."""
    source = {"request": "the last provider request", "compaction": "the history the last compaction left"}.get(
        p.source, p.source
    )
    lines = [
        f"session {session_id}: compaction preview (dry run: no model call, nothing stored or changed)",
        f"  history as of {source}, {relative_time(p.seen_at, now)}; turns since then are not included",
    ]
    if p.would_compact:
        trigger = (
            f"would compact now: the last request had {_n(p.last_prompt_tokens)} tokens, "
            f"threshold {_n(p.threshold_tokens)}"
        )
    else:
        trigger = f"would not compact on its own now ({p.reason or 'no reason given'})"
        if (p.reason or "").startswith("below_threshold"):
            trigger = (
                f"would not compact on its own now: the last request had {_n(p.last_prompt_tokens)} tokens, below "
                f"the threshold of {_n(p.threshold_tokens)}"
            )
        trigger += "; /compress forces one anyway (with a shorter tail than below)"
    rows: list[tuple[str, Any]] = [
        (
            "now",
            f"{_n(p.messages)} message(s), about {_n(p.tokens)} tokens"
            + (f" (plus {_n(p.system_messages)} system message(s))" if p.system_messages else ""),
        ),
        ("trigger", trigger),
        ("compactions so far", _n(p.compactions_so_far)),
        ("head kept", f"{_n(p.head_messages)} message(s), {_n(p.head_tokens)} tokens"),
    ]
    if p.window_messages:
        window = (
            f"messages {_n(p.window_first)}-{_n(p.window_last)}: {_n(p.window_messages)}"
            f" message(s), {_n(p.window_tokens)} tokens"
        )
        if p.window_tool_outputs:
            window += f", {_n(p.window_tool_outputs)} tool output(s)"
        rows.append(("summarized", window + "; stored whole under a handle named in the summary"))
    else:
        rows.append(("summarized", "nothing: the kept head and tail already cover the history"))
    pruned = f"{_n(p.pruned_outputs)} older tool output(s) outside the window -> stubs"
    if p.pruned_outputs:
        pruned += f", saving about {_n(p.pruned_tokens_saved)} tokens (each stored under a handle)"
    if p.arguments_shrunk:
        pruned += f"; {_n(p.arguments_shrunk)} oversized tool-call argument(s) cut"
    if p.images_removed:
        pruned += f"; {_n(p.images_removed)} image(s) removed"
    rows.append(("pruned", pruned))
    rows.append(("tail kept", f"{_n(p.tail_messages)} message(s), {_n(p.tail_tokens)} tokens"))
    if p.window_messages:
        rows.append(("summary", f"at most {_n(p.summary_budget_tokens)} tokens (the model's budget)"))
    rows.append(
        (
            "after",
            f"about {_n(p.estimated_after_tokens)} tokens or less "
            f"(head + tail after pruning + the summary budget; system prompt and tools aside)",
        )
    )
    return "\n".join(lines) + "\n" + fields(rows)
