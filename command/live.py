"""What a session's engine did, as text: ``stowage status`` (from the status files) and ``/stowage`` (live).

Both read the same record, the engine's :class:`SessionStatus`: live from
``engine.status()``, or read back from ``<store>/session-status/<session>.json``
(files of older Stowage versions lack some figures; they read as defaults).
"""

from __future__ import annotations

from typing import Any

from ..context_engine.policy.fixed_part import below_fixed_part
from ..context_engine.policy.trigger import trigger_text
from ..context_engine.records.compaction_record import CompactionRecord
from ..context_engine.records.plain_data import to_plain
from ..context_engine.records.session_status import AheadStatus, LastRequest, SessionStatus
from ..context_engine.records.summary_log import window_handle
from .formatting import fields, human_size


def _n(value: Any) -> str:
    try:
        return f"{int(value or 0):,}"
    except (TypeError, ValueError):
        return "?"


def served_text(entry: CompactionRecord) -> str:
    """How a compaction was served: a model summary (written now or ahead), prune only, or the fallback summary.

    ``stowage summary`` lists exactly the compactions that wrote a summary, so "prune only" here is the
    compaction it has no summary of.
    """
    result = entry.result or "?"
    if result == "fallback":
        return "model-free fallback summary"
    if result != "compacted":
        return result
    source = entry.summary_source
    if source == "prepared":
        return "model summary (written ahead)"
    if source == "fallback":
        return "model-free fallback summary"
    if source == "model" or entry.summary_chars or (not source and entry.window_messages):
        return "model summary"  # (a file from before summary_source: a summarized window means a summary)
    return "prune only (older outputs stubbed, no summary needed)"


def _compaction_text(entry: CompactionRecord) -> str:
    before, after = entry.tokens_before, entry.tokens_after
    sizes = f"{_n(before)} -> {_n(after)} tokens" if before and after else "sizes not measured"
    how = served_text(entry)
    text = f"{sizes}, {how}"
    if entry.summary_error:
        text += f" (why: {entry.summary_error})"
    if entry.pruned_outputs:
        text += f"; {_n(entry.pruned_outputs)} output(s) pruned"
    handle = window_handle(entry.window_reference)
    if handle:
        text += f"; the summarized messages are stored whole under handle {handle}"
    return text


def saved_tokens(status: SessionStatus) -> int:
    """The one "saved" figure: tokens of the requests as sent vs the same history unshaped, spills included."""
    return status.view.tokens_saved if status.view is not None else 0


def saved_text(status: SessionStatus) -> str:
    """``12,345 tokens saved over 7 requests (...)``: what status, ``/stowage`` and the dashboard all print."""
    view = status.view
    requests = view.requests if view is not None else 0
    text = f"{_n(saved_tokens(status))} tokens saved over {_n(requests)} request{'' if requests == 1 else 's'}"
    if view is None or view.unshaped_tokens is None:  # a status file from before spills were counted
        return text + " (by the lean view)"
    parts = [
        f"sent {_n(view.sent_tokens)} of {_n(view.unshaped_tokens)} message tokens",
        f"{_n(view.view_tokens_saved)} by the lean view",
        f"{_n(view.spill_tokens_saved)} by spilled outputs",
    ]
    return text + " (" + "; ".join(parts) + "; summed over the requests, system prompt and tool schemas not counted)"


def saved_figures(status: SessionStatus) -> list[tuple[str, str]]:
    """The totals as labelled figures, the numbers of :func:`saved_text`: the dashboard shows them in one row."""
    view = status.view
    figures = [("tokens saved", _n(saved_tokens(status))), ("requests", _n(view.requests if view is not None else 0))]
    if view is not None and view.unshaped_tokens is not None:
        figures += [
            ("sent", f"{_n(view.sent_tokens)} of {_n(view.unshaped_tokens)}"),
            ("by the lean view", _n(view.view_tokens_saved)),
            ("by spills", _n(view.spill_tokens_saved)),
        ]
    return figures + [("compactions", _n(status.compression_count)), ("spills", _n(status.store.spills))]


