"""Retention: TTL, size cap, LRU order, spared blobs, tombstones, gc dry runs."""

from __future__ import annotations

import json

import pytest

from stowage.blobstore import BlobStore, EvictedBlobError, RetentionPolicy, UnknownHandleError
from stowage_dev.clock import ManualClock

HOUR, DAY = 3600.0, 86400.0


def make(tmp_path, **policy):
    clock = ManualClock()
    defaults = dict(
        ttl_seconds=None,
        max_total_bytes=None,
        fetch_grace_seconds=HOUR,
        tombstone_ttl_seconds=30 * DAY,
        session_idle_seconds=DAY,
    )
    defaults.update(policy)
    return BlobStore(tmp_path / "store", RetentionPolicy(**defaults), clock=clock), clock


def blob(i: int, size: int = 100) -> bytes:
    return (f"{i:04d}" * size)[:size].encode()


def alive(store, sha) -> bool:
    try:
        store.resolve(sha)
        return True
    except EvictedBlobError:
        return False


def test_defaults():
    p = RetentionPolicy()
    assert (p.ttl_seconds, p.max_total_bytes, p.fetch_grace_seconds, p.tombstone_ttl_seconds) == (
        7 * DAY,
        1 << 30,
        HOUR,
        30 * DAY,
    )


def test_ttl_evicts_on_write_by_last_access(tmp_path):
    store, clock = make(tmp_path, ttl_seconds=DAY)
    old = store.put(blob(1), session_id="s", tool_name="terminal", tool_args="ls -la")
    store.mark_session_ended("s")
    clock.advance(HOUR * 2)
    used = store.put(blob(2))
    clock.advance(DAY - 3 * HOUR)  # old: 23h idle, used: 21h
    assert alive(store, old.sha256) and alive(store, used.sha256)
    clock.advance(2 * HOUR)  # old: 25h idle -> the next write evicts it
    new = store.put(blob(3))
    assert new.evicted == (old.sha256,)
    assert not alive(store, old.sha256) and alive(store, used.sha256)
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(old.handle)
    msg = str(info.value)
    assert "terminal" in msg and "ls -la" in msg and "retention period" in msg
    assert "last used 1.0 days ago" in msg and "Re-run 'terminal'" in msg


def test_size_cap_evicts_least_recently_used_first(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=350)
    shas = []
    for i in range(3):
        shas.append(store.put(blob(i), session_id=f"s{i}").sha256)
        store.mark_session_ended(f"s{i}")
        clock.advance(10)
    clock.advance(2 * HOUR)
    store.record_fetch(shas[0])  # blob 0 becomes the most recently used
    clock.advance(2 * HOUR)  # ...but outside the fetch grace window
    res = store.put(blob(3))
    assert res.evicted == (shas[1],)
    res = store.put(blob(4))
    assert res.evicted == (shas[2],)
    res = store.put(blob(5))
    assert res.evicted == (shas[0],)
    assert store.stats()["total_bytes"] <= 350
    tomb = store.tombstone(shas[1])
    assert tomb.reason == "size-cap" and "cap is 350 bytes" in tomb.detail


def test_blob_just_written_is_never_evicted(tmp_path):
    store, _ = make(tmp_path, max_total_bytes=500)
    small = store.put(blob(1))
    huge = store.put(blob(2, 2000))
    assert huge.evicted == (small.sha256,)
    assert alive(store, huge.sha256)
    assert store.read_bytes(huge.sha256) == blob(2, 2000)


