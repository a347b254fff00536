"""What a request shows verbatim or points to: the blobs the store's size cap must spare.

The cap evicts the oldest blobs, a live session's included, except these
(``BlobStore.pin_request``).  A request *points to* a blob through a handle
in a preview, a stub, a cut argument or a summary (Stowage writes each as
``handle``, a separator and the hex); it *shows* a stored output verbatim
when the text's SHA-256 names a blob (outputs are recorded as they arrive,
and the lean view later stubs them with exactly that handle).  Reading
handles from text can only over-protect: a hex string that names no blob
pins nothing.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Iterator

from ..messages import Message, call_arguments_text, content_text, tool_calls_of

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
    refs: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        for text in _texts(message):
            if len(text) >= MIN_STORED_CHARS:
                refs.add(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
            if "handle" in text:
                refs.update(HANDLE_REF.findall(text))
    return frozenset(refs)
