"""The size cap holds against a live session that keeps spilling.

One live session writes 37 MiB of outputs into a store capped at 1 MiB, a
turn every few minutes.  After each write the store may exceed the cap only
by the blobs of the current turn; everything evicted leaves a tombstone.
"""

from __future__ import annotations

import pytest

from stowage.blobstore import BlobStore, EvictedBlobError, RetentionPolicy
from support.clock import ManualClock

pytestmark = pytest.mark.reliability
MIB = 1 << 20


def test_a_live_session_cannot_fill_the_disk(tmp_path, figures):
    clock = ManualClock()
    policy = RetentionPolicy(ttl_seconds=None, max_total_bytes=MIB, hot_seconds=300)
    store = BlobStore(tmp_path / "store", policy, clock=clock)
    store.mark_session_live("busy")
    written, worst_excess, handles = 0, 0, []
    for turn in range(37):
        clock.advance(600)  # the previous turn's outputs are now cold
        store.mark_session_live("busy")
        turn_bytes = 0
        for part in range(4):
            data = (f"turn {turn} part {part} ".encode() * 20_000)[:256 * 1024]
            handles.append(store.put(data, session_id="busy", tool_name="terminal", kind="spill").handle)
            written += len(data)
            turn_bytes += len(data)
        total = store.stats()["total_bytes"]
        worst_excess = max(worst_excess, total - max(MIB, turn_bytes))
    tombstoned = 0
    for handle in handles:
        try:
            store.resolve(handle, "busy")
        except EvictedBlobError as exc:
            tombstoned += exc.tombstone.reason == "size-cap"
    figures.update(written_mib=written // MIB, cap_mib=1, final_mib=round(store.stats()["total_bytes"] / MIB, 2),
                   worst_excess_over_cap_or_turn=worst_excess, tombstones=tombstoned)
    assert worst_excess <= 0
    assert tombstoned == len(handles) - store.stats()["blob_count"]
