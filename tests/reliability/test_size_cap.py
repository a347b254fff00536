"""The size cap holds against a live session that keeps spilling.

The attack: one session spilling 40 outputs of about 1 MB into a store
capped at 1 MiB left 37.4 MiB on disk, because blobs used in the last five
minutes were never evicted.  Now the cap evicts the oldest blobs, a live
session's included, and spares only what the session's current request
shows verbatim or points to; the session's status says what was tombstoned.

Second attack: with no request between spills (hosts before 0.17 have no
request hook), every spill stayed pinned until a compaction, so the store
grew with the session.  Now a model response starts a new tool batch and the
cap spares only the last request's blobs and the two newest batches' outputs.

Third: once every stub named the original bytes, the lean view's stubs of
older previews pinned every original (42.5 MiB on disk).  Now an original
only a stub names is not spared (its preview is), and after the cap evicts
it the stub names the preview and says so: no request points to a tombstone.
"""

from __future__ import annotations

import json
import logging

import pytest

from stowage.blobstore import BlobStore, EvictedBlobError, RetentionPolicy
from stowage.command.live import session_rows
from stowage.context_engine.chat.stubs import ORIGINAL_EVICTED_NOTE
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.pins import HANDLE_REF
from stowage_dev.clock import ManualClock

pytestmark = pytest.mark.reliability
MIB = 1 << 20


def disk_bytes(root) -> int:
    return sum(p.stat().st_size for p in (root / "blobs").rglob("*") if p.is_file() and len(p.name) == 64)


def pointed_to(store: BlobStore, request: list[dict]) -> int:
    """Bytes of the blobs a request names; each must be readable (never a tombstone)."""
    named = {h for m in request for h in HANDLE_REF.findall(m.get("content") or "")}
    return sum(store.stat(store.resolve(h)).size for h in named)


def pinned_bytes(store: BlobStore) -> int:
    """What the store spares for the session: its last request's references and what it spilled since."""
    with store.index.read() as tx:
        return sum(tx.get_blob(sha)["size"] for sha in tx.pins_of("busy"))


