"""Plain records returned by the store.

They are frozen dataclasses so callers can cache and compare them, and each
has ``to_dict()`` because most of them end up in JSON (tool replies, the CLI).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any


class _Dictable:
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Provenance(_Dictable):
    """One way a blob was produced.  Identical productions are folded into ``count``."""

    session_id: str | None
    tool_name: str
    tool_args: str
    kind: str
    first_at: float
    last_at: float
    count: int


@dataclass(frozen=True)
class BlobInfo(_Dictable):
    """Index metadata for one blob.

    ``char_count`` is the number of Unicode characters when the blob is valid
    UTF-8 and ``None`` otherwise (``is_utf8`` says which); for non-UTF-8 blobs
    character reads count one character per byte.
    """

    sha256: str
    handle: str
    size: int
    line_count: int
    char_count: int | None
    is_utf8: bool
    content_type: str
    created_at: float
    last_access: float
    last_fetch: float | None
    fetch_count: int
    provenance: tuple[Provenance, ...] = ()


@dataclass(frozen=True)
class CatalogEntry(_Dictable):
    """One blob a session can read, as a whole-session scan needs it (no handle, no full provenance).

    ``kind`` and ``tool_name`` are the blob's most recent provenance's.
    """

    sha256: str
    created_at: float
    size: int
    is_utf8: bool
    content_type: str
    kind: str
    tool_name: str


@dataclass(frozen=True)
class PutResult(_Dictable):
    """What ``put`` stored.  ``handle`` is the shortest unambiguous prefix (>= 16 hex)."""

    sha256: str
    handle: str
    size: int
    line_count: int
    char_count: int | None
    is_utf8: bool
    content_type: str
    deduplicated: bool
    evicted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tombstone(_Dictable):
    """What is left of an evicted blob: enough to tell the agent how to get it back."""

    sha256: str
    size: int
    content_type: str
    evicted_at: float
    reason: str
    detail: str
    tool_name: str
    tool_args: str
    session_id: str | None
    kind: str
    created_at: float | None
    sessions: tuple[str, ...] = ()
    origins: tuple[Provenance, ...] = ()

    def seen_by(self, session_id: str) -> "Tombstone":
        """This tombstone told from ``session_id``'s side: its own production if it had one.

        Keeps one session's tool arguments out of another session's error messages.
        """
        for origin in self.origins:
            if origin.session_id == session_id:
                return replace(
                    self,
                    tool_name=origin.tool_name,
                    tool_args=origin.tool_args,
                    session_id=origin.session_id,
                    kind=origin.kind,
                )
        return self


@dataclass(frozen=True)
class PurgeReport(_Dictable):
    """What ``purge_session`` did: blobs evicted, and blobs kept because another session holds them too."""

    evicted: tuple[Tombstone, ...]
    kept_shared: tuple[str, ...]


@dataclass(frozen=True)
class Eviction(_Dictable):
    """One blob that a retention pass removed (or would remove, in a dry run)."""

    sha256: str
    size: int
    reason: str
    detail: str
    last_access: float
    tool_name: str
    session_id: str | None


@dataclass
class GcReport(_Dictable):
    """Outcome of a retention pass; with ``dry_run`` nothing was changed."""

    dry_run: bool
    now: float
    evicted: list[Eviction] = field(default_factory=list)
    freed_bytes: int = 0
    total_bytes_before: int = 0
    total_bytes_after: int = 0
    spared_live: int = 0
    evicted_live: int = 0  # blobs a live session held, evicted by the size cap (none of its current request)
    spared_recent_fetch: int = 0
    over_cap_bytes: int = 0
    tombstones_expired: int = 0
    sessions_pruned: int = 0
