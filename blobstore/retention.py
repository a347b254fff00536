"""Retention: which blobs to evict, and the tombstones they leave behind.

Planning and applying are separate so ``gc(dry_run=True)`` reports exactly
what a real pass would do.  Both run inside one ``BEGIN IMMEDIATE``
transaction so concurrent writers never see a half-applied pass.  Blob files
are renamed into ``trash/`` inside the transaction and unlinked after the
commit: a concurrent put of the same bytes (which needs the same lock) can
never have its fresh file removed from under it, and a process killed before
the commit leaves the file in ``trash/`` where it is restored from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .index import Tx
from .records import Eviction, GcReport, Tombstone

REASON_TTL = "ttl"
REASON_CAP = "size-cap"
REASON_CORRUPT = "corrupt"
REASON_MISSING = "missing"
REASON_MANUAL = "manual"

DAY = 86400.0


@dataclass(frozen=True)
class RetentionPolicy:
    """Limits the store enforces on every write and on ``gc``.

    ``None`` disables the TTL or the size cap.  Blobs referenced by a live
    session (produced in it or granted to it) and blobs fetched within
    ``fetch_grace_seconds`` are spared.  A session still flagged live but not
    seen for ``session_idle_seconds`` stops protecting anything, so a crashed
    process that never ended its session cannot pin the store forever.

    The size cap holds against live sessions too: when sparing them would
    leave the store over the cap, their coldest blobs go next (least recently
    used first), except blobs used within ``hot_seconds`` (the current turn's
    work) and blobs fetched within the grace period.
    """

    ttl_seconds: float | None = 7 * DAY
    max_total_bytes: int | None = 1 << 30
    fetch_grace_seconds: float = 3600.0
    tombstone_ttl_seconds: float = 30 * DAY
    session_idle_seconds: float = 1 * DAY
    hot_seconds: float = 300.0

    def __post_init__(self) -> None:
        for name in ("ttl_seconds", "max_total_bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"RetentionPolicy.{name} must be positive or None, got {value!r}")
        for name in ("fetch_grace_seconds", "tombstone_ttl_seconds", "session_idle_seconds", "hot_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"RetentionPolicy.{name} must be >= 0")


def human_duration(seconds: float) -> str:
    for unit, size in (("days", DAY), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} seconds"


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def live_protected(tx: Tx, policy: RetentionPolicy, now: float) -> set[str]:
    """Shas produced in or granted to a session that is live and recently seen."""
    cutoff = now - policy.session_idle_seconds
    rows = tx.execute(
        "SELECT p.sha FROM provenance p JOIN sessions s ON s.id=p.session_id "
        "WHERE s.live=1 AND s.last_seen>=? UNION "
        "SELECT g.sha FROM grants g JOIN sessions s ON s.id=g.session_id "
        "WHERE s.live=1 AND s.last_seen>=?", (cutoff, cutoff))
    return {r[0] for r in rows}


def plan(tx: Tx, policy: RetentionPolicy, now: float, exclude: Iterable[str] = ()) -> GcReport:
    """Decide what a retention pass evicts, without changing anything."""
    report = GcReport(dry_run=True, now=now)
    keep = set(exclude)
    protected: set[str] | None = None  # computed on first need: most passes evict nothing
    grace_cutoff = now - policy.fetch_grace_seconds
    chosen: set[str] = set()
    total = report.total_bytes_before = tx.total_bytes()

    spared_live: set[str] = set()
    spared_fetch: set[str] = set()

    def consider(row, reason: str, detail: str, *, live_too: bool = False) -> bool:
        nonlocal protected
        sha = row["sha"]
        if sha in keep or sha in chosen:
            return False
        if protected is None:
            protected = live_protected(tx, policy, now)
        if sha in protected and (not live_too or row["last_access"] >= now - policy.hot_seconds):
            spared_live.add(sha)
            return False
        spared_live.discard(sha)
        if row["last_fetch"] is not None and row["last_fetch"] >= grace_cutoff:
            spared_fetch.add(sha)
            return False
        chosen.add(sha)
        prov = tx.provenance(sha)
        report.evicted.append(Eviction(sha, row["size"], reason, detail, row["last_access"],
                                       prov[0].tool_name if prov else "",
                                       prov[0].session_id if prov else None))
        return True

    if policy.ttl_seconds is not None:
        ttl = policy.ttl_seconds
        for row in tx.execute("SELECT sha,size,last_access,last_fetch FROM blobs "
                              "WHERE last_access<? ORDER BY last_access, sha", (now - ttl,)):
            detail = (f"last used {human_duration(now - row['last_access'])} ago; "
                      f"retention TTL is {human_duration(ttl)}")
            if consider(row, REASON_TTL, detail):
                total -= row["size"]
    cap = policy.max_total_bytes
    if cap is not None and total > cap:
        detail = (f"store held {human_bytes(report.total_bytes_before)}, "
                  f"cap is {human_bytes(cap)}")
        for row in tx.execute("SELECT sha,size,last_access,last_fetch FROM blobs "
                              "ORDER BY last_access, created_at, sha"):
            if total <= cap:
                break
            if consider(row, REASON_CAP, detail):
                total -= row["size"]
        if total > cap:  # live sessions give up their cold blobs; the current turn's stay
            live_detail = detail + "; a live session's least recently used blob"
            for row in tx.execute("SELECT sha,size,last_access,last_fetch FROM blobs "
                                  "ORDER BY last_access, created_at, sha"):
                if total <= cap:
                    break
                if consider(row, REASON_CAP, live_detail, live_too=True):
                    total -= row["size"]
        report.over_cap_bytes = max(0, total - cap)
    report.spared_live, report.spared_recent_fetch = len(spared_live), len(spared_fetch)
    report.freed_bytes = report.total_bytes_before - total
    report.total_bytes_after = total
    report.tombstones_expired = tx.execute(
        "SELECT count(*) FROM tombstones WHERE evicted_at<?",
        (now - policy.tombstone_ttl_seconds,)).fetchone()[0]
    return report


def make_tombstone(tx: Tx, sha: str, reason: str, detail: str, now: float) -> Tombstone:
    """Snapshot a blob's row and most recent provenance before it is deleted."""
    row = tx.get_blob(sha)
    prov = tx.provenance(sha)
    latest = prov[0] if prov else None
    return Tombstone(
        sha256=sha,
        size=row["size"] if row else 0,
        content_type=row["content_type"] if row else "",
        evicted_at=now,
        reason=reason,
        detail=detail,
        tool_name=latest.tool_name if latest else "",
        tool_args=latest.tool_args if latest else "",
        session_id=latest.session_id if latest else None,
        kind=latest.kind if latest else "",
        created_at=row["created_at"] if row else None,
        sessions=tuple(tx.readers(sha)),
        origins=tuple({p.session_id: p for p in reversed(prov)}.values())[::-1],
    )


