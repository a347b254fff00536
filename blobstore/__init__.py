"""Content-addressed blob storage for spilled and pruned tool output.

Knows nothing of Hermes or of chat messages: bytes in, handles and verified
reads out.  Start with :class:`BlobStore`.
"""

from .doctor import DoctorIssue, DoctorReport
from .errors import (
    AmbiguousHandleError,
    CorruptBlobError,
    EvictedBlobError,
    ForeignHandleError,
    HandleError,
    MalformedHandleError,
    PathLikeHandleError,
    StoreError,
    StoreIndexError,
    StoreWriteError,
    UnknownHandleError,
)
from .handles import MIN_HANDLE_LEN, normalize_handle
from .reader import BlobReader, BlobStream
from .records import BlobInfo, CatalogEntry, Eviction, GcReport, Provenance, PutResult, Tombstone
from .retention import RetentionPolicy
from .store import BlobStore
from .window import LineWindow

__all__ = [
    "AmbiguousHandleError",
    "BlobInfo",
    "BlobReader",
    "BlobStore",
    "BlobStream",
    "CatalogEntry",
    "CorruptBlobError",
    "DoctorIssue",
    "DoctorReport",
    "EvictedBlobError",
    "Eviction",
    "ForeignHandleError",
    "GcReport",
    "HandleError",
    "LineWindow",
    "MIN_HANDLE_LEN",
    "MalformedHandleError",
    "PathLikeHandleError",
    "Provenance",
    "PutResult",
    "RetentionPolicy",
    "StoreError",
    "StoreIndexError",
    "StoreWriteError",
    "Tombstone",
    "UnknownHandleError",
    "normalize_handle",
]
