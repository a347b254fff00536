"""What Hermes calls and reads on a context engine, as a typed contract.

:class:`HostEngine` is the contract as a ``Protocol``; :data:`MEMBERS` lists
the same members with the first Hermes version that uses each, so a test can
hold the contract against a real installed host (its ``ContextEngine`` ABC and
call sites; ``tests/hosts/test_host_contract.py``) and against
:class:`~..host_adapter.engine.StowageEngineCore`.  :data:`LEFT_TO_THE_HOST` names what hosts
declare and Stowage leaves to their default, so a host method that is in
neither table is news.  Sources:
``shared/reference/hermes-host.md`` (0.19.0) and ``hermes-upstream.md`` (0.20+).

Every method takes ``**kwargs``: hosts add keywords over time (0.20 passes
``feasibility_skip`` to ``record_completed_compaction``), and an override
without them raises TypeError inside the host's loop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .session_status import HostStatus

logger = logging.getLogger("stowage.context_engine.host_adapter.engine")  # where these notes were always logged

Message = dict[str, Any]


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


@dataclass(frozen=True)
class HostMember:
    name: str
    kind: str  # "method", "attribute" (read, some also written, by the host) or "property"
    # the host version whose source documents it: 0.19.0 (the ABC and call sites in
    # shared/reference/hermes-host.md), 0.20.0 / 0.22.0 (hermes-upstream.md); the hosts
    # contract test checks the older hosts themselves
    since: str
    use: str  # what the host does with it


MEMBERS: tuple[HostMember, ...] = (
    HostMember("name", "property", "0.19.0", "selection compares it with context.engine"),
    HostMember("update_model", "method", "0.19.0", "at agent init, model switch, fallback, overflow step-down"),
    HostMember("update_from_response", "method", "0.19.0", "after each API call with the usage dict ({} possible)"),
    HostMember("should_compress", "method", "0.19.0", "preflight, pre-API and post-tool checks"),
    HostMember("compress", "method", "0.19.0", "the compaction; kwargs filtered by signature"),
    HostMember("should_defer_preflight_to_real_usage", "method", "0.19.0", "preflight and pre-API checks"),
    HostMember("has_content_to_compress", "method", "0.19.0", "the gateway's /compress guard"),
    HostMember("on_session_start", "method", "0.19.0", "after update_model; boundary_reason after compaction"),
    HostMember("on_session_end", "method", "0.19.0", "session end"),
    HostMember("on_session_reset", "method", "0.19.0", "/new and /reset"),
    HostMember("get_tool_schemas", "method", "0.19.0", "tool injection at agent init"),
    HostMember("handle_tool_call", "method", "0.19.0", "an engine tool call; kwargs: messages"),
    HostMember("get_status", "method", "0.19.0", "status display"),
    HostMember("record_completed_compaction", "method", "0.19.0", "after a compaction boundary made progress"),
    HostMember("last_prompt_tokens", "attribute", "0.19.0", "read; written -1 after a compaction"),
    HostMember("last_completion_tokens", "attribute", "0.19.0", "read; written 0 after a compaction"),
    HostMember("last_total_tokens", "attribute", "0.19.0", "read"),
    HostMember("last_real_prompt_tokens", "attribute", "0.19.0", "the deferred preflight's log line"),
    HostMember("threshold_tokens", "attribute", "0.19.0", "preflight gate; lowered by the feasibility check"),
    HostMember("threshold_percent", "attribute", "0.19.0", "lowered by the feasibility check"),
    HostMember("context_length", "attribute", "0.19.0", "read"),
    HostMember("compression_count", "attribute", "0.19.0", "'compressed N times' warning; never incremented"),
    HostMember("protect_first_n", "attribute", "0.19.0", "preflight gate"),
    HostMember("protect_last_n", "attribute", "0.19.0", "preflight gate"),
    HostMember("awaiting_real_usage_after_compression", "attribute", "0.19.0", "written True after a compaction"),
    HostMember("model", "attribute", "0.19.0", "snapshotted to restore the primary runtime"),
    HostMember("_last_compression_made_progress", "attribute", "0.19.0", "starts a new session boundary"),
    HostMember("_last_compress_aborted", "attribute", "0.19.0", "warns and keeps the messages"),
    HostMember("_last_summary_error", "attribute", "0.19.0", "warns the user"),
    HostMember("_last_summary_fallback_used", "attribute", "0.19.0", "warns the user"),
    HostMember("_last_aux_model_failure_model", "attribute", "0.19.0", "names the failing summary model"),
    HostMember("_last_aux_model_failure_error", "attribute", "0.19.0", "names the failure"),
    HostMember("select_context", "method", "0.20.0", "every provider request; None leaves it unchanged"),
    HostMember("on_turn_complete", "method", "0.20.0", "once per user turn"),
    HostMember("should_compress_info", "method", "0.20.0", "explains a blocked compaction"),
    HostMember("get_automatic_compaction_status_message", "method", "0.20.0", "the status line"),
    HostMember("emit_automatic_compaction_status", "attribute", "0.20.0", "asks for that status line"),
    HostMember("model_thresholds", "attribute", "0.20.0", "assigned before the first update_model"),
    HostMember("clone_for_agent", "method", "0.22.0", "one engine per agent, instead of a deep copy"),
)


# What hosts declare on their ``ContextEngine`` and Stowage deliberately leaves to the host's default.
LEFT_TO_THE_HOST: tuple[HostMember, ...] = (
    HostMember("should_compress_preflight", "method", "0.19.0", "a rough pre-API check; the default says no"),
    HostMember(
        "prune_tool_results_only",
        "method",
        "0.20.0",
        "the default prunes nothing: the lean view never changes the persisted history, so nothing is left to prune",
    ),
)


def member_names(kind: str | None = None) -> list[str]:
    """The contract's member names (of one ``kind``)."""
    return [m.name for m in MEMBERS if kind is None or m.kind == kind]


