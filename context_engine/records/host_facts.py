"""What this engine learnt about its host: mutable facts, set by the glue and the engine as calls arrive.

The contract itself (what Hermes calls and reads) is ``host_adapter/host_contract.py``; these facts are the
session's to read (whether the host selects context, runs the turn clock, can run tool search), so they live
below the session.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .session_status import HostStatus

logger = logging.getLogger("stowage.context_engine.host_adapter.engine")  # where these notes were always logged


@dataclass
class HostFacts:
    """What this engine learnt about its host; a copy starts with the same facts."""

    support: HostStatus | None = None  # the running Hermes version and what it allows (set by the plugin)
    tool_search_unavailable: str | None = None  # why this host cannot run tool search
    selects_context: bool = False  # the host calls select_context (0.20+): the middleware only defers tools
    turn_clock: bool = False  # the host calls on_turn_complete (newer hosts)
    compress_gets_memory: bool = False  # a prompt prepared ahead without the memory context never matches
    # the pre_api_request hook brought the live history (0.17+; 0.13.0's carries none): a request can start a summary
    history_before_requests: bool = False
    unavailable_logged: bool = False

    def log_limits_once(self, tool_search_mode: str) -> None:
        """What this host cannot do, said at the first session start, once the host's own log is set up."""
        if self.unavailable_logged:
            return
        self.unavailable_logged = True
        if self.tool_search_unavailable and tool_search_mode != "off":
            logger.warning("stowage: %s", self.tool_search_unavailable)
        if self.support is not None and (self.support.unavailable or not self.support.supported):
            logger.warning("stowage: %s", self.support.note)
