"""Spill: an oversized tool result goes to the store; the model gets a preview.

Called for every tool result (Hermes's ``transform_tool_result`` hook).  A
result above the threshold (in tokens, per-tool overrides, a never-spill
list) is stored byte for byte; long strings inside a JSON envelope (the
``output`` of a terminal call, an MCP text block) are also stored unescaped
so they can be paged and grepped by line.  The model sees a message that says
plainly it is a preview, the size, the handle(s), an excerpt chosen by
content type, and how to read more.  Same input, same message: handles are
content addresses and excerpts are deterministic, so prompt caches survive.
If the store cannot write, the result passes through unchanged.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Callable

from ...blobstore import BlobStore, StoreError
from ...blobstore.presentation.excerpt import build_excerpt
from ...blobstore.presentation.sniff import sniff
from ...blobstore.presentation.unescape import TextView, extract_text_views, salvage_text_views
from ..chat.markers import SPILL_HEADER, BlobKind
from ..chat.stubs import argument_gist
from ..config.sections import SpillSection
from ..records.part_status import SpillRecord
from .stubs import encode_text

logger = logging.getLogger(__name__)

MAX_VIEWS = 4


@dataclass(frozen=True)
class SpillPolicy:
    enabled: bool = True
    threshold_tokens: int = 4000
    per_tool: dict[str, int] = field(default_factory=dict)
    never_spill: tuple[str, ...] = ()
    excerpt_chars: int = 2000

    @classmethod
    def from_settings(cls, spill: SpillSection) -> "SpillPolicy":
        return cls(
            spill.enabled, spill.threshold_tokens, dict(spill.per_tool), tuple(spill.never_spill), spill.excerpt_chars
        )

    def threshold_for(self, tool_name: str) -> int | None:
        """Token threshold for ``tool_name``; None means never spill it."""
        if not self.enabled or tool_name in self.never_spill:
            return None
        return self.per_tool.get(tool_name, self.threshold_tokens)


@dataclass(frozen=True)
class Spilled:
    message: str
    handle: str
    view_handles: dict[str, str]
    tokens: int
    stored: tuple[str, ...] = ()  # SHA-256 of every blob this spill put (the output and its views)


@dataclass(frozen=True)
class SpillOutcome:
    """What ``StoreSession.spill`` did with one tool result.

    ``text`` replaces the result in the history (a preview, or the result
    behind a note that it could not be stored); None keeps the result as it
    is.  ``spilled`` is set when the output went to the store.
    """

    text: str | None = None
    spilled: SpillRecord | None = None


KEPT = SpillOutcome()


def spill_result(
    store: BlobStore,
    text: str,
    *,
    tool_name: str,
    arguments: str,
    session_id: str | None,
    policy: SpillPolicy,
    count_tokens: Callable[[str], int],
    on_failure: Callable[[BaseException], None] | None = None,
) -> Spilled | None:
    """Store ``text`` and return the preview message, or None to leave it as is.

    When the store cannot write, ``on_failure`` gets the error and None is returned.
    """
    threshold = policy.threshold_for(tool_name)
    if threshold is None or not isinstance(text, str) or text.startswith(SPILL_HEADER):
        return None
    if not may_exceed(text, threshold):
        return None
    tokens = count_tokens(text)
    if tokens <= threshold:
        return None
    gist = argument_gist(arguments)
    kind = sniff(text).kind
    # Plain text gets the log excerpt too: head and tail plus any error lines
    # from the middle (sniffing only samples the ends of the output).
    excerpt_kind = "log" if kind == "text" else kind
    try:
        original = store.put(
            encode_text(text),
            session_id=session_id,
            tool_name=tool_name,
            tool_args=gist,
            kind=BlobKind.SPILL,
            content_type=kind,
            pin=True,
        )
        excerpt = build_excerpt(
            text, budget_chars=excerpt_budget(policy.excerpt_chars, text, tokens), kind=excerpt_kind
        )
        views = _line_views(text, excerpt.view_path)
        view_handles = {}
        stored = [original.sha256]
        for view in views:
            put = store.put(
                encode_text(view.text),
                session_id=session_id,
                tool_name=tool_name,
                tool_args=f"{gist} [{view.path}]",
                kind=BlobKind.SPILL_VIEW,
                content_type="text",
                pin=True,
            )
            view_handles[view.path] = put.handle
            stored.append(put.sha256)
    except (StoreError, OSError) as exc:
        logger.warning("stowage: could not spill a %s result (%s); passing it through unspilled", tool_name, exc)
        if on_failure is not None:
            on_failure(exc)
        return None
    message = _render(
        tool_name,
        gist,
        text,
        tokens,
        original.handle,
        original.line_count,
        view_handles,
        excerpt.text,
        excerpt.view_path,
        excerpt.shape,
    )
    return Spilled(message, original.handle, view_handles, tokens, tuple(stored))


def excerpt_budget(excerpt_chars: int, text: str, tokens: int) -> int:
    """The excerpt's characters: ``excerpt_chars``, fewer where a character is more than a token.

    Keeps the preview of a dense script (CJK, Amharic, emoji: up to three
    tokens a character) at about ``excerpt_chars`` tokens, well under the
    spill threshold; text of a character or more per token is unaffected.
    """
    if tokens <= len(text):
        return excerpt_chars
    return max(1, excerpt_chars * len(text) // tokens)


def may_exceed(text: str, threshold_tokens: int) -> bool:
    """Whether ``text`` can be over ``threshold_tokens`` tokens: False only when it surely is not.

    Byte-level BPE (tiktoken) never makes a token of less than one UTF-8
    byte, and the chars/4 fallback counts fewer still, so the UTF-8 length
    bounds the count from above.  The character count does not: Amharic, CJK
    or emoji text runs to several tokens per character (a 3,990-character
    Amharic page is about 7,200 tokens), so counting is skipped only below
    ``threshold_tokens`` bytes.
    """
    if len(text) > threshold_tokens:
        return True
    if text.isascii():
        return False  # one byte per character
    if 4 * len(text) <= threshold_tokens:
        return False  # at most four bytes per character
    return len(text.encode("utf-8", "surrogatepass")) > threshold_tokens


def _line_views(text: str, excerpt_view: str | None) -> list[TextView]:
    """Long multi-line strings inside a JSON envelope, the excerpt's one first."""
    views = extract_text_views(text) or (salvage_text_views(text) if excerpt_view else [])
    views.sort(key=lambda v: (v.path != excerpt_view, -len(v.text)))
    return views[:MAX_VIEWS]