@runtime_checkable
class HostEngine(Protocol):
    """A context engine as every supported Hermes version uses it (:data:`MEMBERS` says since when)."""

    last_prompt_tokens: int
    last_completion_tokens: int
    last_total_tokens: int
    last_real_prompt_tokens: int
    threshold_tokens: int
    threshold_percent: float
    context_length: int
    compression_count: int
    protect_first_n: int
    protect_last_n: int
    awaiting_real_usage_after_compression: bool
    model: str
    _last_compression_made_progress: bool
    _last_compress_aborted: bool
    _last_summary_error: str | None
    _last_summary_fallback_used: bool
    _last_aux_model_failure_model: str | None
    _last_aux_model_failure_error: str | None
    emit_automatic_compaction_status: bool
    model_thresholds: dict[str, Any] | None

    @property
    def name(self) -> str: ...

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: Any = "",
        provider: str = "",
        api_mode: str = "",
        **kwargs: Any,
    ) -> None: ...

    def update_from_response(self, usage: dict[str, Any], **kwargs: Any) -> None: ...

    def should_compress(self, prompt_tokens: int | None = None, **kwargs: Any) -> bool: ...

    def compress(
        self,
        messages: list[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
        **kwargs: Any,
    ) -> list[Message]: ...

    def should_defer_preflight_to_real_usage(self, rough_tokens: int, **kwargs: Any) -> bool: ...

    def has_content_to_compress(self, messages: list[Message], **kwargs: Any) -> bool: ...

    def on_session_start(self, session_id: str, **kwargs: Any) -> None: ...

    def on_session_end(self, session_id: str, messages: list[Message] | None = None, **kwargs: Any) -> None: ...

    def on_session_reset(self, **kwargs: Any) -> None: ...

    def get_tool_schemas(self, **kwargs: Any) -> list[dict[str, Any]]: ...

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str: ...

    def get_status(self, **kwargs: Any) -> dict[str, Any]: ...

    def record_completed_compaction(self, used_fallback: bool = False, **kwargs: Any) -> None: ...

    def select_context(
        self,
        request_messages: list[Message],
        *,
        conversation_messages: Any = None,
        incoming_message: Any = None,
        budget_tokens: int = 0,
        **kwargs: Any,
    ) -> list[Message] | None: ...

    def on_turn_complete(self, messages: Any = None, usage: Any = None, **kwargs: Any) -> None: ...

    def should_compress_info(self, prompt_tokens: int | None = None, **kwargs: Any) -> tuple[bool, str | None]: ...

    def get_automatic_compaction_status_message(
        self, *, phase: str = "", default_message: str | None = None, **kwargs: Any
    ) -> str | None: ...

    def clone_for_agent(self, **kwargs: Any) -> "HostEngine": ...
