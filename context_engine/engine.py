"""The engine: the host contract mapped onto compaction, host-agnostic.

:class:`StowageEngineCore` implements every method and attribute the Hermes
host calls or reads (see docs/architecture.md), but imports nothing from
Hermes: the summary model and the archive are injected.  The plugin's
``StowageContextEngine`` adds the ``ContextEngine`` base class and the
auxiliary-LLM call on top, so everything here is testable without the host.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import threading
import time
from typing import Any, Callable

from .ahead import AheadSummaries, build_job, should_prepare
from .compactor import Archive, CompactionOutcome, CompactionPlan, compact
from .config import Settings, default_settings
from .deadline import TIMEOUT_KEY, SummaryDeadline
from .governor import Governor, GovernorPolicy
from .messages import Message, is_real_user_turn, last_index, message_text
from .prune import PruneSettings
from .store_session.session import StoreSession
from .summary import SummaryFailure
from .tokens import TokenCounter
from .trigger import trigger_key, trigger_status
from .status_file import write_session_status
from .summary_log import append_summary, window_handle
from .preview import CompactionPreview, SeenMessages, preview_compaction
from .view import LeanView, ViewSettings
from ..tool_search.session import ShapedRequest, ToolSearchSession
from ..tool_search import BRIDGE_NAMES

logger = logging.getLogger(__name__)

CALIBRATION_MESSAGES = 40
COOLDOWN_REASON = "the summary model is cooling down after a recent failure; used the fallback summary"

# (prompt, runtime) -> reply text; raises SummaryFailure.  runtime[TIMEOUT_KEY] is the call's timeout in
# seconds (what is left of the compaction's deadline), or None for the host's own.
SummaryModel = Callable[[str, dict[str, Any]], str]


class StowageEngineCore:
    """Compaction policy and host-visible state for one agent."""

    # host-read attributes (class defaults mirror the ABC)
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 8

    def __init__(self, settings: Settings | None = None, *, summary_model: SummaryModel | None = None,
                 archive: Archive | None = None) -> None:
        self.settings = settings or default_settings()
        c = self.settings.compaction
        view = ViewSettings.from_settings(self.settings)
        # With the lean view on, requests are measured as sent, and the working
        # budget is the view's own (chosen by bench/bench_economy.py).
        self.threshold_percent = self.settings.view.compact_at if view.enabled else c.threshold
        self.threshold_key = trigger_key(view.enabled)  # the key behind the trigger (trigger.py has the rule)
        self.threshold_share = self.threshold_percent
        self.protect_first_n = c.protect_first_n
        self.protect_last_n = c.protect_last_n
        self.summary_model = summary_model
        self.archive = archive  # injected (tests); otherwise the store session's archive
        self.lossless = StoreSession(self.settings)
        self.counter = TokenCounter(self.settings.tokenizer.encoding,
                                    allow_download=self.settings.tokenizer.allow_download)
        self.tool_search = ToolSearchSession(self.settings.tool_search, self.counter.count_text)
        self.view = LeanView(view, self.counter.count_message)
        self.governor = Governor(GovernorPolicy(c.max_ineffective, c.backoff_turns, c.failure_cooldown_seconds))
        # the next summary, written ahead; a compaction waits for it within its one summary deadline
        self.ahead = AheadSummaries()
        # the host passes a memory provider's context to compress(); a prompt prepared without it never matches
        self._compress_gets_memory = False
        self.runtime: dict[str, Any] = {}
        self.model = ""
        self.session_id: str | None = None
        self.last_outcome: CompactionOutcome | None = None
        self.compaction_log: list[dict[str, Any]] = []
        self.request_log: list[dict[str, Any]] = []  # per request: tokens of the full history and as sent
        self.last_seen: SeenMessages | None = None  # the newest history the engine saw, for /stowage preview
        # (history, as sent) of the newest request the view shaped: answers re-reads (reread.py)
        self.last_request: tuple[list[Message], list[Message]] | None = None
        self._host_selects_context = False  # set by a host that calls select_context (0.20+)
        self._host_turn_clock = False  # the host calls on_turn_complete (newer hosts)
        self.tool_search_unavailable: str | None = None  # why this host cannot run tool search
        self.host_support: dict[str, Any] | None = None  # what the running Hermes allows (set by the plugin)
        self._unavailable_logged = False
        self._reset_flags()
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.last_real_prompt_tokens = 0
        self.compression_count = 0
        self.awaiting_real_usage_after_compression = False
        self._init_sharing()

    def _init_sharing(self) -> None:
        """State that is never copied: the lock and the guests of a shared engine."""
        self._lock = threading.RLock()
        self._guests: dict[str, StowageEngineCore] = {}  # session id -> guest engine
        self._guest_threads: dict[int, str] = {}  # thread ident -> session id of the guest started there
        self._session_live = False
        self._owner_thread: int | None = None

    @property
    def name(self) -> str:
        return "stowage"

    def _reset_flags(self) -> None:
        self._last_compression_made_progress = False
        self._last_compress_aborted = False
        self._last_summary_error: str | None = None
        self._last_summary_fallback_used = False
        self._last_aux_model_failure_model: str | None = None
        self._last_aux_model_failure_error: str | None = None

    # -- copying (the host deep-copies the registered engine per agent) -------
    # The rule: a copy shares only what is read-only for the process (settings,
    # the summary model, an injected archive) and nothing per session; the
    # lock and the guests of a shared engine are never copied.
    _agent_copy = False  # True on a copy: it belongs to one agent

    def __deepcopy__(self, memo: dict[int, Any]) -> "StowageEngineCore":
        clone = copy.copy(self)
        memo[id(self)] = clone
        shared = {"settings", "summary_model", "archive"}
        fresh = {"_lock", "_guests", "_guest_threads", "_session_live", "_owner_thread"}
        for key, value in self.__dict__.items():
            if key not in shared and key not in fresh and key not in ("last_seen", "last_request"):
                setattr(clone, key, copy.deepcopy(value, memo))
        clone.last_seen = clone.last_request = None  # another agent's history: never copied (it can be large)
        clone._init_sharing()
        clone._agent_copy = True
        return clone

    def clone_for_agent(self, **_: Any) -> "StowageEngineCore":
        """Newer hosts: the engine of one more agent (the default is this deep copy)."""
        return copy.deepcopy(self)

    # -- one engine object shared between agents (hosts before 0.18.0) ---------
    def _guest_for_start(self, session_id: str, kwargs: dict[str, Any]) -> "StowageEngineCore | None":
        """The engine a starting session gets when the host hands this object to another agent.

        Hosts before 0.18.0 give every agent (the background review agent,
        subagents, gateway sessions) the registered object itself.  The first
        session to start on it owns it; another session starting while the
        owner's is live (not a compaction continuing it) gets a guest engine
        of its own: its store binding, spill handles and counters.  The
        owner's session, store and counters are never moved.  Another agent
        is told apart by its thread (the review agent and subagents run on
        their own); the owner's thread starting a new session is the owner
        moving on.
        """
        if self._agent_copy or not session_id:
            return None
        with self._lock:
            guest = self._guests.get(session_id)
            if guest is None:
                continuing = kwargs.get("boundary_reason") == "compression" or bool(kwargs.get("old_session_id"))
                same_agent = self._owner_thread == threading.get_ident()
                if not self._session_live or self.session_id in (None, session_id) or continuing or same_agent:
                    return None
                guest = self._make_guest()
                self._guests[session_id] = guest
            self._guest_threads[threading.get_ident()] = session_id
            return guest

    def _make_guest(self) -> "StowageEngineCore":
        store_session = type(self.lossless)(self.settings)  # a fresh one: the owner's is never copied
        store_session.root = self.lossless.root
        store_session.error = self.lossless.error
        guest = copy.deepcopy(self, {id(self.lossless): store_session})
        guest.session_id = None
        guest.compaction_log = []
        guest.on_session_reset()
        logger.info("stowage: this Hermes shares one engine between agents; session state kept apart per agent")
        return guest

    def _routed(self) -> "StowageEngineCore":
        """The engine of the agent calling now: a guest started on this thread, else the owner."""
        if not self._guests:
            return self
        with self._lock:
            sid = self._guest_threads.get(threading.get_ident())
            return self._guests.get(sid or "", self)

    # -- model ----------------------------------------------------------------
    def update_model(self, model: str, context_length: int, base_url: str = "", api_key: Any = "",
                     provider: str = "", api_mode: str = "", **_: Any) -> None:
        """Keep the runtime for the summary call and recompute the threshold."""
        runtime_changed = (model, provider, base_url) != (self.runtime.get("model"), self.runtime.get("provider"),
                                                          self.runtime.get("base_url"))
        self.model = model
        self.runtime = {"model": model, "provider": provider, "base_url": base_url, "api_key": api_key,
                        "api_mode": api_mode}
        self.context_length = int(context_length or 0)
        share = self._model_threshold(model, provider)
        self.threshold_key = trigger_key(self.view.settings.enabled, model_threshold=share is not None)
        self.threshold_tokens = int(self.context_length * (share if share is not None else self.threshold_percent))
        self.threshold_share = share if share is not None else self.threshold_percent
        if runtime_changed:
            self.governor.clear_cooldown()

    @property
    def tail_budget_tokens(self) -> int:
        if self.view.settings.enabled:
            # What the view sends verbatim anyway; older turns of a longer tail
            # would only go out as stubs, so the summary may as well cover them.
            return max(1000, self.view.settings.hot_tokens)
        return max(1000, int(self.threshold_tokens * self.settings.compaction.target_ratio))

    # -- usage ----------------------------------------------------------------
    def update_from_response(self, usage: dict[str, Any], **_: Any) -> None:
        target = self._routed()
        if target is not self:
            return target.update_from_response(usage)
        usage = usage if isinstance(usage, dict) else {}
        self.governor.api_call()
        prompt = _as_int(usage.get("prompt_tokens"))
        if prompt <= 0:
            return  # {} after a compaction, or a provider without usage: keep the sentinel
        self.last_prompt_tokens = prompt
        self.last_real_prompt_tokens = prompt
        self.last_completion_tokens = _as_int(usage.get("completion_tokens"))
        self.last_total_tokens = _as_int(usage.get("total_tokens")) or prompt + self.last_completion_tokens
        self.awaiting_real_usage_after_compression = False
        verdict = self.governor.verify(prompt, self.threshold_tokens)
        if verdict is False:
            logger.warning("stowage: the last compaction left %d prompt tokens (threshold %d); ineffective streak %d",
                           prompt, self.threshold_tokens, self.governor.ineffective_streak)

    def should_compress(self, prompt_tokens: int | None = None, **_: Any) -> bool:
        """Decide on the argument (the host's current estimate), not stale state."""
        return self.should_compress_info(prompt_tokens)[0]

    def should_compress_info(self, prompt_tokens: int | None = None, **_: Any) -> tuple[bool, str | None]:
        """Newer hosts: the decision and, when compaction is blocked, why.

        Below the threshold the answer is ``(False, None)``: the host shows any
        reason to the user as a "compaction blocked" warning.  Reasons, in the
        built-in's ``name:detail`` style: ``once_per_turn`` (one automatic compaction per user turn),
        ``backoff:<why>`` (compactions that did not bring the prompt under the
        threshold).  The summary model's failure cooldown does not block a
        compaction (it uses the fallback summary); it is reported by
        :meth:`get_automatic_compaction_status_message`.
        """
        target = self._routed()
        if target is not self:
            return target.should_compress_info(prompt_tokens)
        tokens = self.last_prompt_tokens if prompt_tokens is None else _as_int(prompt_tokens)
        if tokens <= 0 or not self.threshold_tokens or tokens < self.threshold_tokens:
            # The host contract: no reason below the threshold (a reason is shown to the user as a warning).
            return False, None
        if self.governor.hook_driven and self.governor.compacted_this_turn():
            return False, "once_per_turn"
        backoff = self.governor.backoff_reason()
        if backoff is not None:
            return False, f"backoff:{backoff}"
        return True, None

    # -- newer hosts: status line and turn clock ----------------------------------
    emit_automatic_compaction_status = True

    def get_automatic_compaction_status_message(self, *, phase: str = "", default_message: str | None = None,
                                                **context: Any) -> str | None:
        """The user's status line before an automatic compaction: what Stowage will actually do."""
        target = self._routed()
        if target is not self:
            return target.get_automatic_compaction_status_message(phase=phase, default_message=default_message,
                                                                  **context)
        try:
            return self._status_message(context)
        except Exception:  # noqa: BLE001 - a status line must never break a compaction
            logger.debug("stowage: status message failed", exc_info=True)
            return default_message

    def _status_message(self, context: dict[str, Any]) -> str:
        approx = _as_int(context.get("approx_tokens"))
        threshold = _as_int(context.get("threshold_tokens")) or self.threshold_tokens
        size = f" ({approx:,} of {threshold:,} tokens)" if approx and threshold else ""
        if self.governor.compacted_this_turn():
            return f"Stowage: already compacted this turn; nothing to do{size}"
        backoff = self.governor.backoff_reason()
        if backoff is not None:
            return f"Stowage: not compacting, {backoff}{size}"
        cooldown = self.governor.cooldown_remaining()
        if cooldown > 0:
            return (f"Stowage: compacting{size}: storing old tool outputs and writing the fallback summary "
                    f"(the summary model is cooling down, {int(cooldown)} s left)")
        model = self.runtime.get("model") or "the summary model"
        return f"Stowage: compacting{size}: storing old tool outputs and summarizing older turns with {model}"

    def on_turn_complete(self, messages: Any = None, usage: Any = None, **kw: Any) -> None:
        """Newer hosts: once per user turn (interrupted and failed turns too): the governor's turn clock.

        Where the host calls it, it is the clock and the ``on_session_end``
        plugin hook (the clock on older hosts) stops advancing it.
        """
        target = self._routed()
        if target is not self:
            return target.on_turn_complete(messages, usage, **kw)
        self._host_turn_clock = True
        self.prepare_ahead(messages)
        self.end_turn()

    def end_turn_from_plugin_hook(self) -> None:
        """The per-turn plugin hook: the turn clock unless the host calls :meth:`on_turn_complete`."""
        if self._host_turn_clock:
            self.publish_status()
            return
        self.end_turn()

    # -- newer hosts: per-model thresholds ---------------------------------------
    model_thresholds: dict[str, Any] | None = None

    def _model_threshold(self, model: str, provider: str) -> float | None:
        """``compression.model_thresholds``: the longest matching ``substr`` or ``provider:substr``.

        A value up to 1 is a share of the window, a larger one a token count;
        anything else is ignored with a note.
        """
        table = self.model_thresholds
        if not isinstance(table, dict) or not table:
            return None
        best: tuple[tuple[int, bool], Any] | None = None  # (match length, provider-qualified), value
        lowered_model, lowered_provider = (model or "").lower(), (provider or "").lower()
        for raw_key, value in table.items():
            key = str(raw_key).lower()
            want_provider, sep, substr = key.partition(":")
            if sep and want_provider != lowered_provider:
                continue
            needle = substr if sep else key
            rank = (len(needle), bool(sep))  # the longest match wins; provider:substr over a bare substr
            if needle and needle in lowered_model and (best is None or rank > best[0]):
                best = (rank, value)
        if best is None:
            return None
        try:
            value = float(best[1])
        except (TypeError, ValueError):
            logger.warning("stowage: compression.model_thresholds value %r is not a number; ignored", best[1])
            return None
        if value <= 0 or (1 < value and not self.context_length):
            return None
        return value if value <= 1 else min(1.0, value / self.context_length)

    def should_defer_preflight_to_real_usage(self, rough_tokens: int, **_: Any) -> bool:
        """Skip the rough pre-turn estimate while the provider's real count is pending.

        Right after a compaction the host's rough estimate (chars/4 plus tool
        schemas) can stay over the threshold even though the real prompt fits;
        acting on it compacts again for nothing (a thrash loop).  The next API
        call reports the real count, which the pre-API and post-tool checks
        use, and a real overflow still reaches ``compress`` through the host's
        overflow recovery.
        """
        if self.awaiting_real_usage_after_compression:
            return True
        last = self.view.stats.last
        if not self.view.settings.enabled or not last or not self.threshold_tokens or self._host_selects_context:
            # A host that calls select_context (0.20+) estimates the selected request: already lean.
            return False
        # Older hosts estimate the whole history; what is sent is leaner by what
        # the view saved on the last request (it only grows until a compaction).
        return _as_int(rough_tokens) - int(last.get("saved_tokens") or 0) < self.threshold_tokens

    def record_completed_compaction(self, used_fallback: bool = False, **_: Any) -> None:
        """Host callback after a compaction boundary commits; arms the verdict.

        0.20+ also pass ``feasibility_skip``; unknown keywords are accepted (a
        TypeError here discards the compacted transcript on 0.20.1 and crashes
        the turn on 0.22.2).
        """
        target = self._routed()
        if target is not self:
            return target.record_completed_compaction(used_fallback)
        self.governor.verify_pending = True

    def prepare_ahead(self, messages: Any) -> None:
        """At turn end: start the next compaction's summary once the request nears the trigger.

        ``messages`` is the live history (the ``post_llm_call`` hook's
        ``conversation_history``, or ``on_turn_complete``'s messages), the
        list ``compress()`` will later receive.  A pending preparation that
        is still a prefix of it is kept (one summary call per compaction).
        """
        target = self._routed()
        if target is not self:
            return target.prepare_ahead(messages)
        c = self.settings.compaction
        if not isinstance(messages, list) or not should_prepare(self.last_prompt_tokens, self.threshold_tokens,
                                                                  c.prepare_at):
            return
        if self.summary_model is None or self._compress_gets_memory or self.governor.backoff_reason() is not None:
            return
        summarize = self._summarizer()
        if summarize is None:
            return  # cooling down: the compaction will use the fallback summary anyway
        with self._lock:
            try:
                if self.ahead.keeps(messages):
                    return
                self.counter.calibrate(messages[-CALIBRATION_MESSAGES:])  # as compress() does: the same window
                job = build_job(messages, self._plan(messages), self.counter.estimate_message)
            except Exception:  # noqa: BLE001 - preparing ahead must never cost the turn anything
                logger.exception("stowage: could not prepare the next summary ahead")
                return
            if job is not None:
                self.ahead.start(job, summarize, on_failure=self.governor.record_summary_failure)

    def has_content_to_compress(self, messages: list[Message], **_: Any) -> bool:
        if not isinstance(messages, list):
            return False
        conversation = [m for m in messages if isinstance(m, dict) and m.get("role") not in ("system", "developer")]
        return len(conversation) > 2 or any(
            m.get("role") == "tool" and len(message_text(m)) >= self.settings.compaction.prune_min_chars
            for m in conversation[:-1])

    # -- compaction -----------------------------------------------------------
    def compress(self, messages: list[Message], current_tokens: int | None = None, focus_topic: str | None = None,
                 force: bool = False, memory_context: str = "", *, bypass_cooldown: bool = False,
                 **extra: Any) -> list[Message]:
        """One compaction; returns the input list itself when nothing changed.

        Thread-safe: newer hosts run it on a worker thread with a private
        snapshot of the messages (``compression.context_timeout_seconds``);
        one compaction runs at a time per engine and the caller's list is
        never mutated.  ``bypass_cooldown`` (newer hosts, after a proven
        provider overflow) tries the summary model even while it cools down.
        Unknown keyword arguments from a future host are ignored.
        """
        target = self._routed()
        if target is not self:
            return target.compress(messages, current_tokens, focus_topic, force, memory_context,
                                   bypass_cooldown=bypass_cooldown, **extra)
        if extra:
            logger.debug("stowage: compress() ignores arguments this version does not know: %s", sorted(extra))
        with self._lock:
            result = self._compress(messages, current_tokens, focus_topic, force, memory_context, bypass_cooldown)
        self.lossless.pin_request(result)  # the size cap spares what the compacted history points to, no more
        return result

    def _compress(self, messages: list[Message], current_tokens: int | None, focus_topic: str | None,
                  force: bool, memory_context: str, bypass_cooldown: bool) -> list[Message]:
        self._reset_flags()
        if not isinstance(messages, list) or not messages:
            return messages
        newest = last_index(messages, is_real_user_turn)
        self.governor.observe_turn_key(message_text(messages[newest]) if newest >= 0 else None)
        overflowing = bool(current_tokens and self.context_length and current_tokens >= self.context_length)
        if not force and not overflowing:
            if self.governor.compacted_this_turn():
                logger.info("stowage: already compacted this turn; skipping (use /compress to force)")
                return messages
        if force or bypass_cooldown:
            self.governor.clear_cooldown()
        deadline = SummaryDeadline(self.settings.compaction.summary_timeout_seconds)
        summarize = self._summarizer(deadline)
        self.counter.calibrate(messages[-CALIBRATION_MESSAGES:])
        self._compress_gets_memory = self._compress_gets_memory or bool(memory_context)
        self.ahead.begin_compaction()
        outcome = compact(
            messages, self._plan(messages, force=force), count=self.counter.estimate_message,
            summarize=summarize, focus_topic=focus_topic or None, memory_context=memory_context or "",
            archive=self.archive or self.lossless.archive(), cooldown_reason=COOLDOWN_REASON,
            # on cooldown no model summary is used at all, so neither is the shorter prepared window
            prepared=self.ahead if self.settings.compaction.prepare_at > 0 and summarize is not None else None,
            deadline=deadline)
        if outcome.changed:
            self.ahead.discard("the history it was written for was compacted")
        result = self._apply(outcome, messages, current_tokens, focus_topic, force, model_called=summarize is not None)
        self._saw(result, "compaction")  # what the history is now, for the next preview
        return result

    def _plan(self, messages: list[Message], *, force: bool = False) -> CompactionPlan:
        """The numbers of this compaction.

        A forced compaction (``/compress``) keeps only the tail's message
        floor: the user asked to compact now, and a tail sized by the token
        budget may already hold everything since the last compaction.
        """
        c = self.settings.compaction
        return CompactionPlan(
            # after a compaction the summary carries the early context (compact() also
            # sees summaries in the history, e.g. after a resume)
            protect_first_n=0 if self.compression_count > 0 else c.protect_first_n,
            tail_budget_tokens=0 if force else self.tail_budget_tokens,
            tail_min_messages=c.protect_last_n,
            context_length=self.context_length,
            summary_max_tokens=c.summary_max_tokens,
            abort_on_summary_failure=c.abort_on_summary_failure,
            profile=c.provider_profile,
            prune=PruneSettings(min_chars=c.prune_min_chars, max_args_chars=c.max_tool_args_chars),
            # a prepared window may leave a longer tail: by what the request grew since it was prepared
            prepared_tail_tokens=self.tail_budget_tokens + int(self.threshold_tokens * max(0.0, 1 - c.prepare_at)),
        )

    def _summarizer(self, deadline: SummaryDeadline | None = None) -> Callable[[str], str] | None:
        """The summary call, or None while the model cools down; a compaction's passes its deadline on."""
        if self.governor.cooldown_remaining() > 0:
            return None
        model = self.summary_model
        if model is None:
            def unavailable(prompt: str) -> str:
                raise SummaryFailure("no_provider", "no summary model is attached to the engine")
            return unavailable
        runtime = dict(self.runtime)
        configured = self.settings.compaction.summary_timeout_seconds or None

        def call(prompt: str) -> str:
            return model(prompt, {**runtime, TIMEOUT_KEY: deadline.call_timeout() if deadline else configured})
        return call

    def _apply(self, outcome: CompactionOutcome, messages: list[Message], current_tokens: int | None,
               focus_topic: str | None, force: bool, *, model_called: bool) -> list[Message]:
        self.last_outcome = outcome
        model_failed = (bool(outcome.summary_error) and model_called and outcome.failure is not None
                        and not outcome.failure.is_ours)  # our bug, not the model's
        if model_failed:
            self.governor.record_summary_failure()
            self._last_aux_model_failure_model = self.runtime.get("model") or None
            self._last_aux_model_failure_error = outcome.summary_error
        elif outcome.changed and not outcome.fallback_used:
            self.governor.record_summary_success()
        if outcome.aborted:
            self._last_compress_aborted = True
            self._last_summary_error = outcome.summary_error
            self._log(outcome, messages, current_tokens, focus_topic, force, "aborted")
            return messages
        if not outcome.changed:
            self.governor.record_noop()
            self._log(outcome, messages, current_tokens, focus_topic, force, "no-op")
            return messages
        self.compression_count += 1
        self.governor.record_compaction()
        self._last_compression_made_progress = True
        self._last_summary_fallback_used = outcome.fallback_used
        self._last_summary_error = outcome.summary_error
        self._log(outcome, messages, current_tokens, focus_topic, force, "fallback" if outcome.fallback_used else "compacted")
        self._record_summary(outcome, self.compaction_log[-1])
        return outcome.messages

    def _record_summary(self, outcome: CompactionOutcome, entry: dict[str, Any]) -> None:
        """Keep the summary as it went into the history, where ``stowage summary`` reads it."""
        if outcome.summary_body is None:
            return  # only outputs were pruned: there is no summary to show
        fields = ("at", "result", "forced", "focus_topic", "summary_error", "tokens_before", "tokens_after",
                  "messages_before", "messages_after", "window_messages", "window_tool_outputs", "pruned_outputs",
                  "window_reference")
        append_summary(self.lossless.root, self.session_id, {
            "compaction": self.compression_count, **{k: entry.get(k) for k in fields},
            "fallback_used": outcome.fallback_used, "model": self.runtime.get("model") or None,
            "window_handle": window_handle(outcome.window_reference), "body": outcome.summary_body})

    def _log(self, outcome: CompactionOutcome, messages: list[Message], current_tokens: int | None,
             focus_topic: str | None, force: bool, result: str) -> None:
        entry = {"result": result, "at": round(time.time(), 3), "focus_topic": focus_topic, "forced": force,
                 "summary_error": outcome.summary_error, "window_reference": outcome.window_reference,
                 **vars(outcome.stats), "phase_ms": dict(outcome.stats.phase_ms),  # flat: asdict() recurses
                 "tokens_before": current_tokens or None,
                 "prepared_ahead": bool(self.ahead.last_use and self.ahead.last_use.get("prepared_ahead")),
                 "ahead_wait_ms": (self.ahead.last_use or {}).get("wait_ms"),
                 "tokens_after": self._tokens_after(outcome, messages, current_tokens) if outcome.changed else None}
        self.compaction_log.append(entry)
        del self.compaction_log[:-50]
        logger.info("stowage: compaction %s: %s", result,
                    {k: entry[k] for k in ("messages_before", "messages_after", "pruned_outputs", "window_messages")})

    def _tokens_after(self, outcome: CompactionOutcome, messages: list[Message], current_tokens: int | None) -> int:
        """The request after a compaction, on the same basis as ``current_tokens`` (the host's figure).

        The host measures the whole request (system prompt and tool schemas
        included; Hermes prints ``~before -> ~after`` that way), the messages
        are all a compaction changes: the rest is carried over unchanged.
        """
        after = sum(map(self.counter.estimate_message, outcome.messages))
        if not current_tokens:
            return after
        before = sum(self.counter.estimate_message(m) for m in messages if isinstance(m, dict))
        return after + max(0, current_tokens - before)

    # -- store: spill and read-back tools --------------------------------------
    def attach_store_home(self, hermes_home: Any) -> None:
        """Keep blobs under ``hermes_home`` (or the configured ``store.path``)."""
        self.lossless.attach(hermes_home)

    def spill_tool_result(self, tool_name: str, arguments: Any, result: Any) -> str | None:
        """The preview replacing an oversized tool result, or None to keep it."""
        return self.lossless.spill(tool_name, arguments, result, self.counter.count_text)

    def get_tool_schemas(self, **_: Any) -> list[dict[str, Any]]:
        schemas = self.lossless.tool_schemas()
        if self.tool_search.mode != "off" and self.tool_search_unavailable is None:
            schemas += self.tool_search.bridge_schemas(self.settings.tool_search.search_limit)
        return schemas

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        target = self._routed()
        if target is not self:
            return target.handle_tool_call(name, args, **kwargs)
        if name in BRIDGE_NAMES:
            return self.tool_search.handle(name, args, self.dispatch_underlying)
        return self.lossless.handle_tool(name, args)

    def dispatch_underlying(self, name: str, arguments: dict[str, Any]) -> str:
        """Run a tool through the host's dispatch; the Hermes subclass provides it."""
        return json.dumps({"error": f"this host cannot run {name} through the bridge; call it directly"})

    # -- tool search ------------------------------------------------------------
    def disable_tool_search(self, reason: str) -> None:
        """This host cannot run tool search: no bridges, and ``reason`` in status and the log."""
        self.tool_search_unavailable = reason

    def _tool_search_status(self) -> dict[str, Any]:
        status = self.tool_search.status()
        if self.tool_search_unavailable is not None:
            status.update(active=False, available=False, reason=self.tool_search_unavailable)
        return status

    def shape_request(self, tools: list[Any], messages: list[dict[str, Any]], **host: Any) -> ShapedRequest:
        """One provider request as it should be sent: tool deferral, then the lean view.

        ``tools`` may be empty (no tool search then); the history passed in
        is never changed.
        """
        self._saw(messages, "request")
        if tools:
            shaped = self.tool_search.shape_request(tools, messages, context_length=self.context_length, **host)
        else:
            shaped = ShapedRequest(list(tools), messages, None)
        if self.view.settings.enabled and not self._host_selects_context:
            shaped = dataclasses.replace(shaped, messages=self._lean(shaped.messages))
        elif not self._host_selects_context:
            self.lossless.pin_request(shaped.messages)
            self._measure_unshaped(shaped.messages)
        return shaped

    def select_context(self, request_messages: list[Message], *, conversation_messages: Any = None,
                       incoming_message: Any = None, budget_tokens: int = 0, **_: Any) -> list[Message] | None:
        """Newer hosts (0.20+): the lean view through the engine hook instead of the middleware.

        Called per provider request with a copy of its messages; None leaves
        them unchanged.  Once the host calls it, the ``llm_request``
        middleware only defers tools, so the view is applied exactly once.
        """
        self._host_selects_context = True
        if isinstance(request_messages, list):
            self._saw(request_messages, "request")
        if not isinstance(request_messages, list) or not request_messages:
            return None
        if not self.view.settings.enabled:
            self.lossless.pin_request(request_messages)
            self._measure_unshaped(request_messages)
            return None
        try:
            lean = self._lean(request_messages)
        except Exception:  # noqa: BLE001 - the host would log it; say why ourselves and send unchanged
            logger.exception("stowage: the lean view failed; the request goes unchanged")
            return None
        return lean if lean != request_messages else None

    def _measure_unshaped(self, messages: list[Message]) -> None:
        """The view off: the request goes as the host built it, and what spilling saved is still counted."""
        try:
            self.view.measure(messages, self.lossless if self.lossless.store is not None else None)
        except Exception:  # noqa: BLE001 - figures must never cost the session anything
            logger.exception("stowage: could not measure the request")
            return
        self._log_request()

    def _log_request(self) -> None:
        last = self.view.stats.last
        # "full": the same history unshaped (spilled outputs whole), the base of every "saved" figure
        self.request_log.append({"at": round(time.time(), 3), "full": _as_int(last.get("unshaped_tokens")),
                                 "sent": _as_int(last.get("sent_tokens"))})
        del self.request_log[:-REQUEST_LOG]

    def _lean(self, messages: list[Message]) -> list[Message]:
        keeper = self.lossless if self.lossless.store is not None else None
        self.lossless.pin_request(messages)  # while the view renders, the cap spares all it may point to
        outcome = self.view.apply(messages, keeper)
        self.lossless.pin_request(outcome.messages)
        self.last_request = (messages, outcome.messages)
        if keeper is None and outcome.unstored:
            self.view.stats.last_error = self.lossless.error or "the Stowage store is not available"
        self._log_request()
        return outcome.messages

    # -- sessions -------------------------------------------------------------
    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        guest = self._guest_for_start(session_id, kwargs)
        if guest is not None:
            guest.on_session_start(session_id, **kwargs)
            return
        if not self._unavailable_logged:
            # said again once the host's own log is set up (plugin discovery logs to stderr only)
            self._unavailable_logged = True
            if self.tool_search_unavailable and self.tool_search.mode != "off":
                logger.warning("stowage: %s", self.tool_search_unavailable)
            if self.host_support and (self.host_support.get("unavailable") or not self.host_support.get("supported")):
                logger.warning("stowage: %s", self.host_support.get("note"))
        previous = self.session_id
        self.session_id = session_id
        self._session_live = True
        self._owner_thread = threading.get_ident()
        if kwargs.get("hermes_home"):
            self.attach_store_home(kwargs["hermes_home"])
        self.lossless.start(session_id, old_session_id=kwargs.get("old_session_id"),
                            boundary_reason=kwargs.get("boundary_reason"))
        if kwargs.get("boundary_reason") == "compression":
            return  # same conversation continues after our own compaction
        if previous is not None and previous != session_id:
            self._reset_session_state()

    def on_session_end(self, session_id: str, messages: list[Message] | None = None, **_: Any) -> None:
        with self._lock:
            guest = self._guests.pop(session_id, None)
            if guest is not None:
                self._guest_threads = {t: s for t, s in self._guest_threads.items() if s != session_id}
        if guest is not None:
            guest.on_session_end(session_id, messages or [])
            return
        if session_id == self.session_id:
            self._session_live = False
            self.governor.verify_pending = False
            self.ahead.discard("session ended")
            self.publish_status()
            self.lossless.end(session_id)

    def on_session_reset(self, **_: Any) -> None:
        target = self._routed()
        if target is not self:
            return target.on_session_reset()
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0
        self._reset_session_state()

    def _reset_session_state(self) -> None:
        self.ahead.discard("session reset")
        self.request_log = []
        self.last_seen = self.last_request = None
        self.governor.reset()
        self._reset_flags()
        self.awaiting_real_usage_after_compression = False
        self.last_outcome = None
        self.view = LeanView(self.view.settings, self.counter.count_message)

    def end_turn(self) -> None:
        """Per-turn hook from the plugin glue."""
        self.governor.end_turn()
        self.publish_status()

    def publish_status(self) -> None:
        """Leave this session's figures where ``stowage status`` in another process reads them."""
        try:
            data = self.get_status()
        except Exception:  # noqa: BLE001 - figures must never cost the session anything
            logger.exception("stowage: could not gather the session status")
            return
        write_session_status(self.lossless.root, self.session_id, data)

    # -- dry run ----------------------------------------------------------------
    def _saw(self, messages: list[Message], source: str) -> None:
        """Remember the newest history (a shallow copy: the messages themselves are the host's)."""
        self.last_seen = SeenMessages(list(messages), time.time(), source)

    def preview(self) -> CompactionPreview | None:
        """What a compaction of the last history seen would do now, without a model call or a write.

        Hermes 0.19.0 gives a slash command no agent and no messages, so the
        preview works on the newest history the engine saw (the last provider
        request or compaction); the result says how fresh that is.  None
        before the engine has seen any history.
        """
        target = self._routed()
        if target is not self:
            return target.preview()
        seen = self.last_seen
        if seen is None:
            return None
        conversation = [m for m in seen.messages if isinstance(m, dict)]
        self.counter.calibrate(conversation[-CALIBRATION_MESSAGES:])  # as compress() does: the same estimates
        would, reason = self.should_compress_info(self.last_prompt_tokens)
        if not would and reason is None:
            reason = f"below_threshold:{max(self.last_prompt_tokens, 0)}<{self.threshold_tokens}"
        return preview_compaction(
            seen, self._plan(conversation), count=self.counter.estimate_message,
            last_prompt_tokens=max(self.last_prompt_tokens, 0), threshold_tokens=self.threshold_tokens,
            would_compact=would, reason=reason, compactions_so_far=self.compression_count)

    # -- status ---------------------------------------------------------------
    def get_status(self, **_: Any) -> dict[str, Any]:
        last_prompt = self.last_prompt_tokens if self.last_prompt_tokens > 0 else 0
        return {
            "last_prompt_tokens": last_prompt,
            "threshold_tokens": self.threshold_tokens,
            "trigger": trigger_status(self.threshold_key, self.threshold_share, self.threshold_tokens,
                                      self.context_length),
            "context_length": self.context_length,
            "usage_percent": min(100, last_prompt / self.context_length * 100) if self.context_length else 0,
            "compression_count": self.compression_count,
            "engine": self.name,
            "tokenizer": self.counter.backend,
            "tail_budget_tokens": self.tail_budget_tokens,
            "governor": self.governor.snapshot(),
            "store": self.lossless.status(),
            "tool_search": self._tool_search_status(),
            "view": self.view.status(),
            "ahead": {**self.ahead.status(), "prepare_at": self.settings.compaction.prepare_at,
                      "last": self.ahead.last_use},
            "last_compaction": self.compaction_log[-1] if self.compaction_log else None,
            "compactions": [{k: entry.get(k) for k in _COMPACTION_FIELDS} for entry in self.compaction_log[-10:]],
            "summary": {"last_error": self._last_summary_error, "fallback_used": self._last_summary_fallback_used},
            "requests": list(self.request_log),
            "host": self.host_support,
        }


REQUEST_LOG = 400  # requests kept for the dashboard's timeline (oldest dropped)
_COMPACTION_FIELDS = ("result", "at", "forced", "summary_error", "window_reference", "tokens_before", "tokens_after",
                      "messages_before", "messages_after", "pruned_outputs", "prepared_ahead", "ahead_wait_ms")


def _as_int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
