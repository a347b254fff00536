"""A full disk: reads still answer, failed spills and archives are counted and said.

The real test mounts a small tmpfs (root only; skipped with a message
otherwise, CI runs as root), fills it, and then asks for every fetch mode of
intact blobs, spills a large output and compacts.  A simulated variant (the
fetch counter's write fails) runs everywhere.
"""

from __future__ import annotations

import json

import pytest

from stowage.blobstore import BlobStore, StoreIndexError
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.fetch_tools import FETCH, GREP, FetchLimits, FetchTools
from stowage.context_engine.store_session.session import SPILL_FAILED_NOTE

from .tmpfs import small_tmpfs

pytestmark = pytest.mark.reliability
MODES = [
    {"mode": "stat"},
    {"mode": "range", "start": 5, "count": 20},
    {"mode": "range", "unit": "chars"},
    {"mode": "grep", "pattern": "line 4"},
    {"mode": "json", "path": "$.items[3]"},
    {"mode": "full"},
]


def stored(store: BlobStore) -> list[str]:
    # kind "spill": what Stowage stores for a large output, and what stowage_grep searches (GREP_KINDS)
    return [
        store.put(
            json.dumps({"items": [f"line {i}" for i in range(200)]}, indent=1),
            session_id="s",
            tool_name="t",
            kind="spill",
        ).handle,
        store.put("\n".join(f"line {i}" for i in range(300)), session_id="s", tool_name="t", kind="spill").handle,
    ]


def ask_everything(tools: FetchTools, handles: list[str]) -> tuple[int, list[str]]:
    asked, failures = 0, []
    for handle in handles:
        for args in MODES:
            asked += 1
            reply = json.loads(tools.handle(FETCH, {"handle": handle, **args}))
            if "error" in reply and not (args["mode"] == "json" and "not a JSON" in reply["error"]):
                failures.append(f"{handle} {args}: {reply['error']}")
    asked += 1
    reply = json.loads(tools.handle(GREP, {"pattern": "line 7"}))
    if "error" in reply or not reply["results"]:
        failures.append(f"stowage_grep: {reply}")
    return asked, failures


def test_fetch_answers_when_the_fetch_counter_cannot_be_written(tmp_path, monkeypatch, figures):
    store = BlobStore(tmp_path / "store")
    handles = stored(store)

    def full_disk(sha):
        raise StoreIndexError(store.index_path, OSError(28, "database or disk is full"))

    monkeypatch.setattr(store, "record_fetch", full_disk)
    asked, failures = ask_everything(FetchTools(store, lambda: "s", FetchLimits()), handles)
    figures.update(requests=asked, failed=len(failures))
    assert not failures, failures


def fill(path) -> int:
    written = 0
    with open(path / "filler", "wb") as fh:
        block = b"\0" * 65536
        while True:
            try:
                fh.write(block)
                fh.flush()
                written += len(block)
            except OSError:
                break
    for i in range(1000):  # the last pages too
        try:
            with open(path / f"f{i}", "wb") as fh:
                fh.write(b"\0" * 512)
        except OSError:
            break
    return written


def test_full_disk_on_a_real_tmpfs(tmp_path, figures):
    with small_tmpfs(tmp_path / "mnt", "6m") as mnt:
        settings = load_settings(
            {"stowage": {"spill": {"threshold_tokens": 300}, "store": {"path": str(mnt / "store")}}}
        )
        engine = StowageEngineCore(
            settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG\n\n## Next Steps\n- n"
        )
        engine.update_model("m", 32_000)
        engine.on_session_start("s", hermes_home=str(tmp_path))
        store = engine.state.store.store
        handles = stored(store)
        filled = fill(mnt)
        tools = FetchTools(store, lambda: "s", FetchLimits())
        asked, failures = ask_everything(tools, handles)

        big = "\n".join(f"row {i} of a large output that will not fit" for i in range(3000))
        result = engine.spill_tool_result("terminal", {"command": "make"}, big).text
        messages = [{"role": "user", "content": "start"}]
        for i in range(6):
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i}\n" * 400},
                {"role": "assistant", "content": f"step {i} done"},
                {"role": "user", "content": f"next {i}"},
            ]
        out = engine.compress(messages, current_tokens=30_000, force=True)
        status = engine.get_status()["store"]
        figures.update(
            filled_bytes=filled,
            fetch_requests=asked,
            fetch_failures=len(failures),
            spill_failures=status["spill_failures"],
            archive_failures=status["archive_failures"],
        )
        assert out is not messages  # compaction still works, with plain stubs
        assert status["archive_failures"] >= 1
        assert not failures, failures
        assert result is not None and result.startswith(SPILL_FAILED_NOTE) and big in result
        assert status["spill_failures"] == 1 and status["last_store_error"]
