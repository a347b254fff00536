"""A full disk tears an append; the next record, written once space is back, stays whole.

Stowage appends JSON lines to three kinds of file: each blob's provenance
records (``blobs/ab/<sha>.prov``), ``grants.jsonl`` (both read back by an
index rebuild) and each session's summary log.  Each test puts the file's
end a few bytes short of a tmpfs page, fills the tmpfs (root only; skipped
with a message otherwise, CI runs as root), lets Stowage append (the write
stops at the page edge: a real torn write), frees space, lets Stowage append
again and reads the file back as Stowage does: every whole record must be
there.  Before the fix the second record was glued onto the torn half and lost.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from stowage.blobstore import BlobStore
from stowage.blobstore.fsutil import append_line
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.summary_log import read_summaries, summaries_path

from .tmpfs import small_tmpfs

pytestmark = pytest.mark.reliability
PAGE = 4096
SHORT_OF_EDGE = 12  # the torn write keeps this many bytes of the record


def fill(mount: Path) -> None:
    """Fill the tmpfs to its last page."""
    with open(mount / "filler", "wb", buffering=0) as fh:
        block = b"\0" * 65536
        while True:
            try:
                fh.write(block)
            except OSError:
                break
    for i in range(2000):  # the pages a partial block left
        try:
            with open(mount / f"page{i}", "wb", buffering=0) as fh:
                fh.write(b"\0" * 512)
        except OSError:
            break


def free_one_page(mount: Path) -> None:
    filler = mount / "filler"
    os.truncate(filler, filler.stat().st_size - PAGE)


def pad_to_page_edge(path: Path, record: dict) -> None:
    """Append ``record`` with a padding field so the file ends ``SHORT_OF_EDGE`` bytes before a page edge."""
    size = path.stat().st_size if path.exists() else 0
    bare = len(json.dumps({**record, "pad": ""}).encode()) + 1
    need = (PAGE - SHORT_OF_EDGE - (size + bare)) % PAGE
    with open(path, "ab") as fh:
        fh.write(json.dumps({**record, "pad": "x" * need}).encode() + b"\n")
    assert path.stat().st_size % PAGE == PAGE - SHORT_OF_EDGE


def whole_lines(path: Path) -> list[dict]:
    """Every line of ``path`` that parses as a JSON object."""
    out = []
    for line in path.read_bytes().split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def test_provenance_records_survive_a_torn_append(tmp_path, figures):
    with small_tmpfs(tmp_path / "mnt", "4m") as mnt:
        store = BlobStore(mnt / "store")
        text = "a small output\n" * 3
        sha = store.put(text, session_id="first", tool_name="t", kind="spill").sha256
        prov = store.record_path(sha)
        pad_to_page_edge(prov, {"session_id": "first", "tool_name": "t", "kind": "spill"})
        size_before = prov.stat().st_size
        fill(mnt)
        free_one_page(mnt)  # the put's staging file takes it, the record's append tears
        with contextlib.suppress(Exception):
            store.put(text, session_id="torn", tool_name="t", kind="spill")
        torn_size = prov.stat().st_size
        (mnt / "filler").unlink()
        store.put(text, session_id="after", tool_name="t", kind="spill")
        store.rebuild_index()
        sessions = {p.session_id for p in store.stat(sha).provenance}
        figures.update(torn_bytes_left=torn_size - size_before, sessions=sorted(map(str, sessions)))
        assert "after" in sessions and "first" in sessions, (sessions, prov.read_bytes()[-300:])
        assert store.resolve(sha[:16], "after") == sha


def test_grants_survive_a_torn_append(tmp_path, figures):
    with small_tmpfs(tmp_path / "mnt", "4m") as mnt:
        store = BlobStore(mnt / "store")
        sha = store.put("granted output\n" * 3, session_id="owner", tool_name="t", kind="spill").sha256
        store.grant(sha[:16], "early")
        pad_to_page_edge(store.grants_log, {"target": "nobody"})
        fill(mnt)
        with contextlib.suppress(Exception):
            store.grant(sha[:16], "torn")
        (mnt / "filler").unlink()
        store.grant(sha[:16], "late")
        store.rebuild_index()
        readable = [s for s in ("early", "late") if store.resolve(sha[:16], s) == sha]
        records = whole_lines(store.grants_log)
        figures.update(readable_after_rebuild=readable, whole_records=len(records))
        assert readable == ["early", "late"]
        assert any(r.get("target") == "late" for r in records), store.grants_log.read_bytes()[-300:]


def compaction_messages(turn: int) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": f"start {turn}"}]
    for i in range(6):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{turn}-{i}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{turn}-{i}", "content": f"output {turn}/{i}\n" * 400},
            {"role": "assistant", "content": f"step {i} done"},
            {"role": "user", "content": f"next {i}"},
        ]
    return messages


def test_summary_log_survives_a_torn_append(tmp_path, figures):
    with small_tmpfs(tmp_path / "mnt", "4m") as mnt:
        settings = load_settings({"stowage": {"store": {"path": str(mnt / "store")}}})
        count = iter(range(1, 100))
        engine = StowageEngineCore(
            settings,
            summary_model=lambda prompt, runtime, timeout=None: (
                f"## Goal\nCompaction {next(count)}\n\n## Next Steps\n- n"
            ),
        )
        engine.update_model("m", 32_000)
        engine.on_session_start("s", hermes_home=str(tmp_path))
        store_root = engine.state.store.store.root
        engine.compress(compaction_messages(1), current_tokens=30_000, force=True)
        log = summaries_path(store_root, "s")
        pad_to_page_edge(log, {"session_id": "another session"})
        fill(mnt)
        engine.compress(compaction_messages(2), current_tokens=30_000, force=True)
        (mnt / "filler").unlink()
        engine.compress(compaction_messages(3), current_tokens=30_000, force=True)
        records, bad = read_summaries(store_root, "s")
        goals = [r["body"].split("Compaction ")[1].split("\n")[0] for r in records]
        figures.update(readable_compactions=goals, unreadable_lines=bad)
        assert goals[0] == "1" and goals[-1] == "3", (goals, log.read_bytes()[-400:])


def test_a_tail_torn_by_a_killed_writer_does_not_swallow_the_next_record(tmp_path):
    """A tear nobody cut back (the writer was killed mid-line): the next append starts a line of its own."""
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2, "half of a rec')
    append_line(path, b'{"n": 3}')
    append_line(path, b'{"n": 4}')
    assert [r["n"] for r in whole_lines(path)] == [1, 3, 4]
    assert path.read_bytes().endswith(b'\n{"n": 3}\n{"n": 4}\n')