def session_rows(status: SessionStatus) -> list[tuple[str, Any]]:
    """Rows for one session: compactions, spills, savings, failures, tool search, the next trigger."""
    rows: list[tuple[str, Any]] = []
    if status.runs > 1:
        rows.append(("runs", f"{status.runs:,} (resumed {status.runs - 1:,} time(s); the figures cover every run)"))
    last = status.last_compaction
    rows.append(
        ("compactions", f"{status.compression_count:,}" + (f"; last: {_compaction_text(last)}" if last else ""))
    )
    view = status.view
    if view is not None and view.enabled is False:
        rows.append(("lean view", "off"))
        if view.requests:
            rows.append(("saved", saved_text(status)))
    elif view is not None:
        req = view.last_request or LastRequest()
        rows.append(("saved", saved_text(status)))
        rows.append(
            (
                "newest request",
                f"{_n(req.sent_tokens)} message tokens sent of {_n(req.unshaped_base)} "
                f"({_n(view.steps)} view step(s) so far)",
            )
        )
        if view.unstored_outputs:
            rows.append(("", f"{_n(view.unstored_outputs)} output(s) kept verbatim: {view.last_error}"))
    store = status.store
    spill_text = f"{_n(store.spills)}"
    spills = store.recent_spills
    if spills:
        shown = ", ".join(f"{s.handle} ({s.tool}, {_n(s.tokens)} tokens)" for s in spills[-5:])
        spill_text += f"; newest: {shown}"
    rows.append(("spills", spill_text))
    failures = store.spill_failures + store.archive_failures
    fail_text = (
        f"{_n(store.spill_failures)} spill(s), {_n(store.archive_failures)} archive(s) not stored"
        if failures
        else "none"
    )
    if store.error:
        fail_text += f"; store unavailable: {store.error}"
    elif failures and store.last_store_error:
        fail_text += f"; last error: {store.last_store_error}"
    rows.append(("store failures", fail_text))
    evicted = store.cap_evicted
    if evicted.blobs:
        rows.append(
            (
                "size cap",
                f"{_n(evicted.blobs)} of this session's stored output(s) "
                f"({human_size(evicted.bytes)}) tombstoned to keep the store under "
                "its cap (store.max_store_mb); their handles answer with tombstones",
            )
        )
    search = status.tool_search
    if search is not None:
        state = (
            f"active, {_n(search.deferred)} tool(s) deferred"
            if search.active
            else f"inactive ({search.reason or search.mode or 'no reason given'})"
        )
        rows.append(("tool search", f"{state}; {_n(search.searches)} search(es), {_n(search.calls)} bridged call(s)"))
        if search.semantic:
            rows.append(("tool ranking", search.semantic))
        if search.inline and search.active:
            shown = ", ".join(search.inlined) if search.inlined else "none"
            rows.append(("inline schemas", f"the tool list stays fixed; the newest message's block names: {shown}"))
    if status.threshold_tokens:
        gov = status.governor
        why = trigger_text(to_plain(status.trigger)) if status.trigger is not None else ""
        trigger = (
            f"when a request reaches {_n(status.threshold_tokens)} tokens"
            + (f" ({why})" if why else "")
            + f"; the newest request counted {_n(status.last_prompt_tokens)} in all"
        )
        fixed = status.fixed_part
        if fixed is not None and fixed.tokens:
            trigger += f"; every request carries {_n(fixed.tokens)} (system prompt and tool schemas)"
        if gov.backoff:
            trigger += f"; backing off: {gov.backoff}"
        if gov.summary_cooldown_seconds:
            trigger += f"; summary model cooling down {gov.summary_cooldown_seconds} s (fallback summary meanwhile)"
        rows.append(("next compaction", trigger))
        warning = below_fixed_part(fixed, status.threshold_tokens, status.context_length, _trigger_key(status))
        if warning:
            rows.append(("WARNING", warning))
    if status.ahead is not None:
        rows.append(("summaries ahead", _ahead_text(status.ahead)))
    served = _served_text(status)
    if served:
        rows.append(("compactions served", served))
    return rows


def _trigger_key(status: SessionStatus) -> str:
    key = status.trigger.key if status.trigger is not None else ""
    return key if isinstance(key, str) and key else "view.compact_at"


def _served_text(status: SessionStatus) -> str:
    """How the newest compactions got their summaries and how long each blocked the turn; the wasted calls."""
    shown = [c for c in status.compactions if c.wait_s is not None][-5:]  # an older writer measured no wait
    text = "; ".join(f"{served_text(c)}, waited {c.wait_s:.1f} s" for c in shown)
    ahead = status.ahead
    if ahead is not None and ahead.wasted:
        text += f"{'; ' if text else ''}{_n(ahead.wasted)} summary call(s) prepared and wasted"
        text += f" ({_n(ahead.wasted_tokens)} input tokens)"
    return text


def _ahead_text(ahead: AheadStatus) -> str:
    """Summaries written in the background before a compaction needed them (``compaction.prepare_at``)."""
    if not ahead.prepare_at:
        return "off (compaction.prepare_at: 0)"
    text = (
        f"{_n(ahead.prepared)} prepared, {_n(ahead.used)} used by a compaction, "
        f"{_n(ahead.discarded)} discarded, {_n(ahead.failed)} failed; now {ahead.state or '?'}"
    )
    last = ahead.last
    if last is not None and last.prepared:
        text += f"; the last compaction waited {_n(round(last.wait_s * 1000))} ms for its summary"
    return text


def session_text(session_id: Any, status: SessionStatus, indent: int = 2) -> list[str]:
    return [f"{' ' * (indent - 2)}session {session_id}", fields(session_rows(status), indent=indent)]
