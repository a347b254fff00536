"""A session is recorded at its first activity, never by being started.

Hermes builds an agent, and so starts a context-engine session, for things
that send nothing: its web dashboard's embedded chat does it at every page
load.  Such a session must leave the store (its sessions table, the store
folder itself) and the status files as they were; the first request, response,
tool output, compaction or fetch records it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from stowage.blobstore import BlobStore
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.status_file import read_session_statuses, status_path

USAGE = {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Read the log."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "log line\n" * 400},
    {"role": "user", "content": "Now fix it."},
]


def engine(home: Path) -> StowageEngineCore:
    eng = StowageEngineCore(load_settings({}), summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    eng.update_model("m", 128_000)
    return eng


def sessions(root: Path) -> dict[str, tuple[bool, float] | None]:
    """The store's sessions table, as ``stowage status`` counts it."""
    store = BlobStore(root)
    try:
        with store.index.read() as tx:
            ids = [row[0] for row in tx.execute("SELECT id FROM sessions ORDER BY id")]
            return {sid: tx.session_row(sid) for sid in ids}
    finally:
        store.close()


def page_load(home: Path, session_id: str) -> None:
    """What Hermes's dashboard does per page load: an agent is built (its engine a copy), started, closed."""
    eng = copy.deepcopy(engine(home))
    eng.on_session_start(session_id, hermes_home=str(home), platform="tui")
    eng.end_turn_from_plugin_hook()  # the gateway's session.close fires the on_session_end plugin hook
    eng.on_session_end(session_id, [])


def test_a_started_and_closed_session_creates_no_store(tmp_path: Path) -> None:
    page_load(tmp_path, "page-1")
    assert not (tmp_path / "stowage").exists()


def test_a_started_and_closed_session_leaves_an_existing_store_unchanged(tmp_path: Path) -> None:
    real = engine(tmp_path)
    real.on_session_start("real", hermes_home=str(tmp_path))
    real.select_context(HISTORY)
    real.update_from_response(USAGE)
    real.end_turn()
    root = tmp_path / "stowage"
    before = (sessions(root), status_path(root, "real").read_bytes(), sorted(p.name for p in root.rglob("*")))
    for n in range(3):
        page_load(tmp_path, f"page-{n}")
    after = (sessions(root), status_path(root, "real").read_bytes(), sorted(p.name for p in root.rglob("*")))
    assert after == before
    assert list(before[0]) == ["real"] and [s.session_id for s in read_session_statuses(root)] == ["real"]


def _request(eng: StowageEngineCore) -> None:
    eng.select_context(HISTORY)


def _response(eng: StowageEngineCore) -> None:
    eng.update_from_response(USAGE)


def _tool_output(eng: StowageEngineCore) -> None:
    eng.spill_tool_result("terminal", "{}", "small output")


def _compaction(eng: StowageEngineCore) -> None:
    eng.compress(HISTORY * 3, force=True)


def _fetch(eng: StowageEngineCore) -> None:
    json.loads(eng.handle_tool_call("stowage_grep", {"pattern": "nothing"}))


@pytest.mark.parametrize(
    "activity", [_request, _response, _tool_output, _compaction, _fetch], ids=lambda f: f.__name__.strip("_")
)
def test_the_first_activity_records_the_session(tmp_path: Path, activity: Callable[[StowageEngineCore], None]) -> None:
    eng = engine(tmp_path)
    eng.on_session_start("s1", hermes_home=str(tmp_path))
    root = tmp_path / "stowage"
    assert not root.exists() or "s1" not in sessions(root)
    activity(eng)
    assert sessions(root)["s1"][0] is True  # type: ignore[index]  # live
    eng.end_turn()
    assert [s.session_id for s in read_session_statuses(root)] == ["s1"]
    eng.on_session_end("s1", [])
    assert sessions(root)["s1"][0] is False  # type: ignore[index]  # ended


def test_a_new_conversation_on_the_same_agent_waits_for_its_own_activity(tmp_path: Path) -> None:
    eng = engine(tmp_path)
    eng.on_session_start("first", hermes_home=str(tmp_path))
    _request(eng)
    eng.on_session_start("second", hermes_home=str(tmp_path))  # /new: another id, nothing sent yet
    eng.end_turn_from_plugin_hook()
    root = tmp_path / "stowage"
    assert list(sessions(root)) == ["first"] and not status_path(root, "second").exists()
    _request(eng)
    assert list(sessions(root)) == ["first", "second"]


def test_a_compaction_continuation_is_recorded_at_once_with_the_blobs_it_continues(tmp_path: Path) -> None:
    eng = engine(tmp_path)
    eng.on_session_start("main", hermes_home=str(tmp_path))
    handle_text = eng.spill_tool_result("terminal", "{}", "".join(f"row {i}\n" for i in range(20_000))).text
    assert handle_text and "stowage_fetch" in handle_text
    eng.on_session_start("main-2", old_session_id="main", boundary_reason="compression", hermes_home=str(tmp_path))
    root = tmp_path / "stowage"
    assert sessions(root)["main-2"][0] is True  # type: ignore[index]
    found = json.loads(eng.handle_tool_call("stowage_grep", {"pattern": "row 19999"}))
    assert found["results"], found  # the new id reads what the conversation stored under the old one
