"""The stub service: where the bytes a stub stands for are kept, and which handle the stub names.

Compaction (``archive.StoreArchive``, for phase 1's pruned outputs and cut
arguments) and the lean view (``StoreSession.handle_for``) both ask here;
the words come from ``context_engine/chat/stubs.py``.  A stub's handle always
names the *original* bytes, so one ``stowage_fetch`` reads them:

* a spill preview this session wrote stands for the spilled output: the
  stub names that output's handle, not the preview's (the preview is an
  excerpt of it).  The session remembers each preview it wrote; in a later
  process of the same conversation the store remembers instead (the spill
  path records each preview as kind ``preview``), so a stub has the same
  bytes in every process.  A text that only looks like a preview (a tool
  that printed one) is not trusted: it is kept like any output;
* any other output is kept as it stood: found stored (recorded when it
  arrived) or put now.

Every handle named is readable by the session when the stub is written: a
stub never points to nothing.  A stub only *names* an original; the size cap
spares the small preview instead (``pins.spared_refs``), so when the cap
evicts the original the next stub of that preview names the preview's own
bytes and says so (``StubHandle.original_evicted``, answered by the same lookup).
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable

from ...blobstore import BlobStore, StoreError
from ..chat.markers import SPILL_HEADER, BlobKind
from ..chat.stubs import PrunedOutput, StubHandle, argument_gist, cut_arguments, stored_stub

# The handle of the original output a preview this session wrote stands for, looked up by the preview's text.
SpillOrigin = Callable[[str], "str | None"]
# Told each time a stub names a spilled original for a preview: (original's handle, preview's sha-256).
PreviewStubbed = Callable[[str, str], None]
# Only for previews recorded before the store kept a preview's original (provenance ``source``, issue 44): the
# first ``handle:`` line of such a preview is the original's.
_FIRST_HANDLE = re.compile(r"^handle: ([0-9a-f]{16,64})$", re.MULTILINE)


def encode_text(text: str) -> bytes:
    """UTF-8, keeping lone surrogates (lossless for any Python string)."""
    return text.encode("utf-8", "surrogatepass")


def digest(text: str) -> str:
    """SHA-256 of ``text`` as the store addresses it."""
    return hashlib.sha256(encode_text(text)).hexdigest()


def stored_handle(store: BlobStore, data: bytes, session_id: str | None, sha: str | None = None) -> str | None:
    """The handle of ``data`` if this session stored it already (one index read, no write)."""
    try:
        info = store.stat(sha or hashlib.sha256(data).hexdigest())
    except (StoreError, OSError):
        return None
    if any(origin.session_id == session_id for origin in info.provenance):
        return info.handle
    return None  # someone else's copy: a put adds this session's provenance


def keep_bytes(
    store: BlobStore,
    data: bytes,
    *,
    session_id: str | None,
    tool_name: str,
    tool_args: str,
    kind: BlobKind,
    content_type: str,
    sha: str | None = None,
    pin: bool = False,
) -> str:
    """The handle of ``data`` for this session: found if stored already, else put now.

    ``pin``: a new put is kept for the session's next request (it is about to point to it).

    Raises StoreError/OSError when the put fails (callers decide what a
    failure means for them).
    """
    return (
        stored_handle(store, data, session_id, sha)
        or store.put(
            data,
            session_id=session_id,
            tool_name=tool_name,
            tool_args=tool_args,
            kind=kind,
            content_type=content_type,
            pin=pin,
        ).handle
    )


class StubService:
    """One session's stub handles (built per use: it holds no state of its own)."""

    def __init__(
        self,
        store: BlobStore,
        session_id: Callable[[], str | None],
        spill_origin: SpillOrigin | None = None,
        on_preview_stubbed: PreviewStubbed | None = None,
    ) -> None:
        self.store = store
        self._session_id = session_id
        self._spill_origin = spill_origin
        self._on_preview_stubbed = on_preview_stubbed

    def stub_handle(self, text: str, *, kind: BlobKind, tool_name: str, arguments: str) -> StubHandle:
        """The handle of the original bytes ``text`` stands for (see the module docstring), stored if need be.

        One lookup of a preview's original answers both what the stub names
        and whether the size cap evicted that original (then the preview's
        own bytes are named).  ``kind`` is the kind a put records
        (``arguments``: call arguments, stored as JSON).  Raises
        StoreError/OSError when the store cannot write (the caller keeps the
        text, or falls back to a plain stub).
        """
        original = self._preview_origin(text)
        if original is not None and self.readable(original):
            if self._on_preview_stubbed is not None:
                self._on_preview_stubbed(original, digest(text))
            return StubHandle(original)
        is_arguments = kind is BlobKind.ARGUMENTS
        handle = keep_bytes(
            self.store,
            encode_text(text),
            session_id=self._session_id(),
            tool_name=tool_name,
            tool_args="arguments" if is_arguments else argument_gist(arguments),
            kind=kind,
            content_type="json" if is_arguments else "text",
            sha=digest(text),
            pin=True,
        )
        return StubHandle(handle, original_evicted=original is not None)

    def _preview_origin(self, text: str) -> str | None:
        if not text.startswith(SPILL_HEADER):
            return None
        handle = self._spill_origin(text) if self._spill_origin is not None else None
        return handle if handle is not None else recorded_preview_origin(self.store, text)

    def readable(self, handle: str) -> bool:
        """The session can read ``handle`` now (not evicted, purged or another session's)."""
        try:
            self.store.resolve(handle, self._session_id())  # evicted, purged or not this session's: not named
        except (StoreError, OSError):
            return False
        return True

    def pruned_stub(self, output: PrunedOutput) -> str:
        """Compaction's stub of a pruned output, naming its original bytes (raises StoreError/OSError)."""
        found = self.stub_handle(
            output.content, kind=BlobKind.PRUNED, tool_name=output.tool_name, arguments=output.arguments
        )
        return stored_stub(output, found.handle)

    def cut_arguments(self, tool_name: str, arguments: str, max_chars: int) -> str:
        """Oversized call arguments kept whole; the shortened JSON names their handle (raises StoreError/OSError)."""
        found = self.stub_handle(arguments, kind=BlobKind.ARGUMENTS, tool_name=tool_name, arguments="")
        return cut_arguments(arguments, max_chars, found.handle)


def recorded_preview_origin(store: BlobStore, text: str) -> str | None:
    """The original's handle, when the store holds ``text`` as a preview the spill path wrote.

    Only Stowage's spill path records kind ``preview``, and it records the
    output the preview stands for with it (the put's ``source``), so the
    link is read from the store's records, never from the text; a look-alike
    text was recorded as an ``output`` and is not read.
    """
    sha = digest(text)
    try:
        info = store.stat(sha)
        if not any(origin.kind == BlobKind.PREVIEW for origin in info.provenance):
            return None
        source = store.source_handle(sha)
    except (StoreError, OSError):
        return None
    if source is not None:
        return source
    # Lenient with stores written before the link was recorded: such a preview (Stowage's own rendering, kind
    # preview) names its original in its first ``handle:`` line.  No preview written since lacks the link.
    found = _FIRST_HANDLE.search(text)
    return found.group(1) if found else None
