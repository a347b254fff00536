"""What a request shows verbatim or points to: the blobs the store's size cap must spare.

The cap evicts the oldest blobs, a live session's included, except these
(``BlobStore.pin_request``).  A request *points to* a blob through a handle
in a preview, a stub, a cut argument or a summary (Stowage writes each as
``handle``, a separator and the hex); it *shows* a stored output verbatim
when the text's SHA-256 names a blob (outputs are recorded as they arrive,
and the lean view later stubs them with exactly that handle).  Reading
handles from text can only over-protect: a hex string that names no blob
pins nothing.

A view stub of a spill preview names the spilled original (one fetch reads
it), but the request only needs the preview to stay readable: the original
is spared while the request shows the preview verbatim (or the two newest
tool batches hold it), and otherwise the preview is spared in its place
(:func:`spared_refs`).  When the cap then evicts the original, the view's
next stub of that preview names the preview's own bytes.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..chat.markers import VIEW_STUB_PREFIX
from ..chat.messages import Message, call_arguments_text, content_text, tool_calls_of
from .stubs import digest

HANDLE_REF = re.compile(r"handle[\s:=\"']{1,3}([0-9a-f]{16,64})(?![0-9a-f])")
MIN_STORED_CHARS = 200  # shorter texts are never stored on their own


def _texts(message: Message) -> Iterator[str]:
    content = message.get("content")
    text = content if isinstance(content, str) else content_text(content) if content else ""
    if text:
        yield text
    for call in tool_calls_of(message):
        arguments = call_arguments_text(call)
        if arguments:
            yield arguments


def request_refs(messages: list[Any]) -> frozenset[str]:
    """Full shas of texts a request shows and handles it names (see module docstring)."""
    firm, stubbed = _refs(messages)
    return firm | stubbed


def _refs(messages: list[Any]) -> tuple[frozenset[str], frozenset[str]]:
    """What the request shows or names outside the lean view's stubs; and handles named only by those stubs."""
    firm: set[str] = set()
    stubbed: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        for text in _texts(message):
            if text.startswith(VIEW_STUB_PREFIX) and message.get("role") == "tool":
                stubbed.update(HANDLE_REF.findall(text))
                continue
            if len(text) >= MIN_STORED_CHARS:
                firm.add(digest(text))  # as the store addresses it
            if "handle" in text:
                firm.update(HANDLE_REF.findall(text))
    return frozenset(firm), frozenset(stubbed - firm)


def spared_refs(messages: list[Any], previews: dict[str, str]) -> tuple[frozenset[str], frozenset[str]]:
    """What the cap must spare for ``messages``; and the originals it no longer spares (see module docstring).

    ``previews``: handle of a spilled original a view stub named -> sha-256
    of the preview it stands for.  An original named only by view stubs is
    swapped for its preview unless the request shows that preview verbatim
    (which names the original itself).
    """
    firm, stubbed = _refs(messages)
    refs = firm | stubbed
    demoted = frozenset(h for h in stubbed if h in previews and previews[h] not in refs)
    return (refs - demoted) | {previews[h] for h in demoted}, demoted
