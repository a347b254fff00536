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
without them raises TypeError inside the host's loop.  The engine's methods
name only what they use; ``dispatch`` (one wrapper) matches the host's
keywords to them, so what the host sees is open-ended.

This is the specification, the engine (``engine``) the implementation and
``dispatch`` the call between them.  :data:`GLUE_CALLS` is the other half:
what Stowage's own Hermes glue (``host/``) calls on the engine beside the
contract, so the glue never reaches into the session.  The mutable facts
the engine learns about its host are ``records/host_facts.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]


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


# The toolset whose tools Hermes counts as core (never deferred by tool search); read through the public
# ``toolsets.get_toolset`` (host/tool_search_glue.py).  On 0.13.0 to 0.22.2 its tools are exactly the private
# ``toolsets._HERMES_CORE_TOOLS``.
CORE_TOOLSET = "hermes-cli"
# Our own copy of 0.19.0's core tools: what stands in where the host's toolset cannot be read.
HERMES_CORE_TOOLS: frozenset[str] = frozenset(
    {
        "browser_back", "browser_cdp", "browser_click", "browser_console", "browser_dialog", "browser_get_images",
        "browser_navigate", "browser_press", "browser_scroll", "browser_snapshot", "browser_type", "browser_vision",
        "clarify", "close_terminal", "computer_use", "cronjob", "delegate_task", "execute_code", "ha_call_service",
        "ha_get_state", "ha_list_entities", "ha_list_services", "image_generate", "kanban_attach", "kanban_attach_url",
        "kanban_attachments", "kanban_block", "kanban_comment", "kanban_complete", "kanban_create", "kanban_heartbeat",
        "kanban_link", "kanban_list", "kanban_show", "kanban_unblock", "memory", "patch", "process", "read_file",
        "read_terminal", "search_files", "session_search", "skill_manage", "skill_view", "skills_list", "terminal",
        "text_to_speech", "todo", "vision_analyze", "web_extract", "web_search", "write_file",
    }
)  # fmt: skip


def member_names(kind: str | None = None) -> list[str]:
    """The contract's member names (of one ``kind``)."""
    return [m.name for m in MEMBERS if kind is None or m.kind == kind]


# What the glue calls on the engine beside the contract (``host/registration.py``, ``tool_search_glue.py``,
# ``slash_command.py``, ``hermes_engine.py``); each is typed on the engine.
GLUE_CALLS: tuple[str, ...] = (
    "tool_result_replacement",  # transform_tool_result: a re-read's earlier output, else a spill preview, else None
    "bridged_call_target",  # llm_execution middleware: a bridge call resolved to its tool
    "scoped_tool_names",  # the tools a bridge may run through the host's dispatch
    "store_root",  # /stowage summary: the session's store folder
    "shape_request",  # llm_request middleware: tools deferred, then the lean view
    "prepare_ahead",  # post_llm_call hook
    "prepare_during_turn",  # pre_api_request hook
    "end_turn_from_plugin_hook",  # on_session_end plugin hook: the turn clock
    "disable_tool_search",  # a host without middleware
    "attach_store_home",  # the Hermes home's store
    "dispatch_underlying",  # overridden: run a bridged tool through Hermes
    "preview",  # /stowage preview
    "status",  # /stowage status
    "sharing",  # subagent_stop: the guests of a shared engine
    "on_session_end",  # subagent_stop: a child ends
    "session_id",
    "host",  # the host's version support, set at registration
)


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
