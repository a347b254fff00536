"""A resumed session's status: the earlier runs' record extended by the new run's (:func:`continued`).

Hermes resumes a session in a new agent (``hermes chat --resume``, ``/resume``,
a gateway restart), usually in a new process: the engine starts with fresh
figures.  When the session starts, the status file its earlier runs left is
read back (leniently: a damaged or foreign file reads as no earlier run), and
every status of the new run is that record extended by the run's own figures:
counters summed, lists appended and bounded as one run bounds them, the newest
single values taken from the run once it has them.  Written back, the result
is the next resume's earlier record, so a figure is counted once and no run's
is lost.  ``compression_count`` is the exception: the session restores it when
it starts (the host reads it, and each summary is numbered by it), so the
run's count already includes the earlier runs'.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from ...tool_search.status import ToolSearchStatus
from .part_status import AheadStatus, GovernorStatus, StoreStatus, ViewStatus
from .session_status import COMPACTIONS_SHOWN, SessionStatus


def continued(
    earlier: SessionStatus | None, run: SessionStatus, *, max_requests: int, max_spills: int
) -> SessionStatus:
    """The session's status over all its runs: ``earlier`` (None: this is its first run) and this ``run``.

    ``max_requests`` and ``max_spills`` bound the request timeline and the
    spill list as the session bounds them within a run.
    """
    if earlier is None:
        return run
    ran = run.last_prompt_tokens > 0  # the run has sent a request and got its count
    return dataclasses.replace(
        run,
        runs=max(earlier.runs, 1) + 1,
        last_prompt_tokens=run.last_prompt_tokens if ran else earlier.last_prompt_tokens,
        usage_percent=run.usage_percent if ran else earlier.usage_percent,
        compactions=(earlier.compactions + run.compactions)[-COMPACTIONS_SHOWN:],
        requests=(earlier.requests + run.requests)[-max_requests:],
        governor=_governor(earlier.governor, run.governor),
        store=_store(earlier.store, run.store, max_spills),
        tool_search=_tool_search(earlier.tool_search, run.tool_search),
        view=_view(earlier.view, run.view),
        ahead=_ahead(earlier.ahead, run.ahead),
        fixed_part=run.fixed_part if run.fixed_part is not None and run.fixed_part.tokens else earlier.fixed_part,
        extra={**earlier.extra, **run.extra},
    )


def _governor(earlier: GovernorStatus, run: GovernorStatus) -> GovernorStatus:
    return dataclasses.replace(
        run, turn=earlier.turn + run.turn, summary_failures=earlier.summary_failures + run.summary_failures
    )


def _store(earlier: StoreStatus, run: StoreStatus, max_spills: int) -> StoreStatus:
    """Spills and failures summed, the newest spills listed; ``cap_evicted`` is the store's own figure already."""
    return dataclasses.replace(
        run,
        spills=earlier.spills + run.spills,
        spill_failures=earlier.spill_failures + run.spill_failures,
        archive_failures=earlier.archive_failures + run.archive_failures,
        tool_calls=earlier.tool_calls + run.tool_calls,
        recent_spills=(earlier.recent_spills + run.recent_spills)[-max_spills:],
        last_store_error=run.last_store_error or earlier.last_store_error,
    )


def _tool_search(earlier: ToolSearchStatus | None, run: ToolSearchStatus | None) -> ToolSearchStatus | None:
    if earlier is None or run is None:
        return run if run is not None else earlier
    return dataclasses.replace(
        run,
        searches=earlier.searches + run.searches,
        calls=earlier.calls + run.calls,
        refusals=earlier.refusals + run.refusals,
    )


def _view(earlier: ViewStatus | None, run: ViewStatus | None) -> ViewStatus | None:
    if earlier is None or run is None:
        return run if run is not None else earlier
    unshaped = (
        None
        if earlier.unshaped_tokens is None and run.unshaped_tokens is None
        else (earlier.unshaped_tokens or 0) + (run.unshaped_tokens or 0)
    )
    return dataclasses.replace(
        run,
        requests=earlier.requests + run.requests,
        tokens_saved=earlier.tokens_saved + run.tokens_saved,
        sent_tokens=earlier.sent_tokens + run.sent_tokens,
        unshaped_tokens=unshaped,
        view_tokens_saved=earlier.view_tokens_saved + run.view_tokens_saved,
        spill_tokens_saved=earlier.spill_tokens_saved + run.spill_tokens_saved,
        steps=earlier.steps + run.steps,
        unstored_outputs=earlier.unstored_outputs + run.unstored_outputs,
        last_error=run.last_error or earlier.last_error,
        last_request=run.last_request if run.requests else earlier.last_request,
    )


def _ahead(earlier: AheadStatus | None, run: AheadStatus | None) -> AheadStatus | None:
    if earlier is None or run is None:
        return run if run is not None else earlier
    reasons = Counter(earlier.discard_reasons)
    reasons.update(run.discard_reasons)
    return dataclasses.replace(
        run,
        prepared=earlier.prepared + run.prepared,
        used=earlier.used + run.used,
        discarded=earlier.discarded + run.discarded,
        failed=earlier.failed + run.failed,
        wasted=earlier.wasted + run.wasted,
        wasted_tokens=earlier.wasted_tokens + run.wasted_tokens,
        discard_reasons=dict(reasons),
        latency_s=run.latency_s if run.latency_s is not None else earlier.latency_s,
        last=run.last if run.last is not None else earlier.last,
    )