def test_live_sessions_and_grants_are_spared(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=250, ttl_seconds=DAY)
    store.mark_session_live("live")
    store.mark_session_live("reader")
    produced = store.put(blob(1), session_id="live")
    granted = store.put(blob(2), session_id="gone")
    store.mark_session_ended("gone")
    store.grant(granted.handle, "reader")
    # the cap is exceeded without the loose blob: only what the current requests point to is spared
    store.pin_request("live", [produced.handle])
    store.pin_request("reader", [granted.sha256])
    loose = store.put(blob(3), session_id="gone")
    clock.advance(2 * DAY)
    store.mark_session_live("live")  # still active: refreshes last-seen
    store.mark_session_live("reader")
    res = store.put(blob(4))
    assert res.evicted == (loose.sha256,)
    assert alive(store, produced.sha256) and alive(store, granted.sha256)
    report = store.gc(dry_run=True)  # a later pass may evict blob 4 (only its own put spares it)
    assert report.spared_live == 2 and [e.sha256 for e in report.evicted] == [res.sha256]
    store.mark_session_ended("live")
    report = store.gc()
    assert [e.sha256 for e in report.evicted] == [produced.sha256]  # TTL; cap now satisfied
    assert alive(store, granted.sha256)


def test_size_cap_holds_against_a_live_session_sparing_only_its_current_request(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=1000)
    store.mark_session_live("busy")
    old = [store.put(blob(i), session_id="busy") for i in range(8)]
    shown = old[2]
    assert store.pin_request("busy", [shown.handle, "f" * 16]) == 1  # an unknown handle pins nothing
    clock.advance(HOUR)
    store.mark_session_live("busy")
    new = [store.put(blob(100 + i), session_id="busy") for i in range(6)]
    assert store.stats()["total_bytes"] <= 1000
    assert alive(store, shown.sha256) and alive(store, new[-1].sha256)
    evicted = [r for r in old if not alive(store, r.sha256)]
    assert len(evicted) == 4
    tomb = store.tombstone(evicted[0].sha256)
    assert tomb.reason == "size-cap" and "current request" in tomb.detail
    # a burst inside one turn cannot exceed the cap either: the pinned blob and the one being written stay
    burst = [store.put(blob(200 + i), session_id="busy") for i in range(12)]
    assert store.stats()["total_bytes"] <= 1000
    assert alive(store, shown.sha256) and alive(store, burst[-1].sha256)
    assert store.tombstoned_for("busy") == (
        len(old) + len(new) + len(burst) - store.stats()["blob_count"],
        100 * (len(old) + len(new) + len(burst) - store.stats()["blob_count"]),
    )
    # an ended session pins nothing any more
    store.mark_session_ended("busy")
    store.put(blob(999, 950))
    assert not alive(store, shown.sha256)


def test_idle_live_session_stops_protecting(tmp_path):
    store, clock = make(tmp_path, ttl_seconds=DAY, session_idle_seconds=2 * DAY)
    store.mark_session_live("crashed")  # never ended
    res = store.put(blob(1), session_id="crashed")
    clock.advance(1.5 * DAY)
    assert store.gc().evicted == []
    clock.advance(DAY)
    assert [e.sha256 for e in store.gc().evicted] == [res.sha256]


def test_recently_fetched_blobs_go_last_under_the_cap(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=250)
    a = store.put(blob(1))
    clock.advance(1)
    b = store.put(blob(2))
    clock.advance(10)
    store.record_fetch(a.sha256)  # fetched within the grace window: the older blob stays first
    clock.advance(HOUR - 20)
    res = store.put(blob(3))
    assert res.evicted == (b.sha256,)
    report = store.gc(dry_run=True)
    assert report.evicted == [] and report.total_bytes_after == 200
    # the cap is a hard limit: past what unfetched blobs free, a fetched one goes too (oldest first)
    big = store.put(blob(4, 200))
    assert big.evicted == (res.sha256, a.sha256)  # the unfetched one first
    assert store.stats()["total_bytes"] == 200


