"""The engine: the host contract (``host_contract.HostEngine``) adapted onto the session, host-agnostic.

The session (``session_state.SessionState``) does the work: compaction, the
request as sent, preparation ahead, status.  What stays here is host
adaptation: the contract's members (the host-read figures live in the
session, see ``InSession``), the keyword arguments of every host version,
the model binding handed to the session as a ``limits.Limits`` snapshot,
routing between agents on a shared engine (``shared_engine``), and the deep
copy per agent.  The engine's tools are ``engine_tools``'s.
Nothing here imports Hermes: the host glue's ``StowageContextEngine`` adds the
``ContextEngine`` base class and the summary call.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from pathlib import Path
from typing import Any, Callable, Collection

from ...tool_search.session import ShapedRequest
from ..chat.messages import Message
from ..compaction.inputs import Archive
from ..compaction.preview import CompactionPreview
from ..config.settings import Settings, default_settings
from ..policy.thresholds import as_int, default_share, trigger_for
from ..policy.trigger import trigger_key
from ..records.host_facts import HostFacts
from ..records.session_status import SessionStatus
from ..redaction.shown import mask_logs, shown_record
from ..session.compaction_run import has_content
from ..session.limits import Limits, SummaryModel
from ..session.state import InSession, SessionState
from ..store_session.spill import SpillOutcome
from . import engine_tools
from .dispatch import host_dispatch
from .shared_engine import SharedEngine
from .tool_results import ToolResultReplacement, replacement_for

logger = logging.getLogger(__name__)
_PACKAGE = __name__.rsplit(".context_engine.", 1)[0]  # stowage, or the name the host loaded it under


def no_history() -> list[Any] | None:
    """No live history at a pressure check (no host on the stack): the last request's own count is the floor."""
    return None


