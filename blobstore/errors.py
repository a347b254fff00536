"""Exceptions raised by the blob store.

Every message is written for the reader at the other end of a tool call (an
agent or an operator): it says what was wrong, and what to do instead.  Each
class carries a short machine-readable ``code`` so callers can build JSON
replies without parsing messages.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .records import Tombstone

GOOD_HANDLE_HINT = (
    "a blob handle is 16 to 64 hexadecimal characters (0-9, a-f), "
    "for example 9f86d081884c7d65, exactly as printed where the output was stored"
)


def describe_input(raw: object, limit: int = 40) -> str:
    """A safe, short rendering of untrusted input for an error message."""
    text = repr(raw)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def format_time(ts: float | None) -> str:
    """UTC timestamp rendering used in messages (no locale surprises)."""
    if ts is None:
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


class StoreError(Exception):
    """Base class of everything the blob store raises on purpose."""

    code = "store_error"


class StoreIndexError(StoreError):
    """The SQLite index could not be opened or queried (locked too long, corrupt, ...)."""

    code = "index_unavailable"

    def __init__(self, path: object, cause: BaseException) -> None:
        self.cause = cause
        super().__init__(f"the blob index {path} is unavailable: {cause}")


class StoreWriteError(StoreError):
    """The store could not persist a blob (disk full, read-only, permissions).

    Nothing was stored: no temp file is left behind and the index is untouched,
    so the caller can pass the output through without spilling it.
    """

    code = "store_write_failed"


class CorruptBlobError(StoreError):
    """Bytes on disk no longer match the content hash they are filed under."""

    code = "corrupt_blob"

    def __init__(self, sha256: str, what: str) -> None:
        self.sha256 = sha256
        self.what = what
        super().__init__(
            f"blob {sha256[:16]} is corrupt: {what}. Its stored bytes can no longer be "
            "trusted; re-run the tool that produced it (an operator can run the store "
            "doctor with repair to quarantine it)"
        )


class HandleError(StoreError):
    """Base class for every way a handle can fail to name a readable blob."""

    code = "bad_handle"

    def __init__(self, handle: str, message: str) -> None:
        self.handle = handle
        super().__init__(message)


class MalformedHandleError(HandleError):
    """Not a hex string of an acceptable length.  ``reason`` says which rule broke."""

    code = "malformed_handle"

    def __init__(self, raw: object, reason: str, detail: str) -> None:
        self.reason = reason
        shown = describe_input(raw)
        super().__init__(shown, f"{shown} is not a valid blob handle: {detail}; {GOOD_HANDLE_HINT}")


class PathLikeHandleError(MalformedHandleError):
    """Input that looks like a file path; refused before any filesystem access."""

    code = "path_like_handle"

    def __init__(self, raw: object) -> None:
        super().__init__(
            raw,
            "path-like",
            "it looks like a file path (slashes, backslashes, '..', '~' or NUL bytes are "
            "never part of a handle) and blobs cannot be addressed by path",
        )


class UnknownHandleError(HandleError):
    """Well-formed, but no blob (and no tombstone) matches it."""

    code = "unknown_handle"

    def __init__(self, handle: str) -> None:
        super().__init__(
            handle,
            f"no stored blob matches handle {handle}; check that it was copied in full "
            "from the notice that produced it. If that output is older than the store's "
            "retention, it is gone: re-run the tool that produced it",
        )


class AmbiguousHandleError(HandleError):
    """The prefix matches more than one blob."""

    code = "ambiguous_handle"

    def __init__(self, handle: str, matches: int) -> None:
        self.matches = matches
        super().__init__(
            handle,
            f"handle {handle} matches {matches} stored blobs; use more of the hash "
            "(the full handle printed with the output is always unambiguous)",
        )


class ForeignHandleError(UnknownHandleError):
    """The blob exists but this session neither produced it nor was granted it.

    Answered exactly like an unknown handle (same message, same code): a
    session must not learn that another session stored some content.  The
    class stays distinct for callers inside the process.
    """

    def __init__(self, handle: str, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(handle)


REASON_TEXT = {
    "ttl": "it had not been read within the retention period",
    "size-cap": "the store was over its size cap and it was among the least recently used",
    "corrupt": "its bytes failed verification and it was moved to quarantine",
    "missing": "its file disappeared from disk",
    "manual": "an operator removed it",
}


class EvictedBlobError(HandleError):
    """The blob was removed by retention; the tombstone says what it was."""

    code = "evicted_blob"

    def __init__(self, handle: str, tombstone: "Tombstone") -> None:
        self.tombstone = tombstone
        why = REASON_TEXT.get(tombstone.reason, tombstone.reason)
        if tombstone.detail:
            why = f"{why} ({tombstone.detail})"
        if tombstone.tool_name:
            origin = f"the output of tool {tombstone.tool_name!r}"
            if tombstone.tool_args:
                origin += f" called with {tombstone.tool_args!r}"
            if tombstone.session_id:
                origin += f" in session {tombstone.session_id!r}"
            origin += f", stored {format_time(tombstone.created_at)}"
            advice = f"Re-run {tombstone.tool_name!r} with the same arguments to get it again"
        else:
            origin = f"a blob stored {format_time(tombstone.created_at)} whose producer is unknown"
            advice = "Re-run the tool that produced it to get it again"
        super().__init__(
            handle,
            f"handle {handle} is no longer available: it held {origin}, and was evicted "
            f"{format_time(tombstone.evicted_at)} because {why}. {advice}",
        )
