"""Stowage's names for what it keeps in the blob store and for the markers it
writes into the model's context.

One module so that a marker is written and recognised from the same constant
(a stub prefix the pruner writes is the one ``is_stub`` looks for), and so a
blob kind is a name, not a string literal repeated at each ``put``.  Plain
data: imports nothing.
"""

from __future__ import annotations

from enum import Enum, StrEnum


class BlobKind(StrEnum):
    """Why Stowage stored a blob (recorded in the store's provenance).

    A ``StrEnum``: the store and its index see plain strings, and
    ``BlobKind.SPILL == "spill"``.
    """

    SPILL = "spill"  # an oversized tool output, stored when it arrived
    SPILL_VIEW = "spill-view"  # a long string inside a spilled JSON output, stored unescaped
    OUTPUT = "output"  # a smaller tool output, recorded in the background when it arrived
    PRUNED = "pruned"  # a tool output phase 1 replaced with a stub
    WINDOW = "window"  # the messages a summary replaced, one JSON message per line
    ARGUMENTS = "arguments"  # oversized tool-call arguments, stored whole where they were cut
    REASONING = "reasoning"  # an older assistant message the lean view sends condensed
    PART = "part"  # a non-text message part (an image) compaction took out of the context
    PREVIEW = "preview"  # a spill preview as the model saw it (its first handle line names the original)


# Every kind a session's history can be read back from.
HISTORY_KINDS: tuple[BlobKind, ...] = tuple(BlobKind)
# The kinds ``stowage_grep`` offers as a filter (besides ``any``).
GREP_KINDS: tuple[BlobKind, ...] = (BlobKind.SPILL, BlobKind.PRUNED, BlobKind.WINDOW)


class FailureKind(Enum):
    """Why a compaction has a ``summary_error``: the model's side or ours."""

    MODEL_UNAVAILABLE = "model_unavailable"  # no summary call was made (cooldown, no summarizer)
    MODEL_FAILED = "model_failed"  # the summary call failed (SummaryFailure)
    SUMMARIZER_ERROR = "summarizer_error"  # the summarizer raised something else
    INTERNAL = "internal"  # Stowage's own bug: the result did not validate

    @property
    def is_ours(self) -> bool:
        return self is FailureKind.INTERNAL


# -- markers in the model's context ------------------------------------------------------
SPILL_HEADER = "[stowage: preview of a large tool output — this is NOT the whole output]"
# Every one-line stub of a tool output is ``[stowage: output <state>]`` then the call, the verdict, the size
# and where the original bytes are (``stubs.py`` writes them all).
PRUNED_PREFIX = "[stowage: output pruned]"  # compaction without a store: nothing to fetch
DUPLICATE_PREFIX = "[stowage: output duplicated]"  # compaction: a later result has the same text
STORED_PREFIX = "[stowage: output stored]"  # compaction with the store: names the original's handle
VIEW_STUB_PREFIX = "[stowage: output omitted]"  # the lean view's stub of an older output (the request only)
IMAGE_PLACEHOLDER = "[stowage: image removed from older context]"
OUTPUT_NOT_SHOWN = "[stowage: output not shown]"  # the summary transcript's stand-in (never a tool message)
REASONING_MARK = "[stowage: rest of this older message omitted"  # the lean view's cut of older reasoning
# Stub prefixes earlier versions wrote: histories keep them, so they are still recognised (never written).
LEGACY_STUB_PREFIXES = (
    "[stowage: tool output pruned]",
    "[stowage: duplicate tool output]",
    "[stowage: tool output stored]",
    "[stowage: old output omitted]",
)
STUB_PREFIXES = (PRUNED_PREFIX, DUPLICATE_PREFIX, STORED_PREFIX, VIEW_STUB_PREFIX, *LEGACY_STUB_PREFIXES)
SUMMARY_MARKER = "[STOWAGE CONTEXT SUMMARY"
SUMMARY_END_MARKER = "[END OF STOWAGE CONTEXT SUMMARY]"
