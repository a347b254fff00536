"""Keep what compaction removes: the blob-store side of the ``Archive`` protocol.

Phase 1 hands each pruned tool output here; the stub service (``stubs.py``,
shared with the lean view) keeps it byte for byte, and the stub the model
sees names the handle of its original bytes (for a spill preview, the
spilled output) and a one-line gist.  Every put here is pinned for the
session's next request (the store's size cap must not take what the
compacted history is about to point to).  The window a
summary replaces is stored whole as JSON lines (one message per line, keys in
their original order), its inline images each stored on their own as a
pruned image is, and the summary carries the window's handle and theirs.  If the store
cannot write, the default stub is used and the failure is counted, so a full
disk degrades compaction to the built-in's behaviour instead of breaking it.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from typing import Any, Callable

from ...blobstore import BlobStore, StoreError
from ..chat.markers import BlobKind
from ..chat.messages import Message, is_image_part
from ..chat.stubs import PrunedOutput, argument_gist
from .message_parts import part_placeholder, stored_part
from .stubs import SpillOrigin, StubService, encode_text, keep_bytes

logger = logging.getLogger(__name__)

# Runs a store write on another thread (a writer lane); the window's put goes through it.
Submit = Callable[..., "Future[Any]"]


def encode_window(messages: list[Message]) -> bytes:
    """One JSON document per line; ``decode_window`` gives the messages back."""
    return (
        "\n".join(json.dumps(m, ensure_ascii=False, default=str) for m in messages).encode("utf-8", "surrogatepass")
        + b"\n"
    )


def decode_window(data: bytes) -> list[Message]:
    # split on b"\n" only: str.splitlines() also breaks on U+2028, U+0085 ... that JSON leaves unescaped
    return [json.loads(line.decode("utf-8", "surrogatepass")) for line in data.split(b"\n") if line.strip()]


def record_output(
    store: BlobStore,
    text: str,
    *,
    tool_name: str,
    arguments: str,
    session_id: str | None,
    pin: bool = False,
    kind: BlobKind = BlobKind.OUTPUT,
    source: str | None = None,
) -> str:
    """Store a tool output as it arrives (kind ``output``; ``preview`` for a spill preview, with ``source``: the
    sha-256 of the output it stands for); returns its handle."""
    return store.put(
        encode_text(text),
        session_id=session_id,
        tool_name=tool_name,
        tool_args=argument_gist(arguments),
        kind=kind,
        content_type="text",
        pin=pin,
        source=source,
    ).handle


class StoreArchive:
    """Stores pruned outputs and summarized windows for one session."""

    def __init__(
        self,
        store: BlobStore,
        session_id: Callable[[], str | None],
        spill_origin: SpillOrigin | None = None,
        on_failure: Callable[[BaseException], None] | None = None,
        submit: Submit | None = None,
    ) -> None:
        self.store = store
        self._submit = submit or _run_here
        self._session_id = session_id
        self.stubs = StubService(store, session_id, spill_origin)
        self.failures = 0
        self.last_error: str | None = None
        self._on_failure = on_failure

    def render_pruned(self, output: PrunedOutput) -> str | None:
        """The stub of a pruned output, naming its original bytes (None: the store failed, use the plain stub)."""
        try:
            return self.stubs.pruned_stub(output)
        except (StoreError, OSError) as exc:
            self._failed(exc)
            return None

    def keep_part(self, part: Any) -> str | None:
        """Store a message part compaction removes (an image); the placeholder names its handle."""
        stored = stored_part(part)
        try:
            handle = keep_bytes(
                self.store,
                stored.data,
                session_id=self._session_id(),
                tool_name="message",
                tool_args=str(part.get("type") if isinstance(part, dict) else type(part).__name__),
                kind=BlobKind.PART,
                content_type=stored.content_type,
                pin=True,
            )
        except (StoreError, OSError) as exc:
            self._failed(exc)
            return None
        return part_placeholder(handle, stored)

    def cut_arguments(self, tool_name: str, arguments: str, max_chars: int) -> str | None:
        """Store oversized call arguments whole; the shortened JSON names their handle."""
        try:
            return self.stubs.cut_arguments(tool_name, arguments, max_chars)
        except (StoreError, OSError) as exc:
            self._failed(exc)
            return None

    def keep_window(self, window: list[Message]) -> Callable[[], str | None]:
        """Encode and put the window on the writer lane; the callable waits for the put and names its handle.

        An inline image of the window (a base64 data URL or source) is stored
        first as its own blob, as a pruned image is: the window's line holds
        its placeholder, and the reference names its handle, so the image is
        fetched whole as an image instead of as base64 text inside a window
        too large to fetch whole.  The lane reads the host's messages while
        compaction waits for the summary model: the host is blocked in
        compress(), and compaction waits for the put before it returns, so
        nothing changes them meanwhile.
        """
        count, session_id = len(window), self._session_id()
        images: list[str] = []  # "<handle> (<media type>, <size>)" of each image stored on its own

        def put() -> Any:
            kept = self._window_images(window, session_id, images)
            return self.store.put(
                encode_window(kept),
                session_id=session_id,
                tool_name="compaction",
                tool_args=f"{count} messages",
                kind=BlobKind.WINDOW,
                content_type="jsonl",
                pin=True,
            )

        future = self._submit(put)

        def reference() -> str | None:
            try:
                handle = future.result().handle  # returns only once the put has committed
            except (StoreError, OSError) as exc:
                self._failed(exc)
                return None
            return (
                f"The {count} compacted messages are stored whole, one JSON message per line, under handle "
                f'{handle}. Read them with stowage_fetch(handle="{handle}", mode="range", start=1, '
                f"count=20) or search them with stowage_grep(pattern=...)." + _images_sentence(images)
            )

        return reference

    def _window_images(self, window: list[Message], session_id: str | None, named: list[str]) -> list[Message]:
        """``window`` with each inline image stored on its own and replaced by its placeholder (copies)."""
        out: list[Message] = []
        for message in window:
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list) or not any(is_image_part(part) for part in content):
                out.append(message)
                continue
            parts = [self._window_image(part, session_id, named) if is_image_part(part) else part for part in content]
            out.append({**message, "content": parts})
        return out

    def _window_image(self, part: Any, session_id: str | None, named: list[str]) -> Any:
        """The text part naming a stored inline image; the image itself when it is not inline or cannot be stored."""
        stored = stored_part(part)
        if not stored.is_media:
            return part  # an image by URL: a few bytes of JSON, it stays in the window's line
        try:
            handle = keep_bytes(
                self.store,
                stored.data,
                session_id=session_id,
                tool_name="message",
                tool_args=str(part.get("type")),
                kind=BlobKind.PART,
                content_type=stored.content_type,
                pin=True,
            )
        except (StoreError, OSError) as exc:
            self._failed(exc)
            return part  # kept inline: the window stays whole
        named.append(f"{handle} ({stored.content_type}, {len(stored.data):,} bytes)")
        return {"type": "text", "text": part_placeholder(handle, stored)}

    def _failed(self, exc: BaseException) -> None:
        self.failures += 1
        self.last_error = str(exc)
        if self._on_failure is not None:
            self._on_failure(exc)
        logger.warning("stowage: the store could not keep compacted content (%s); using a plain stub", exc)


def _images_sentence(images: list[str]) -> str:
    if not images:
        return ""
    return (
        f" Its {len(images)} image(s) are stored on their own, each returned as an image by "
        'stowage_fetch(handle=..., mode="full"): ' + "; ".join(images) + "."
    )


def _run_here(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "Future[Any]":
    """No writer lane: run ``fn`` now and hand back its outcome as a finished future."""
    future: Future[Any] = Future()
    try:
        future.set_result(fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - delivered by future.result()
        future.set_exception(exc)
    return future
