"""Sessions recorded with Stowage: its previews and stubs found in the history, the originals read back.

A session that ran Stowage holds, instead of its big tool outputs, the spill
previews Stowage showed the model (and, in rows a compaction re-inserted,
one-line stubs); replayed as recorded, both engines would see the shortened
outputs and the comparison would say nothing.  The user's store still holds
the originals: each preview and stub names its handle.  The originals are
read straight from the blob files (``blobs/<aa>/<sha>``, content-addressed:
the bytes are checked against their name), without opening the store's
index, so nothing in the user's store is written.  A handle whose bytes are
gone (evicted, purged, another store) stays as recorded and is counted.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...context_engine.chat.markers import SPILL_HEADER, STUB_PREFIXES, SUMMARY_MARKER

_HEX = re.compile(r"[0-9a-f]{8,64}")
_PREVIEW_HANDLE = re.compile(r"^handle: ([0-9a-f]{8,64})\s*$", re.MULTILINE)  # the first one is the original's
_FULL_OUTPUT = re.compile(r"the full output is under handle ([0-9a-f]{8,64})")  # stubs of earlier versions
_STUB_HANDLE = re.compile(r"\bhandle(?: |=\")([0-9a-f]{8,64})\b")  # handle="..." (now), handle ... (earlier)
MAX_ORIGINAL_BYTES = 64 * 1024 * 1024  # an original larger than this is not read back


@dataclass
class StowageTrace:
    """What of Stowage a recorded session holds, and what could be rebuilt."""

    previews: int = 0
    stubs: int = 0
    summaries: int = 0
    rebuilt: int = 0
    not_rebuilt: int = 0

    @property
    def ran_stowage(self) -> bool:
        return bool(self.previews or self.stubs or self.summaries)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ran_stowage": self.ran_stowage,
            "previews": self.previews,
            "stubs": self.stubs,
            "summaries": self.summaries,
            "rebuilt": self.rebuilt,
            "not_rebuilt": self.not_rebuilt,
        }


class StoreFiles:
    """Read-only access to a store's blob files by handle (a prefix of the SHA-256)."""

    def __init__(self, root: Path | None) -> None:
        self.blobs = Path(root) / "blobs" if root is not None else None

    def read(self, handle: str) -> str | None:
        if self.blobs is None or not _HEX.fullmatch(handle):
            return None
        folder = self.blobs / handle[:2]
        try:
            names = [p.name for p in folder.iterdir() if len(p.name) == 64 and p.name.startswith(handle)]
        except OSError:
            return None
        if len(names) != 1:  # none, or an ambiguous handle
            return None
        path = folder / names[0]
        try:
            with open(path, "rb") as handle_file:
                data = handle_file.read(MAX_ORIGINAL_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_ORIGINAL_BYTES or hashlib.sha256(data).hexdigest() != names[0]:
            return None  # too big to replay, or damaged bytes: keep what was recorded
        return data.decode("utf-8", "surrogatepass")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def original_handle(text: str) -> tuple[str, str | None] | None:
    """("preview" | "stub", the original's handle or None) for a Stowage marker text, else None."""
    if text.startswith(SPILL_HEADER):
        found = _PREVIEW_HANDLE.search(text)
        return "preview", found.group(1) if found else None
    if text.startswith(STUB_PREFIXES):
        found = _FULL_OUTPUT.search(text) or _STUB_HANDLE.search(text)
        return "stub", found.group(1) if found else None
    return None


def is_stowage_summary(content: Any) -> bool:
    return SUMMARY_MARKER in _text(content)[:400]


def rebuild_outputs(messages: list[dict[str, Any]], store: StoreFiles, trace: StowageTrace) -> None:
    """Tool results that are Stowage previews or stubs get their original text back where the store has it."""
    for message in messages:
        if message.get("role") != "tool":
            continue
        found = original_handle(_text(message.get("content")))
        if found is None:
            continue
        kind, handle = found
        if kind == "preview":
            trace.previews += 1
        else:
            trace.stubs += 1
        original = store.read(handle) if handle else None
        if original is None:
            trace.not_rebuilt += 1
            continue
        message["content"] = original
        trace.rebuilt += 1


def describe(trace: StowageTrace) -> str:
    """One line for the session's notes."""
    found = trace.previews + trace.stubs
    return (
        f"recorded with Stowage ({trace.previews} preview(s), {trace.stubs} stub(s), {trace.summaries} "
        f"summary(ies)): {trace.rebuilt} of {found} original output(s) rebuilt from the store"
        + (f", {trace.not_rebuilt} not (their bytes are no longer in the store)" if trace.not_rebuilt else "")
    )