def output(i: int) -> str:
    line = f"output {i:02d}: " + "x" * 100 + "\n"
    return "".join(f"{j:06d} {line}" for j in range(MIB // len(line)))  # about 1 MB, distinct per output


def test_a_live_session_spilling_in_one_turn_cannot_fill_the_disk(tmp_path, figures, caplog):
    settings = load_settings({"stowage": {"store": {"max_store_mb": 1}}})
    engine = StowageEngineCore(settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 200_000)
    engine.on_session_start("busy", hermes_home=str(tmp_path))
    messages: list[dict] = [{"role": "system", "content": "you are a test"}, {"role": "user", "content": "go"}]
    worst, written = 0, 0
    request: list[dict] = []
    with caplog.at_level(logging.WARNING, logger="stowage.blobstore"):
        for batch in range(10):  # ten tool batches of four outputs, all inside one turn (no time passes)
            calls = [
                {
                    "id": f"c{batch}-{k}",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": f"cat big{batch}{k}"})},
                }
                for k in range(4)
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for k, call in enumerate(calls):
                result = output(batch * 4 + k)
                written += len(result)
                preview = engine.spill_tool_result("terminal", call["function"]["arguments"], result).text
                assert preview is not None and preview != result
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": preview})
                worst = max(worst, disk_bytes(engine.state.store.root) - pinned_bytes(engine.state.store.store))
            request = engine.shape_request([], messages).messages  # the host's next API call
            pinned = pointed_to(engine.state.store.store, request)  # raises if the request points to a tombstone
    store = engine.state.store.store
    final = disk_bytes(engine.state.store.root)
    status = engine.get_status()["store"]["cap_evicted"]
    rows = dict(session_rows(engine.status()))
    figures.update(
        written_mib=written // MIB,
        cap_mib=1,
        worst_disk_beyond_request_mib=round(worst / MIB, 2),
        final_disk_mib=round(final / MIB, 2),
        pinned_mib=round(pinned / MIB, 2),
        tombstoned=status["blobs"],
        tombstoned_mib=round(status["bytes"] / MIB, 2),
    )
    assert worst <= MIB  # beyond what the current request points to (and new spills), the store holds its cap
    assert final <= MIB + pinned
    assert status["blobs"] >= 30 and status["bytes"] >= 30 * MIB * 0.9
    assert "tombstoned" in rows["size cap"]
    assert any("size cap" in r.getMessage() and "live sessions" in r.getMessage() for r in caplog.records)
    first = store.resolve  # an early output is a tombstone that says why
    with pytest.raises(EvictedBlobError) as info:
        first(HANDLE_REF.findall(messages[3]["content"])[0], "busy")
    assert info.value.tombstone.reason == "size-cap"
    # the request's stubs of those outputs name their previews instead, and say so; nothing changed, nothing moves
    assert sum(ORIGINAL_EVICTED_NOTE in (m.get("content") or "") for m in request) >= 30
    assert engine.shape_request([], messages).messages == request


def test_the_store_alone_holds_its_cap_against_a_live_session(tmp_path, figures):
    clock = ManualClock()
    store = BlobStore(tmp_path / "store", RetentionPolicy(ttl_seconds=None, max_total_bytes=MIB), clock=clock)
    store.mark_session_live("busy")
    written, worst_excess, handles = 0, 0, []
    for part in range(40):  # no time passes: every blob is the current turn's
        data = (f"part {part} ".encode() * 120_000)[: MIB - 1000]
        put = store.put(data, session_id="busy", tool_name="terminal", kind="spill")
        handles.append(put.handle)
        store.pin_request("busy", [put.handle])  # the next request shows only the newest
        written += len(data)
        worst_excess = max(worst_excess, store.stats()["total_bytes"] - MIB)
    tombstoned = 0
    for handle in handles:
        try:
            store.resolve(handle, "busy")
        except EvictedBlobError as exc:
            tombstoned += exc.tombstone.reason == "size-cap"
    figures.update(
        written_mib=written // MIB,
        cap_mib=1,
        final_mib=round(store.stats()["total_bytes"] / MIB, 2),
        worst_excess_over_cap=worst_excess,
        tombstones=tombstoned,
    )
    assert worst_excess <= MIB - 1000  # the previous request's blob is pinned while the next one is written
    # a request that stops pointing at a blob hands it back to the cap at once: only the newest stays
    assert tombstoned == len(handles) - store.stats()["blob_count"] == 39


def test_without_request_hooks_a_compaction_releases_what_the_history_no_longer_points_to(tmp_path, figures):
    """Hosts before 0.17 have no request middleware: the history is the request, pinned as it grows.

    Until a compaction every spilled output is pointed to by its preview in the history; after it, the
    store spares only what the compacted history points to, and the next write brings the store back down.
    """
    settings = load_settings({"stowage": {"store": {"max_store_mb": 1}, "view": {"enabled": False}}})
    engine = StowageEngineCore(
        settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nRead the outputs."
    )
    engine.update_model("m", 200_000)
    engine.on_session_start("old-host", hermes_home=str(tmp_path))
    messages: list[dict] = [{"role": "system", "content": "you are a test"}]
    for i in range(6):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": f'{{"n": {i}}}'}}
        preview = engine.spill_tool_result("terminal", call["function"]["arguments"], output(i)).text
        messages += [
            {"role": "user", "content": f"read output {i}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": preview},
            {"role": "assistant", "content": f"output {i} read"},
        ]
    store = engine.state.store.store
    before = store.stats()["total_bytes"]
    for handle in {h for m in messages for h in HANDLE_REF.findall(m.get("content") or "")}:
        store.resolve(handle, "old-host")  # the history points to every output: none may be gone
    compacted = engine.compress(messages, current_tokens=150_000, force=True)
    assert compacted is not messages
    engine.spill_tool_result("terminal", '{"n": 99}', output(99))  # the next write enforces the cap
    pinned = pointed_to(store, compacted)
    after = store.stats()["total_bytes"]
    figures.update(
        outputs_mib=6,
        before_compaction_mib=round(before / MIB, 2),
        after_mib=round(after / MIB, 2),
        compacted_history_points_to_mib=round(pinned / MIB, 2),
    )
    assert before >= 6 * MIB * 0.9
    assert after <= MIB + pinned + MIB  # the cap, what the compacted history points to, the new output
    assert after < before  # what only the summarized window pointed to was released


def test_without_request_hooks_the_cap_holds_within_the_two_newest_tool_batches(tmp_path, figures):
    """Hosts before 0.17: no request ever pins; model responses (``update_from_response``) come between batches.

    The stated bound (docs/store.md): the cap, plus what the last request points to (nothing here), plus what
    the session stored in its current and previous tool batch, plus the blob being written.  What the model is
    answering (the previous batch) and what it will see next (the current one) are never evicted.
    """
    settings = load_settings({"stowage": {"store": {"max_store_mb": 1}, "view": {"enabled": False}}})
    engine = StowageEngineCore(settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 200_000)
    engine.on_session_start("old-host", hermes_home=str(tmp_path))
    store = engine.state.store.store
    batches: list[list[str]] = []
    worst_excess, worst_total = 0, 0
    for batch in range(10):  # ten model responses, each asking for four ~1 MB outputs
        engine.update_from_response({"prompt_tokens": 20_000 + batch, "completion_tokens": 10, "total_tokens": 0})
        batches.append([])
        for k in range(4):
            preview = engine.spill_tool_result("terminal", f'{{"n": {batch * 4 + k}}}', output(batch * 4 + k)).text
            batches[-1].append(HANDLE_REF.findall(preview)[0])
            recent = [h for b in batches[-2:] for h in b]
            recent_bytes = sum(store.stat(store.resolve(h, "old-host")).size for h in recent)  # none evicted
            total = store.stats()["total_bytes"]
            worst_total = max(worst_total, total)
            worst_excess = max(worst_excess, total - MIB - recent_bytes)
    tombstoned = 0
    for handle in (h for b in batches[:-2] for h in b):
        try:
            store.resolve(handle, "old-host")
        except EvictedBlobError as exc:
            tombstoned += exc.tombstone.reason == "size-cap"
    figures.update(
        written_mib=40,
        cap_mib=1,
        worst_total_mib=round(worst_total / MIB, 2),
        worst_beyond_cap_and_two_batches=worst_excess,
        tombstoned=tombstoned,
    )
    assert worst_excess <= 0  # within the cap plus the two newest batches' outputs
    assert worst_total <= MIB + 8 * 1.01 * MIB  # 37.4 MiB before: now at most the cap and eight outputs
    assert tombstoned == 32  # every output of the older batches went to the cap