@host_dispatch(
    # reach the calling agent's guest engine where one object serves several agents (hosts before 0.18.0)
    routed=(
        "update_from_response",
        "should_compress_info",
        "should_defer_preflight_to_real_usage",
        "compress",
        "record_completed_compaction",
        "prepare_ahead",
        "prepare_during_turn",
        "get_automatic_compaction_status_message",
        "on_turn_complete",
        "end_turn_from_plugin_hook",
        "handle_tool_call",
        "shape_request",
        "on_session_reset",
        "preview",
    ),
    # run on the object called (its own sharing decides, or the glue found the engine by session id)
    local=(
        "clone_for_agent",
        "update_model",
        "should_compress",
        "has_content_to_compress",
        "get_tool_schemas",
        "select_context",
        "on_session_start",
        "on_session_end",
        "get_status",
    ),
)
class StowageEngineCore:
    """One agent's engine as the host sees it: the contract's members, adapted onto its session (``state``).

    The methods name only the parameters they use; ``dispatch.host_dispatch`` matches the host's keywords to
    them and routes the calls listed above to a guest engine."""

    # host-read figures of the session (the ABC's class attributes, kept in the session state)
    last_prompt_tokens = InSession[int]()
    last_completion_tokens = InSession[int]()
    last_total_tokens = InSession[int]()
    last_real_prompt_tokens = InSession[int]()
    compression_count = InSession[int]()
    awaiting_real_usage_after_compression = InSession[bool]()
    session_id = InSession[str | None]()
    _last_compression_made_progress = InSession[bool]("flags.made_progress")
    _last_compress_aborted = InSession[bool]("flags.aborted")
    _last_summary_error = InSession[str | None]("flags.summary_error")
    _last_summary_fallback_used = InSession[bool]("flags.fallback_used")
    _last_aux_model_failure_model = InSession[str | None]("flags.aux_failure_model")
    _last_aux_model_failure_error = InSession[str | None]("flags.aux_failure_error")

    # host-read numbers of this agent (copied with the engine)
    threshold_tokens: int = 0
    context_length: int = 0
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 8
    model_thresholds: dict[str, Any] | None = None  # newer hosts assign compression.model_thresholds
    emit_automatic_compaction_status = True  # newer hosts: ask for the status line below

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        summary_model: SummaryModel | None = None,
        archive: Archive | None = None,
    ) -> None:
        # shared by every copy: read-only for the process
        self.settings = settings or default_settings()
        self.summary_model = summary_model
        self.archive = archive  # injected (tests); otherwise the store session's archive
        # this agent's host and model (a copy starts with the same)
        self.host = HostFacts()
        self.threshold_percent = default_share(self.settings)
        self.threshold_key = trigger_key(self.settings.view.enabled)  # the key behind the trigger (trigger.py)
        self.threshold_share = self.threshold_percent
        self.protect_first_n = self.settings.compaction.protect_first_n
        self.protect_last_n = self.settings.compaction.protect_last_n
        self.runtime: dict[str, Any] = {}
        self.model = ""
        # this agent's session (a copy starts a fresh one) and the sharing of this object (never copied)
        self.state = SessionState.new(self.settings)
        self.sharing: SharedEngine[StowageEngineCore] = SharedEngine()
        mask_logs(_PACKAGE)  # Stowage's log lines quote errors: masked like everything else shown
        # the host's live history at a pressure check (its calls carry only a rough figure): the request it is
        # about to send is counted from it (host/calling_agent.calling_history); None where it cannot be had
        self.live_history: Callable[[], list[Any] | None] = no_history

    @property
    def name(self) -> str:
        return "stowage"

    # -- copies: one per agent ----------------------------------------------------
    def __deepcopy__(self, memo: dict[int, Any]) -> "StowageEngineCore":
        """Another agent's engine: the same settings, host facts and model, a fresh session."""
        clone = copy.copy(self)
        memo[id(self)] = clone
        clone.host = dataclasses.replace(self.host)
        clone.state = self.state.for_another_agent(self.settings)
        clone.sharing = SharedEngine(agent_copy=True)
        return clone

    def clone_for_agent(self) -> "StowageEngineCore":
        """Newer hosts: the engine of one more agent (the default is this deep copy)."""
        return copy.deepcopy(self)

    # -- model ----------------------------------------------------------------------
    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: Any = "",
        provider: str = "",
        api_mode: str = "",
    ) -> None:
        """Keep the runtime for the summary call and recompute the threshold."""
        old = self.runtime
        runtime_changed = (model, provider, base_url) != (old.get("model"), old.get("provider"), old.get("base_url"))
        self.model = model
        self.runtime = {
            "model": model,
            "provider": provider,
            "base_url": base_url,
            "api_key": api_key,
            "api_mode": api_mode,
        }
        self.context_length = int(context_length or 0)
        trigger = trigger_for(
            self.model_thresholds,
            model,
            provider,
            self.context_length,
            default=self.threshold_percent,
            view_enabled=self.state.view.settings.enabled,
        )
        self.threshold_key, self.threshold_share, self.threshold_tokens = trigger.key, trigger.share, trigger.tokens
        if runtime_changed:
            self.state.governor.clear_cooldown()

    @property
    def limits(self) -> Limits:
        """The model binding as the session sees it: a read-only snapshot, taken per call."""
        return Limits(
            self.settings,
            context_length=self.context_length,
            threshold_tokens=self.threshold_tokens,
            threshold_key=self.threshold_key,
            threshold_share=self.threshold_share,
            runtime=self.runtime,
            summary_model=self.summary_model,
            archive=self.archive,
        )

    # -- usage and the decision -------------------------------------------------------
    def update_from_response(self, usage: dict[str, Any]) -> None:
        """Real usage after an API call (an empty dict keeps the host's sentinel)."""
        self.state.record_usage(usage, self.threshold_tokens, self.live_history())

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Decide on the argument (the host's current estimate), not stale state."""
        return self.should_compress_info(prompt_tokens)[0]

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """Newer hosts: the decision and why compaction is blocked (the host shows a reason as a warning)."""
        tokens = self.last_prompt_tokens if prompt_tokens is None else as_int(prompt_tokens)
        return self.state.decide(tokens, self.limits, self.host, self.live_history()).host_answer()

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        """Skip the rough pre-turn estimate while the real count is pending (right after a compaction it can
        stay over the threshold although the real prompt fits) or the view leaves out what puts it over: on
        every host, the decision to compact follows what is sent (a turn's preflight on 0.20+ counts the whole
        history, its pre-API gate the request select_context chose)."""
        return self.state.defer_preflight(
            as_int(rough_tokens), self.threshold_tokens, self.host.selects_context, self.live_history()
        )

    def has_content_to_compress(self, messages: list[Message]) -> bool:
        return has_content(self.settings, messages)

    # -- compaction ----------------------------------------------------------------------
    def compress(
        self,
        messages: list[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
        *,
        bypass_cooldown: bool = False,
    ) -> list[Message]:
        """One compaction (one at a time; the caller's list is never mutated); the input list itself when nothing
        changed.  ``bypass_cooldown`` (after a proven overflow) tries the summary model even while it cools down."""
        return self.state.compact(
            self.limits, self.host, messages, current_tokens, focus_topic, force, memory_context, bypass_cooldown
        )

    def record_completed_compaction(self, used_fallback: bool = False) -> None:
        """After a compaction boundary commits: arms the verdict.  0.20+ pass ``feasibility_skip`` (a TypeError
        here discards the compacted transcript on 0.20.1 and crashes the turn on 0.22.2)."""
        self.state.governor.verify_pending = True

    def prepare_ahead(self, messages: Any) -> None:
        """At turn end: start the next compaction's summary once the request nears the trigger.

        ``messages`` is the live history (the ``post_llm_call`` hook's, or
        ``on_turn_complete``'s), the list ``compress()`` will later receive.
        A pending preparation that is still a prefix of it is kept.
        """
        self.state.prepare_ahead(self.limits, self.host, messages)

    def prepare_during_turn(self, messages: Any, approx_tokens: Any = None) -> None:
        """Before each request: start the coming compaction's summary when the measured pace says it is time.

        ``messages`` is the live history (the ``pre_api_request`` hook's),
        ``approx_tokens`` the host's estimate of the request.
        """
        if isinstance(messages, list) and messages:
            self.host.history_before_requests = True  # a request can start the compaction's summary
        self.state.prepare_during_turn(self.limits, self.host, messages, approx_tokens)

    def use_clock(self, clock: Any) -> None:
        """Read time from ``clock`` (a replay's simulated clock): when summaries start, finish and are waited for."""
        self.state.ahead.use_clock(clock)

    def get_automatic_compaction_status_message(
        self, *, phase: str = "", default_message: str | None = None, **context: Any
    ) -> str | None:
        """Newer hosts: the user's status line before an automatic compaction, saying what Stowage will do."""
        return self.state.status_line(self.limits, context, default_message)

    # -- the turn clock ------------------------------------------------------------------
    def on_turn_complete(self, messages: Any = None, usage: Any = None) -> None:
        """Newer hosts: once per user turn (interrupted and failed turns too): the governor's turn clock.

        Where the host calls it, the ``on_session_end`` plugin hook (the clock
        on older hosts) only publishes status.
        """
        self.host.turn_clock = True
        self.state.turn_selected = False  # the next turn's first pressure figure is its preflight's: whole history
        self.prepare_ahead(messages)
        self.end_turn()

    def end_turn_from_plugin_hook(self) -> None:
        """The per-turn plugin hook: the turn clock unless the host calls :meth:`on_turn_complete`."""
        if self.host.turn_clock:
            self.state.publish_status(self.limits, self.host, self.name)
            return
        self.end_turn()

    def end_turn(self) -> None:
        self.state.end_turn(self.limits, self.host, self.name)

    # -- store: spill and read-back tools ---------------------------------------------------
    def attach_store_home(self, hermes_home: Any) -> None:
        """Keep blobs under ``hermes_home`` (or the configured ``store.path``)."""
        self.state.store.attach(hermes_home)

    def spill_tool_result(self, tool_name: str, arguments: Any, result: Any) -> SpillOutcome:
        """The store's answer to a tool result (``.text``: a preview, or None to keep it); no re-read check."""
        return self.state.store.spill(tool_name, arguments, result, self.state.counter.count_text)

    def tool_result_replacement(self, tool_name: str, arguments: Any, result: Any) -> ToolResultReplacement:
        """What replaces a tool result in the history: a re-read's earlier output the request showed as a stub,
        else the spill's preview, else nothing (``.text`` None keeps the result)."""
        return replacement_for(
            tool_name,
            arguments,
            result,
            last_request=self.state.last_request,
            store=self.state.store,
            count_tokens=self.state.counter.count_text,
        )

    @property
    def store_root(self) -> Path | None:
        """The folder of this session's store (None until it opened or where it cannot)."""
        return self.state.store.root

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return engine_tools.tool_schemas(self.state, self.settings, self.host)

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        return engine_tools.handle_tool_call(self.state, name, args, self.dispatch_underlying)

    def dispatch_underlying(self, name: str, arguments: dict[str, Any]) -> str:
        """Run a tool through the host's dispatch; the Hermes subclass provides it."""
        return engine_tools.cannot_dispatch(name, arguments)

    def bridged_call_target(self, name: str, arguments: str | None) -> tuple[str, dict[str, Any]] | None:
        """The tool a model's bridge call (``name``, its JSON ``arguments``) resolves to in this session's scope,
        counted as a bridged call; None leaves the call as it is (not a bridge call, or refused: the engine's
        own handling then answers with the reason)."""
        return engine_tools.bridged_call_target(self.state, name, arguments)

    def scoped_tool_names(self) -> list[str]:
        """The tools this session's bridges may run (sorted): the host's dispatch enables exactly these."""
        return sorted(self.state.tool_search.scoped_names())

    # -- the request: tool search and the lean view ------------------------------------------
    def disable_tool_search(self, reason: str) -> None:
        """This host cannot run tool search: no bridges, and ``reason`` in status and the log."""
        self.host.tool_search_unavailable = reason

    def shape_request(
        self,
        tools: list[Any],
        messages: list[dict[str, Any]],
        *,
        core_names: Collection[str] = frozenset(),
        toolset_of: Callable[[str], str | None] = lambda _name: None,
        registered: Collection[str] = frozenset(),
    ) -> ShapedRequest:
        """One provider request as it should be sent: tool deferral, then the lean view (history unchanged).
        The host's tables (its core tool names, the toolset of a tool, the registered names) decide what may be
        deferred; without tools none are needed.
        Routed: a review agent's requests name the parent's session, but are the review agent's."""
        return self.state.shape_request(
            self.limits, self.host, tools, messages, core_names=core_names, toolset_of=toolset_of, registered=registered
        )

    def select_context(
        self,
        request_messages: list[Message],
        *,
        conversation_messages: Any = None,
        incoming_message: Any = None,
        budget_tokens: int = 0,
    ) -> list[Message] | None:
        """Newer hosts (0.20+): the lean view through the engine hook, per provider request with a copy of its
        messages (None leaves them unchanged); the ``llm_request`` middleware then only defers tools."""
        return self.state.select_context(self.limits, self.host, request_messages)

    # -- sessions ---------------------------------------------------------------------------
    def on_session_start(
        self,
        session_id: str,
        *,
        hermes_home: Any = None,
        old_session_id: str | None = None,
        boundary_reason: str | None = None,
    ) -> None:
        continuing = boundary_reason == "compression" or bool(old_session_id)
        guest = self.sharing.guest_for_start(self.session_id, session_id, continuing, lambda: copy.deepcopy(self))
        if guest is not None:
            guest.on_session_start(
                session_id, hermes_home=hermes_home, old_session_id=old_session_id, boundary_reason=boundary_reason
            )
            return
        self.host.log_limits_once(self.state.tool_search.mode)
        self.sharing.owner_started()
        self.state.start(
            session_id, hermes_home=hermes_home, old_session_id=old_session_id, boundary_reason=boundary_reason
        )

    def on_session_end(self, session_id: str, messages: list[Message] | None = None) -> None:
        """The end of this agent's session, or of a guest's: on a shared engine a child agent may end under its
        parent's id (the review agent of 0.13.0-0.17.0), which ends the child, never the parent."""
        guest = self.sharing.end_guest(session_id)
        if guest is not None:
            guest.on_session_end(guest.session_id or session_id, messages or [])
            return
        if session_id == self.session_id:
            self.end_own_session()

    def end_own_session(self) -> None:
        """This agent's own session ends: status published, the store told (the host glue also unbinds it)."""
        self.sharing.owner_ended()
        self.state.end(self.limits, self.host, self.name)

    def on_session_reset(self) -> None:
        self.state.reset_by_host()

    # -- dry run and status -------------------------------------------------------------------
    def preview(self) -> CompactionPreview | None:
        """What a compaction of the last history seen would do now, without a model call or a write."""
        return self.state.preview(self.limits)

    def status(self) -> SessionStatus:
        """What this session's engine did and will do; the one shape every reader gets."""
        return self.state.status(self.limits, self.host, self.name)

    def get_status(self) -> dict[str, Any]:
        """The host's ``get_status()``: :meth:`status` as a dict."""
        return shown_record(self.status().as_dict())  # error texts may quote a provider's echo of a key
