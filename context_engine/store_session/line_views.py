"""The lines of a one-line JSON result: the unescaped strings a spill stored beside it, by handle.

A spilled tool result is kept byte for byte, so a terminal output stays the
tool's JSON envelope, one line long; spilling also stores each long string of
it unescaped under its own handle (:mod:`.spill`), and the preview names them.
A model that pages or greps the original by line anyway scans one line and
finds nothing.  The fetch reply then names the stored strings, found again by
content address (the same bytes, the same handle): nothing is recorded twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...blobstore import BlobStore, StoreError
from ...blobstore.presentation.unescape import extract_text_views, salvage_text_views
from .stubs import encode_text, stored_handle

MAX_SCAN_BYTES = 16 * 1024 * 1024  # a larger one-line result is not re-read to look (the preview named its views)
MIN_SCAN_BYTES = 512  # spill stores no view of a shorter string


@dataclass(frozen=True)
class LineView:
    """One string of the original stored unescaped: its handle, where it sat in the JSON, its lines."""

    handle: str
    path: str
    lines: int


def stored_line_views(store: BlobStore, sha: str, size: int, line_count: int, session_id: str | None) -> list[LineView]:
    """The views of blob ``sha`` this session holds, when the blob is one line; else none."""
    if line_count > 1 or not MIN_SCAN_BYTES <= size <= MAX_SCAN_BYTES:
        return []
    try:
        text = store.read_bytes(sha).decode("utf-8", "surrogatepass")
    except (StoreError, OSError, UnicodeDecodeError):
        return []
    found = []
    for view in extract_text_views(text) or salvage_text_views(text):
        handle = stored_handle(store, encode_text(view.text), session_id)
        if handle is not None:
            found.append(LineView(handle, view.path, view.line_count))
    return found


def line_views_note(views: list[LineView]) -> str:
    """What the reply tells the model to read instead of the one line."""
    named = "; ".join(f"handle {v.handle} = the string at {v.path!r} ({v.lines:,} lines)" for v in views)
    return f"this content is one line (the tool's JSON); its text is stored unescaped, by line: {named}"