def test_pinned_blobs_can_leave_the_store_over_its_cap(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=150)
    store.mark_session_live("s")
    one = store.put(blob(1), session_id="s")
    store.pin_request("s", [one.sha256])
    two = store.put(blob(2), session_id="s")
    store.pin_request("s", [one.sha256, two.handle])
    report = store.gc(dry_run=True)
    assert report.evicted == [] and report.over_cap_bytes == 50 and report.spared_live == 2
    store.pin_request("s", [two.handle])  # the next request no longer shows the first: held to the cap at once
    with pytest.raises(EvictedBlobError) as info:
        store.resolve(one.handle, "s")
    assert info.value.tombstone.reason == "size-cap"
    assert store.gc().evicted == [] and store.stats()["blob_count"] == 1


def test_gc_dry_run_changes_nothing(tmp_path):
    store, clock = make(tmp_path, ttl_seconds=DAY, max_total_bytes=10_000)
    a = store.put(blob(1), tool_name="web_search", session_id="s")
    store.mark_session_ended("s")
    clock.advance(2 * DAY)
    b = store.put(blob(2), tool_name="terminal")  # evicts a on write already
    assert b.evicted == (a.sha256,)
    c = store.put(blob(3))
    clock.advance(2 * DAY)
    before = store.stats()
    report = store.gc(dry_run=True)
    assert report.dry_run and {e.sha256 for e in report.evicted} == {b.sha256, c.sha256}
    assert {e.reason for e in report.evicted} == {"ttl"}
    assert {e.tool_name for e in report.evicted} == {"terminal", ""}
    assert report.freed_bytes == 200 and report.total_bytes_after == 0
    assert store.stats() == before
    json.dumps(report.to_dict())
    done = store.gc()
    assert not done.dry_run and done.freed_bytes == 200
    assert store.stats()["blob_count"] == 0 and store.stats()["tombstones"] == 3


def test_tombstones_expire(tmp_path):
    store, clock = make(tmp_path, tombstone_ttl_seconds=DAY)
    res = store.put(blob(1))
    store.evict(res.handle)
    clock.advance(DAY - 1)
    assert store.gc().tombstones_expired == 0
    with pytest.raises(EvictedBlobError):
        store.resolve(res.handle)
    clock.advance(2)
    assert store.gc(dry_run=True).tombstones_expired == 1
    assert store.gc().tombstones_expired == 1
    with pytest.raises(UnknownHandleError):
        store.resolve(res.handle)


def test_tombstones_expire_on_write_too(tmp_path):
    store, clock = make(tmp_path, tombstone_ttl_seconds=DAY)
    res = store.put(blob(1))
    store.evict(res.handle)
    clock.advance(2 * DAY)
    store.put(blob(2))
    assert store.tombstone(res.sha256) is None


def test_eviction_removes_files(tmp_path):
    store, clock = make(tmp_path, max_total_bytes=150)
    a = store.put(blob(1))
    store.put(blob(2))
    assert not store.blob_path(a.sha256).exists()
    assert not store.sidecar_path(a.sha256).exists()
    assert list(store.trash_dir.iterdir()) == []
    assert store.doctor().clean


def test_ended_sessions_without_blobs_are_pruned(tmp_path):
    store, clock = make(tmp_path, tombstone_ttl_seconds=DAY)
    store.mark_session_live("s")
    store.mark_session_ended("s")
    res = store.put(blob(1), session_id="kept")
    clock.advance(2 * DAY)
    assert store.gc().sessions_pruned == 1
    assert store.stats()["sessions"] == 1
    assert alive(store, res.sha256)


@pytest.mark.parametrize(
    "bad", [dict(ttl_seconds=0), dict(max_total_bytes=-1), dict(fetch_grace_seconds=-5), dict(tombstone_ttl_seconds=-1)]
)
def test_policy_rejects_nonsense(bad):
    with pytest.raises(ValueError):
        RetentionPolicy(**bad)


def test_policy_can_disable_ttl_and_cap(tmp_path):
    store, clock = make(tmp_path, ttl_seconds=None, max_total_bytes=None)
    res = store.put(blob(1, 10_000))
    clock.advance(365 * DAY)
    assert store.gc().evicted == [] and alive(store, res.sha256)
