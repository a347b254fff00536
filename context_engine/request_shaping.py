"""One provider request as it is sent: tools deferred, then the lean view (the history itself never changes).

Two routes reach it.  Every host with plugin middleware sends each request
through the ``llm_request`` middleware, which shapes tools and messages
together (:func:`shape_request`).  Hosts 0.20+ also call the engine's
``select_context`` per request (:func:`select_context`); once one has, the
middleware only defers tools, so the view is applied exactly once.  With the
view off the request goes as the host built it and is only measured.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Sequence

from ..tool_search.session import ShapedRequest
from .host_contract import HostFacts
from .messages import Message
from .session_state import SessionState
from .thresholds import deep_view_at

logger = logging.getLogger(__name__)


def shape_request(
    state: SessionState,
    host: HostFacts,
    tools: Sequence[Any],
    messages: list[Message],
    *,
    context_length: int,
    threshold_tokens: int,
    **host_tables: Any,
) -> ShapedRequest:
    """The middleware's request: tool deferral, then the lean view unless the host selects context itself."""
    state.saw(messages, "request")
    if tools:
        shaped = state.tool_search.shape_request(tools, messages, context_length=context_length, **host_tables)
    else:
        shaped = ShapedRequest(list(tools), messages, None)
    # counted on every route: select_context reads the newest tool list's size from here
    tools_tokens = state.tools_tokens.of(shaped.tools, state.counter.count_text)
    state.fixed_part.measure(messages, tools_tokens, state.counter.count_text)
    if host.selects_context:
        return shaped
    if state.view.settings.enabled:
        deep_at = deep_view_at(threshold_tokens, tools_tokens)
        return dataclasses.replace(shaped, messages=state.lean(shaped.messages, deep_at))
    state.send_unshaped(shaped.messages)
    return shaped


def select_context(
    state: SessionState, host: HostFacts, request_messages: Any, *, threshold_tokens: int
) -> list[Message] | None:
    """The host's ``select_context`` (0.20+): the lean messages, or None to send the request unchanged."""
    host.selects_context = True
    state.turn_selected = True  # the host's next pressure figure is of the selected request
    if isinstance(request_messages, list):
        state.saw(request_messages, "request")
    if not isinstance(request_messages, list) or not request_messages:
        return None
    state.fixed_part.measure(request_messages, state.tools_tokens.tokens, state.counter.count_text)
    if not state.view.settings.enabled:
        state.send_unshaped(request_messages)
        return None
    try:
        lean = state.lean(request_messages, deep_view_at(threshold_tokens, state.tools_tokens.tokens))
    except Exception:  # the host would log it; say why ourselves and send unchanged
        logger.exception("stowage: the lean view failed; the request goes unchanged")
        return None
    return lean if lean != request_messages else None
