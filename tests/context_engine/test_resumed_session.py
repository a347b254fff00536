"""A resumed session keeps its history: each run's status extends the earlier runs' (issue 40, item 3).

Hermes resumes a session in a fresh engine (``hermes chat --resume`` starts a
new process; a gateway restart too).  The engine reads back the status file
the session's earlier runs left and extends it; a new conversation (another
id, ``/new``) starts from nothing.  The real CLI runs are
tests/e2e/test_stowage_resume.py.
"""

from __future__ import annotations

from pathlib import Path

from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.part_status import AheadStatus, RequestFigures, SpillRecord, StoreStatus, ViewStatus
from stowage.context_engine.records.resumed_status import continued
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import read_session_status, status_path
from stowage.context_engine.records.summary_log import read_summaries

from .helpers import history, make_engine

BIG_OUTPUT = "\n".join(f"row {i:05d} " + "abcdefgh" * 12 for i in range(2500))  # ~40k tokens: spilled


def _run(home: Path, session_id: str, *, compact: bool, spill: bool) -> StowageEngineCore:
    """One run of the session in a fresh engine (a new process): a request, maybe a spill and a compaction."""
    engine = make_engine()
    engine.on_session_start(session_id, hermes_home=str(home), platform="cli")
    if spill:
        assert engine.spill_tool_result("terminal", {"command": "cat big"}, BIG_OUTPUT).spilled is not None
    engine.select_context(history(turns=4))  # one request
    engine.update_from_response({"prompt_tokens": 50_000, "completion_tokens": 10})
    if compact:
        assert engine.compress(history(), current_tokens=50_000) is not None
    engine.end_turn()
    engine.on_session_end(session_id, [])
    return engine


def test_each_resumed_run_adds_to_the_earlier_runs(tmp_path: Path) -> None:
    root = tmp_path / "stowage"
    handles: list[str] = []
    turns = 0
    for run in range(4):
        engine = _run(tmp_path, "s-resumed", compact=run != 2, spill=run != 1)
        handles += [s.handle for s in engine.state.store.recent_spills]
        turns += engine.state.governor.turn  # this run's own turn clock
    status = read_session_status(root, "s-resumed")
    assert status is not None
    assert status.runs == 4
    assert status.compression_count == 3 and len(status.compactions) == 3
    assert len(status.requests) == 4  # one request figure per run, summed in order
    assert status.store.spills == 3 and [s.handle for s in status.store.recent_spills] == handles
    assert status.governor.turn == turns
    summaries, bad = read_summaries(root, "s-resumed")
    assert bad == 0 and [r["compaction"] for r in summaries] == [1, 2, 3]  # numbered across the runs
    # a fresh run reads what the last one left: its host-read count starts there
    resumed = make_engine()
    resumed.on_session_start("s-resumed", hermes_home=str(tmp_path))
    assert resumed.compression_count == 3 and resumed.status().runs == 5


def test_a_new_conversation_is_a_new_session(tmp_path: Path) -> None:
    engine = make_engine()
    engine.on_session_start("first", hermes_home=str(tmp_path))
    assert engine.spill_tool_result("terminal", {"command": "cat big"}, BIG_OUTPUT).spilled is not None
    engine.update_from_response({"prompt_tokens": 50_000})
    assert engine.compress(history(), current_tokens=50_000) is not None
    engine.end_turn()
    engine.on_session_start("second")  # another id on the same agent (the host's /new)
    engine.select_context(history(turns=2))
    engine.update_from_response({"prompt_tokens": 1_000})
    engine.end_turn()
    second = engine.status()
    assert second.runs == 1 and second.compression_count == 0 and second.compactions == []
    assert second.store.spills == 0 and second.store.recent_spills == []  # the first one's spill is its own
    assert len(second.requests) == 1
    engine.on_session_reset()  # /new on a host that only resets: nothing of "second" is carried either
    assert engine.status().compactions == [] and engine.status().requests == []
    first = read_session_status(tmp_path / "stowage", "first")
    assert first is not None and first.compression_count == 1 and first.runs == 1 and first.store.spills == 1


