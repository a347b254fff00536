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
from typing import Any, Callable, Iterable

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
    ``fetch_grace_seconds`` are spared by the TTL.  A session still flagged
    live but not seen for ``session_idle_seconds`` stops protecting anything,
    so a crashed process that never ended its session cannot pin the store
    forever.

    The size cap holds against live sessions too: when sparing them would
    leave the store over the cap, the oldest blobs go next whoever holds
    them, except what a live session's current request shows verbatim or
    points to (its pins, ``BlobStore.pin_request``) and the blob being
    written.  A runaway session cannot fill the disk.
    """

    ttl_seconds: float | None = 7 * DAY
    max_total_bytes: int | None = 1 << 30
    fetch_grace_seconds: float = 3600.0
    tombstone_ttl_seconds: float = 30 * DAY
    session_idle_seconds: float = 1 * DAY

    def __post_init__(self) -> None:
        for name in ("ttl_seconds", "max_total_bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"RetentionPolicy.{name} must be positive or None, got {value!r}")
        for name in ("fetch_grace_seconds", "tombstone_ttl_seconds", "session_idle_seconds"):
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
    return tx.live_held(now - policy.session_idle_seconds)


class _Planner:
    """One retention pass's choices, oldest first; nothing is changed."""

    def __init__(self, tx: Tx, policy: RetentionPolicy, now: float, exclude: Iterable[str]) -> None:
        self.tx, self.policy, self.now = tx, policy, now
        self.keep = set(exclude)
        self.report = GcReport(dry_run=True, now=now)
        self.total = self.report.total_bytes_before = tx.total_bytes()
        self.chosen: set[str] = set()
        self.spared_live: set[str] = set()
        self.spared_fetch: set[str] = set()
        self._live: set[str] | None = None  # computed on first need: most passes evict nothing
        self._pinned: set[str] | None = None

    @property
    def live(self) -> set[str]:
        if self._live is None:
            self._live = live_protected(self.tx, self.policy, self.now)
        return self._live

    @property
    def pinned(self) -> set[str]:
        if self._pinned is None:
            self._pinned = self.tx.pinned(self.now - self.policy.session_idle_seconds)
        return self._pinned

    def consider(self, row: Any, reason: str, detail: str, *, against_live: bool = False) -> None:
        """Evict ``row`` unless it is spared (live session, recent fetch; or, ``against_live``, a pin)."""
        sha = row["sha"]
        if sha in self.keep or sha in self.chosen:
            return
        if against_live:
            if sha in self.pinned:
                return
            self.spared_live.discard(sha)
            self.spared_fetch.discard(sha)
        else:
            if sha in self.live:
                self.spared_live.add(sha)
                return
            if row["last_fetch"] is not None and row["last_fetch"] >= self.now - self.policy.fetch_grace_seconds:
                self.spared_fetch.add(sha)
                return
        self.chosen.add(sha)
        self.total -= row["size"]
        if against_live and sha in self.live:
            self.report.evicted_live += 1
        prov = self.tx.provenance(sha)
        self.report.evicted.append(
            Eviction(
                sha,
                row["size"],
                reason,
                detail,
                row["last_access"],
                prov[0].tool_name if prov else "",
                prov[0].session_id if prov else None,
            )
        )

    def run(self) -> GcReport:
        policy, now, report = self.policy, self.now, self.report
        if policy.ttl_seconds is not None:
            ttl = policy.ttl_seconds
            for row in self.tx.lru_blobs(used_before=now - ttl):
                self.consider(
                    row,
                    REASON_TTL,
                    f"last used {human_duration(now - row['last_access'])} ago; retention TTL is {human_duration(ttl)}",
                )
        cap = policy.max_total_bytes
        if cap is not None and self.total > cap:
            detail = f"store held {human_bytes(report.total_bytes_before)}, cap is {human_bytes(cap)}"
            rows = self.tx.lru_blobs()
            for row in rows:
                if self.total <= cap:
                    break
                self.consider(row, REASON_CAP, detail)
            # Still over: the oldest go whoever holds them, except what a current request shows or points to.
            live_detail = detail + "; the oldest blob not in any live session's current request"
            for row in rows:
                if self.total <= cap:
                    break
                self.consider(row, REASON_CAP, live_detail, against_live=True)
            report.over_cap_bytes = max(0, self.total - cap)
        report.spared_live, report.spared_recent_fetch = len(self.spared_live), len(self.spared_fetch)
        report.freed_bytes = report.total_bytes_before - self.total
        report.total_bytes_after = self.total
        report.tombstones_expired = self.tx.count_tombstones_before(now - policy.tombstone_ttl_seconds)
        return report


def plan(tx: Tx, policy: RetentionPolicy, now: float, exclude: Iterable[str] = ()) -> GcReport:
    """Decide what a retention pass evicts, without changing anything."""
    return _Planner(tx, policy, now, exclude).run()


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


def evict(tx: Tx, sha: str, reason: str, detail: str, now: float, remove_files: Callable[[Tx, str], None]) -> Tombstone:
    """Replace a blob by its tombstone (index rows and files)."""
    tomb = make_tombstone(tx, sha, reason, detail, now)
    tx.insert_tombstone(tomb)
    tx.delete_blob(sha)
    remove_files(tx, sha)
    return tomb


def apply(tx: Tx, report: GcReport, policy: RetentionPolicy, remove_files: Callable[[Tx, str], None]) -> GcReport:
    """Carry out a planned pass inside the caller's write transaction."""
    now = report.now
    for ev in report.evicted:
        evict(tx, ev.sha256, ev.reason, ev.detail, now, remove_files)
    report.tombstones_expired = tx.delete_tombstones_before(now - policy.tombstone_ttl_seconds)
    report.sessions_pruned = tx.prune_sessions(now - policy.tombstone_ttl_seconds)
    report.dry_run = False
    return report
