"""``/stowage preview`` as text: a compaction's dry run, from ``CompactionPreview.as_dict()``.

Pure formatting over a plain dict (the engine's figures), so it is tested
without a session.  It says how old the history it describes is: Hermes
0.19.0 hands a slash command no messages, so the engine previews the
newest history it was shown (the last provider request or compaction).
"""

from __future__ import annotations

from typing import Any

from .formatting import fields, relative_time


def _n(value: Any) -> str:
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return "?"


def preview_text(session_id: str, p: dict[str, Any], now: float | None = None) -> str:
    """What a compaction now would do, in the order it would do it."""
    at = p.get("seen_at")
    source = {"request": "the last provider request", "compaction": "the history the last compaction left"}.get(
        str(p.get("source")), str(p.get("source"))
    )
    age = relative_time(at, now) if isinstance(at, (int, float)) else "at an unknown time"
    lines = [
        f"session {session_id}: compaction preview (dry run: no model call, nothing stored or changed)",
        f"  history as of {source}, {age}; turns since then are not included",
    ]
    threshold, last = p.get("threshold_tokens"), p.get("last_prompt_tokens")
    if p.get("would_compact"):
        trigger = f"would compact now: the last request had {_n(last)} tokens, threshold {_n(threshold)}"
    else:
        trigger = f"would not compact on its own now ({p.get('reason') or 'no reason given'})"
        if str(p.get("reason") or "").startswith("below_threshold"):
            trigger = (
                f"would not compact on its own now: the last request had {_n(last)} tokens, below the "
                f"threshold of {_n(threshold)}"
            )
        trigger += "; /compress forces one anyway (with a shorter tail than below)"
    rows: list[tuple[str, Any]] = [
        (
            "now",
            f"{_n(p.get('messages'))} message(s), about {_n(p.get('tokens'))} tokens"
            + (f" (plus {_n(p.get('system_messages'))} system message(s))" if p.get("system_messages") else ""),
        ),
        ("trigger", trigger),
        ("compactions so far", _n(p.get("compactions_so_far"))),
        ("head kept", f"{_n(p.get('head_messages'))} message(s), {_n(p.get('head_tokens'))} tokens"),
    ]
    if p.get("window_messages"):
        window = (
            f"messages {_n(p.get('window_first'))}-{_n(p.get('window_last'))}: {_n(p.get('window_messages'))}"
            f" message(s), {_n(p.get('window_tokens'))} tokens"
        )
        if p.get("window_tool_outputs"):
            window += f", {_n(p.get('window_tool_outputs'))} tool output(s)"
        rows.append(("summarized", window + "; stored whole under a handle named in the summary"))
    else:
        rows.append(("summarized", "nothing: the kept head and tail already cover the history"))
    pruned = f"{_n(p.get('pruned_outputs'))} older tool output(s) outside the window -> stubs"
    if p.get("pruned_outputs"):
        pruned += f", saving about {_n(p.get('pruned_tokens_saved'))} tokens (each stored under a handle)"
    if p.get("arguments_shrunk"):
        pruned += f"; {_n(p.get('arguments_shrunk'))} oversized tool-call argument(s) cut"
    if p.get("images_removed"):
        pruned += f"; {_n(p.get('images_removed'))} image(s) removed"
    rows.append(("pruned", pruned))
    rows.append(("tail kept", f"{_n(p.get('tail_messages'))} message(s), {_n(p.get('tail_tokens'))} tokens"))
    if p.get("window_messages"):
        rows.append(("summary", f"at most {_n(p.get('summary_budget_tokens'))} tokens (the model's budget)"))
    rows.append(
        (
            "after",
            f"about {_n(p.get('estimated_after_tokens'))} tokens or less "
            f"(head + tail after pruning + the summary budget; system prompt and tools aside)",
        )
    )
    return "\n".join(lines) + "\n" + fields(rows)
