"""What a session's engine did, as text: ``stowage status`` (from the status files) and ``/stowage`` (live).

Both read the same dictionary, the engine's ``get_status()``, which the engine
also writes to ``<store>/session-status/<name>.json`` (``context_engine/session_files.py``) at each turn's end.
Files written by an older Stowage lack some keys: every figure is optional.
"""

from __future__ import annotations

from typing import Any

from ..context_engine.summary_log import window_handle
from ..context_engine.trigger import trigger_text
from .formatting import fields, human_size


def _n(value: Any) -> str:
    try:
        return f"{int(value or 0):,}"
    except (TypeError, ValueError):
        return "?"


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _d(value: Any) -> dict[str, Any]:
    """A sub-dictionary of a status file (anything else, from a damaged file, reads as empty)."""
    return value if isinstance(value, dict) else {}


def _compaction_text(entry: dict[str, Any]) -> str:
    before, after = entry.get("tokens_before"), entry.get("tokens_after")
    sizes = f"{_n(before)} -> {_n(after)} tokens" if before and after else "sizes not measured"
    result = entry.get("result") or "?"
    how = {"compacted": "model summary", "fallback": "model-free fallback summary"}.get(result, result)
    text = f"{sizes}, {how}"
    if entry.get("summary_error"):
        text += f" (why: {entry['summary_error']})"
    if entry.get("pruned_outputs"):
        text += f"; {_n(entry['pruned_outputs'])} output(s) pruned"
    handle = window_handle(entry.get("window_reference")) if isinstance(entry.get("window_reference"), str) else None
    if handle:
        text += f"; the summarized messages are stored whole under handle {handle}"
    return text


def saved_tokens(status: dict[str, Any]) -> int:
    """The one "saved" figure: tokens of the requests as sent vs the same history unshaped, spills included."""
    return _int(_d(status.get("view")).get("tokens_saved"))


def saved_text(status: dict[str, Any]) -> str:
    """``12,345 tokens saved over 7 requests (...)``: what status, ``/stowage`` and the dashboard all print."""
    view = _d(status.get("view"))
    requests = _int(view.get("requests"))
    text = f"{_n(saved_tokens(status))} tokens saved over {_n(requests)} request{'' if requests == 1 else 's'}"
    if "unshaped_tokens" not in view:  # a status file from before spills were counted
        return text + " (by the lean view)"
    parts = [f"sent {_n(view.get('sent_tokens'))} of {_n(view.get('unshaped_tokens'))} history tokens"]
    parts.append(f"{_n(view.get('view_tokens_saved'))} by the lean view")
    parts.append(f"{_n(view.get('spill_tokens_saved'))} by spilled outputs")
    return text + " (" + "; ".join(parts) + ")"


def session_rows(status: dict[str, Any]) -> list[tuple[str, Any]]:
    """Rows for one session: compactions, spills, savings, failures, tool search, the next trigger."""
    rows: list[tuple[str, Any]] = []
    compactions = _int(status.get("compression_count"))
    last = _d(status.get("last_compaction")) or None
    rows.append(("compactions", f"{compactions:,}" + (f"; last: {_compaction_text(last)}" if last else "")))
    view = _d(status.get("view"))
    if view.get("enabled") is False:
        rows.append(("lean view", "off"))
        if view.get("requests"):
            rows.append(("saved", saved_text(status)))
    elif view:
        req = _d(view.get("last_request"))
        rows.append(("saved", saved_text(status)))
        unshaped = req.get("unshaped_tokens", req.get("full_tokens"))
        rows.append(("last request", f"{_n(req.get('sent_tokens'))} tokens sent of {_n(unshaped)} "
                                     f"({_n(view.get('steps'))} view step(s) so far)"))
        if view.get("unstored_outputs"):
            rows.append(("", f"{_n(view['unstored_outputs'])} output(s) kept verbatim: {view.get('last_error')}"))
    store = _d(status.get("store"))
    spills = [s for s in store.get("recent_spills") or [] if isinstance(s, dict)] \
        if isinstance(store.get("recent_spills"), list) else []
    spill_text = f"{_n(store.get('spills'))}"
    if spills:
        shown = ", ".join(f"{s.get('handle')} ({s.get('tool')}, {_n(s.get('tokens'))} tokens)" for s in spills[-5:])
        spill_text += f"; newest: {shown}"
    rows.append(("spills", spill_text))
    failures = _int(store.get("spill_failures")) + _int(store.get("archive_failures"))
    fail_text = (f"{_n(store.get('spill_failures'))} spill(s), {_n(store.get('archive_failures'))} archive(s) not "
                 "stored" if failures else "none")
    if store.get("error"):
        fail_text += f"; store unavailable: {store['error']}"
    elif failures and store.get("last_store_error"):
        fail_text += f"; last error: {store['last_store_error']}"
    rows.append(("store failures", fail_text))
    evicted = _d(store.get("cap_evicted"))
    if _int(evicted.get("blobs")):
        rows.append(("size cap", f"{_n(evicted.get('blobs'))} of this session's stored output(s) "
                                 f"({human_size(_int(evicted.get('bytes')))}) tombstoned to keep the store under "
                                 "its cap (store.max_store_mb); their handles answer with tombstones"))
    search = _d(status.get("tool_search"))
    if search:
        state = (f"active, {_n(search.get('deferred'))} tool(s) deferred" if search.get("active")
                 else f"inactive ({search.get('reason') or search.get('mode') or 'no reason given'})")
        rows.append(("tool search", f"{state}; {_n(search.get('searches'))} search(es), "
                                    f"{_n(search.get('calls'))} bridged call(s)"))
    threshold = status.get("threshold_tokens")
    if threshold:
        gov = _d(status.get("governor"))
        why = trigger_text(_d(status.get("trigger")))
        trigger = (f"when a request reaches {_n(threshold)} tokens" + (f" ({why})" if why else "")
                   + f"; last request {_n(status.get('last_prompt_tokens'))}")
        if gov.get("backoff"):
            trigger += f"; backing off: {gov['backoff']}"
        if gov.get("summary_cooldown_seconds"):
            trigger += f"; summary model cooling down {gov['summary_cooldown_seconds']} s (fallback summary meanwhile)"
        rows.append(("next compaction", trigger))
    ahead = _d(status.get("ahead"))
    if ahead:
        rows.append(("summaries ahead", _ahead_text(ahead)))
    return rows


def _ahead_text(ahead: dict[str, Any]) -> str:
    """Summaries written in the background before a compaction needed them (``compaction.prepare_at``)."""
    if not ahead.get("prepare_at"):
        return "off (compaction.prepare_at: 0)"
    text = (f"{_n(ahead.get('prepared'))} prepared, {_n(ahead.get('used'))} used by a compaction, "
            f"{_n(ahead.get('discarded'))} discarded, {_n(ahead.get('failed'))} failed; now {ahead.get('state') or '?'}")
    last = _d(ahead.get("last"))
    if last.get("prepared_ahead"):
        text += f"; the last compaction waited {_n(round(float(last.get('wait_ms') or 0)))} ms for its summary"
    return text


def session_text(session_id: Any, status: dict[str, Any], indent: int = 2) -> list[str]:
    return [f"{' ' * (indent - 2)}session {session_id}", fields(session_rows(status), indent=indent)]