# Hermes's terminal tool (tools/terminal_tool.py, 0.19.0) keeps 40% head and 60% tail of an output longer
# than tool_output.max_bytes and puts this notice between them.
HOST_TRUNCATION = re.compile(r"\.\.\. \[OUTPUT TRUNCATED - (\d+) chars omitted out of (\d+) total\] \.\.\.")


def host_truncation(text: str) -> tuple[int, int] | None:
    """(chars omitted, original length) when the host had cut the output before Stowage saw it."""
    match = HOST_TRUNCATION.search(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _render(
    tool_name: str,
    gist: str,
    text: str,
    tokens: int,
    handle: str,
    lines: int,
    view_handles: dict[str, str],
    excerpt: str,
    excerpt_view: str | None,
    shape: str,
) -> str:
    size = (
        f"{len(text):,} chars"
        + (" on one line" if lines <= 1 else f", {lines:,} lines")
        + (f", {shape}" if shape else "")
    )
    parts = [
        SPILL_HEADER,
        f"{tool_name or 'tool'}({gist}) returned {size} (~{tokens:,} tokens); "
        + (
            "the whole output is stored."
            if (cut := host_truncation(text)) is None
            else "that is all Stowage received and stored: "
            f"Hermes had already cut {cut[0]:,} of {cut[1]:,} chars out of "
            "the middle before Stowage saw it (`stowage setup` raises tool_output.max_bytes to keep them; "
            "`stowage doctor` explains)."
        ),
        f"handle: {handle}",
    ]
    for path, view_handle in view_handles.items():
        parts.append(f"handle: {view_handle} = the string at {path!r}, unescaped (page it by line, grep it)")
    if excerpt_view:
        parts.append(
            f"Line numbers in the preview refer to {excerpt_view!r} (handle {view_handles.get(excerpt_view, handle)})."
        )
    parts += [
        "--- preview ---",
        excerpt,
        "--- end of preview ---",
        'Read more with stowage_fetch(handle=..., mode="range", start=N, count=M) (lines; unit="chars" for '
        'characters), mode="grep" with a pattern, mode="json" with a path, or mode="stat".',
    ]
    return "\n".join(parts)