def test_a_compaction_continuing_the_session_keeps_the_earlier_runs(tmp_path: Path) -> None:
    _run(tmp_path, "s", compact=True, spill=False)
    engine = make_engine()
    engine.on_session_start("s", hermes_home=str(tmp_path))
    engine.update_from_response({"prompt_tokens": 50_000})
    assert engine.compress(history(), current_tokens=50_000) is not None
    engine.on_session_start("s-child", boundary_reason="compression", old_session_id="s")  # a rotating host
    engine.end_turn()
    status = engine.status()
    assert status.runs == 2 and status.compression_count == 2 and len(status.compactions) == 2
    # the summary log of the id the session goes on under starts with the old id's summaries
    summaries, _ = read_summaries(tmp_path / "stowage", "s-child")
    assert [r["compaction"] for r in summaries] == [1, 2]
    assert {r["session_id"] for r in summaries} == {"s-child"}


def test_a_damaged_status_file_resumes_as_a_first_run(tmp_path: Path) -> None:
    path = status_path(tmp_path / "stowage", "s")
    path.parent.mkdir(parents=True)
    path.write_text('{"session_id": "s", "compression_count": "many", "requests": [1, {"full": "x"}], "runs": -3')
    engine = _run(tmp_path, "s", compact=True, spill=False)  # not a JSON object: no earlier run, no error
    assert engine.status().runs == 1 and engine.compression_count == 1
    path.write_text('{"session_id": "s", "compression_count": "many", "requests": [1], "runs": -3, "view": 7}')
    resumed = make_engine()
    resumed.on_session_start("s", hermes_home=str(tmp_path))  # mistyped figures read as their defaults
    assert resumed.compression_count == 0 and resumed.status().runs == 2


def test_continued_sums_counters_and_bounds_lists() -> None:
    earlier = SessionStatus(
        runs=2,
        last_prompt_tokens=90_000,
        compression_count=4,
        requests=[RequestFigures(at=float(i), full=i, sent=i) for i in range(5)],
        store=StoreStatus(spills=3, tool_calls=2, recent_spills=[SpillRecord(handle=f"e{i}") for i in range(3)]),
        view=ViewStatus(requests=5, tokens_saved=700, sent_tokens=100, unshaped_tokens=None, steps=2),
        ahead=AheadStatus(prepared=2, used=1, discard_reasons={"stale": 1}),
    )
    run = SessionStatus(
        compression_count=5,  # restored at start: 4 earlier + 1 now
        requests=[RequestFigures(at=10.0, full=10, sent=10)],
        store=StoreStatus(spills=2, recent_spills=[SpillRecord(handle="r0"), SpillRecord(handle="r1")]),
        view=ViewStatus(requests=1, tokens_saved=50, sent_tokens=10, unshaped_tokens=60),
        ahead=AheadStatus(prepared=1, discard_reasons={"stale": 2, "reset": 1}),
    )
    both = continued(earlier, run, max_requests=4, max_spills=3)
    assert both.runs == 3 and both.compression_count == 5
    assert both.last_prompt_tokens == 90_000  # the run has no count yet: the earlier one stands
    assert [r.full for r in both.requests] == [2, 3, 4, 10]
    assert both.store.spills == 5 and both.store.tool_calls == 2
    assert [s.handle for s in both.store.recent_spills] == ["e2", "r0", "r1"]
    assert both.view is not None and (both.view.requests, both.view.tokens_saved) == (6, 750)
    assert (both.view.sent_tokens, both.view.unshaped_tokens, both.view.steps) == (110, 60, 2)
    assert both.ahead is not None and (both.ahead.prepared, both.ahead.used) == (3, 1)
    assert both.ahead.discard_reasons == {"stale": 3, "reset": 1}
    assert continued(None, run, max_requests=4, max_spills=3) is run
