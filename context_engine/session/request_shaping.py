"""The session's provider requests as sent: tools deferred, the lean view, then inline tool schemas (history unchanged).

Two routes reach it.  Every host with plugin middleware sends each request
through the ``llm_request`` middleware, which shapes tools and messages
together (:meth:`RequestShaping.shape_request`).  Hosts 0.20+ also call the engine's
``select_context`` per request (:meth:`RequestShaping.select_context`); once one has, the
middleware only defers tools, so the view is applied exactly once.  With the
view off the request goes as the host built it and is only measured.

Inline pre-selection (``tool_search/inline.py``) renders last, on both
routes: the lean view never sees the inlined schema blocks (so never stubs
them), and they are inserted into their user messages of the request the
view made: in ``select_context`` on 0.20+ (the host measures pressure and
plans its prompt cache on what it returns), and in the middleware, which
adds only what is missing (the first request of a session, before any
catalog).  The request's count includes them.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Sequence

from ...tool_search.inline import insert_blocks, inserted
from ...tool_search.session import ShapedRequest
from ..chat.messages import Message
from ..policy.thresholds import deep_view_at
from ..records.host_facts import HostFacts
from ..records.session_status import LastRequest, RequestFigures
from ..view.cache_anchor import anchored, without_marker
from .limits import Limits
from .parts import SessionParts

logger = logging.getLogger(__name__)

REQUEST_LOG = 400  # requests kept for the dashboard's timeline (oldest dropped)


class RequestShaping(SessionParts):
    """Each request as the session sends it, and its figures in the request log."""

    def shape_request(
        self, limits: Limits, host: HostFacts, tools: Sequence[Any], messages: list[Message], **host_tables: Any
    ) -> ShapedRequest:
        """The middleware's request: tool deferral, then the lean view unless the host selects context itself."""
        self.saw(messages, "request")
        if tools:
            shaped = self.tool_search.shape_request(
                tools, messages, context_length=limits.context_length, **host_tables
            )
        else:
            shaped = ShapedRequest(list(tools), messages, None)
        # counted on every route: select_context reads the newest tool list's size from here
        tools_tokens = self.tools_tokens.of(shaped.tools, self.counter.count_text)
        self.fixed_part.measure(messages, tools_tokens, self.counter.count_text)
        if host.selects_context:  # select_context's lean messages (blocks in already, unless it had no catalog yet)
            sent, inlined = self.with_inline_schemas(shaped.messages)
            if inlined:
                self.sent_request = dataclasses.replace(self.sent_request, tokens=self.sent_request.tokens + inlined)
            marked = self.with_cache_anchor(sent)  # the host planned its markers on what select_context returned
            return dataclasses.replace(shaped, messages=marked) if inlined or marked is not sent else shaped
        if self.view.settings.enabled:
            deep_at = deep_view_at(limits.threshold_tokens, tools_tokens)
            lean = self.lean(shaped.messages, deep_at)
            sent, inlined = self.with_inline_schemas(lean)
            self.note_sent(shaped.messages, limits.threshold_tokens, inlined)
            return dataclasses.replace(shaped, messages=self.with_cache_anchor(sent))
        self.send_unshaped(shaped.messages)
        sent, inlined = self.with_inline_schemas(shaped.messages)
        self.note_sent(shaped.messages, limits.threshold_tokens, inlined)
        return dataclasses.replace(shaped, messages=sent) if inlined else shaped

    def with_inline_schemas(self, messages: list[Message]) -> tuple[list[Message], int]:
        """The request with tool search's inline blocks in their user messages, and the blocks' tokens."""
        try:
            blocks = self.tool_search.inline_blocks(messages)
        except Exception:  # a ranking problem must never cost the request
            logger.exception("stowage: could not pick inline tool schemas; the request goes without them")
            return messages, 0
        if not blocks:
            return messages, 0
        sent = insert_blocks(messages, blocks)
        return sent, sum(self.counter.count_text(b) for b in inserted(messages, sent, blocks))

    def with_cache_anchor(self, messages: list[Message]) -> list[Message]:
        """The request with rolling cache markers moved to the view's anchors (``view/cache_anchor.py``), if any.

        Each anchor is found from the end (the messages after it are the same in number on every route) and
        checked against the message the view put there; anything else, and the request goes as it is.
        """
        if not self.view.settings.cache_anchor:
            return messages
        found = []
        for from_end, expected in self.anchors_from_end:
            at = len(messages) - from_end
            if not 0 < at < len(messages) or not isinstance(messages[at], dict):
                continue
            if messages[at].get("role") != expected.get("role"):
                continue
            if without_marker(messages[at]).get("content") == without_marker(expected).get("content"):
                found.append(at)
        moved = anchored(messages, found) if found else None
        return moved if moved is not None else messages

    def select_context(self, limits: Limits, host: HostFacts, request_messages: Any) -> list[Message] | None:
        """The host's ``select_context`` (0.20+): the lean messages, or None to send the request unchanged."""
        host.selects_context = True
        self.turn_selected = True  # the host's next pressure figure is of the selected request
        if isinstance(request_messages, list):
            self.saw(request_messages, "request")
        if not isinstance(request_messages, list) or not request_messages:
            return None
        self.fixed_part.measure(request_messages, self.tools_tokens.tokens, self.counter.count_text)
        if not self.view.settings.enabled:
            self.send_unshaped(request_messages)
            sent, inlined = self.with_inline_schemas(request_messages)
            self.note_sent(request_messages, limits.threshold_tokens, inlined)
            return sent if inlined else None
        try:
            lean = self.lean(request_messages, deep_view_at(limits.threshold_tokens, self.tools_tokens.tokens))
        except Exception:  # the host would log it; say why ourselves and send unchanged
            logger.exception("stowage: the lean view failed; the request goes unchanged")
            return None
        # the blocks after the view, here too: the host measures pressure and plans its cache on what this returns
        sent, inlined = self.with_inline_schemas(lean)
        self.note_sent(request_messages, limits.threshold_tokens, inlined)
        return sent if sent != request_messages else None

    def lean(self, messages: list[Message], deep_at: int = 0) -> list[Message]:
        """One request as the lean view sends it; its figures go to the request log."""
        store = self.store if self.store.store is not None else None
        self.store.pin_request(messages)  # while the view renders, the cap spares all it may point to
        outcome = self.view.apply(messages, store, deep_at=deep_at, record=False)
        evicted = self.store.pin_request(outcome.messages)  # originals only a stub named may be evicted now
        if evicted:  # their stubs name the previews instead: a request never points to a tombstone
            self.view.forget(evicted)
            outcome = self.view.apply(messages, store, deep_at=deep_at, record=False)
            self.store.pin_request(outcome.messages)
        self.view.record(outcome)
        self.last_request = (messages, outcome.messages)
        sent = outcome.messages
        self.anchors_from_end = tuple((len(sent) - at, sent[at]) for at in outcome.anchors if 0 < at < len(sent))
        if store is None and outcome.unstored:
            self.view.stats.last_error = self.store.error or "the Stowage store is not available"
        self._log_request()
        return outcome.messages

    def send_unshaped(self, messages: list[Message]) -> None:
        """The view off: the request goes as the host built it, and what spilling saved is still counted."""
        self.store.pin_request(messages)  # the size cap spares what the request points to
        try:
            self.view.measure(messages, self.store if self.store.store is not None else None)
        except Exception:  # figures must never cost the session anything
            logger.exception("stowage: could not measure the request")
            return
        self._log_request()

    def _log_request(self) -> None:
        last = self.view.stats.last_request or LastRequest()
        # "full": the same history unshaped (spilled outputs whole), the base of every "saved" figure
        self.request_log.append(
            RequestFigures(at=round(time.time(), 3), full=last.unshaped_tokens or 0, sent=last.sent_tokens)
        )
        del self.request_log[:-REQUEST_LOG]