def evict(tx: Tx, sha: str, reason: str, detail: str, now: float,
          remove_files: Callable[[Tx, str], None]) -> Tombstone:
    """Replace a blob by its tombstone (index rows and files)."""
    tomb = make_tombstone(tx, sha, reason, detail, now)
    tx.insert_tombstone(tomb)
    tx.delete_blob(sha)
    remove_files(tx, sha)
    return tomb


def apply(tx: Tx, report: GcReport, policy: RetentionPolicy,
          remove_files: Callable[[Tx, str], None]) -> GcReport:
    """Carry out a planned pass inside the caller's write transaction."""
    now = report.now
    for ev in report.evicted:
        evict(tx, ev.sha256, ev.reason, ev.detail, now, remove_files)
    report.tombstones_expired = tx.execute(
        "DELETE FROM tombstones WHERE evicted_at<?",
        (now - policy.tombstone_ttl_seconds,)).rowcount
    report.sessions_pruned = tx.execute(
        "DELETE FROM sessions WHERE last_seen<? AND NOT EXISTS(SELECT 1 FROM provenance p "
        "WHERE p.session_id=sessions.id) AND NOT EXISTS(SELECT 1 FROM grants g "
        "WHERE g.session_id=sessions.id)", (now - policy.tombstone_ttl_seconds,)).rowcount
    report.dry_run = False
    return report
