"""One agent's session: its parts and figures (:class:`SessionParts`), the base of ``SessionState``.

The host deep-copies the registered engine for every agent (0.18.0+), and a
shared engine on older hosts makes a guest engine for another agent.  What
such a copy gets is defined here, by construction: :meth:`SessionParts.for_another_agent`
is a fresh instance (the store *location* and the tokenizer carried over,
nothing of the session), so a new per-session attribute added to this class
is per session without anyone listing it.  What a copy shares is what lives
on the engine object itself (settings, the summary model, the host's facts,
the model binding), handed to the session's methods as :class:`.limits.Limits`.

The session's behaviour sits in the modules of ``SessionState``'s bases
(compaction, preparation ahead, request shaping, status); what they share is
here: the lifecycle, the usage figures, the compaction's plan and the
summary call.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Self

from ...tool_search.session import ToolSearchSession
from ..ahead import AheadSummaries
from ..chat.messages import Message
from ..chat.tokens import TokenCounter
from ..compaction.inputs import CompactionOutcome, CompactionPlan
from ..compaction.preview import SeenMessages
from ..compaction.prune import PruneSettings
from ..config.settings import Settings
from ..policy.decision import Asked, Pressure
from ..policy.fixed_part import FixedPart
from ..policy.governor import Governor, GovernorPolicy
from ..policy.request_count import SentRequest, conversation_of, judged_request
from ..policy.rules import OverTrigger, passes_ceiling
from ..policy.thresholds import RoughBasis, ToolsTokens, as_int, defer_preflight, tail_budget_tokens
from ..records.compaction_record import CompactionRecord
from ..records.host_facts import HostFacts
from ..records.session_files import VECTOR_FOLDER
from ..records.session_status import RequestFigures, SessionStatus
from ..records.status_file import read_session_status
from ..records.summary_log import carry_summaries
from ..store_session.session import StoreSession
from ..summary.deadline import SummaryDeadline
from ..summary.egress import gated
from ..summary.reply import SummaryFailure
from ..view import LeanView, ViewSettings
from .limits import Limits
from .tool_search_embeddings import DenseLegSource

logger = logging.getLogger(__name__)

CALIBRATION_MESSAGES = 40  # the newest messages the token estimate is calibrated on


@dataclass
class CompactionFlags:
    """What the last ``compress()`` did, as the host reads it (the engine's ``_last_*`` attributes)."""

    made_progress: bool = False
    aborted: bool = False
    summary_error: str | None = None
    fallback_used: bool = False
    aux_failure_model: str | None = None
    aux_failure_error: str | None = None


@dataclass
class SessionParts:
    store: StoreSession  # the session's use of the blob store: spill, archive, fetch tools
    counter: TokenCounter
    tool_search: ToolSearchSession
    view: LeanView
    governor: Governor
    ahead: AheadSummaries  # the next summary, written ahead
    session_id: str | None = None
    # host-read figures (the engine exposes them under these names)
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    # the host's preflight log line reads it when the preflight is deferred (0.19.0 turn_context.py)
    last_real_prompt_tokens: int = 0
    compression_count: int = 0
    awaiting_real_usage_after_compression: bool = False
    flags: CompactionFlags = field(default_factory=CompactionFlags)
    compaction_log: list[CompactionRecord] = field(default_factory=list)
    request_log: list[RequestFigures] = field(default_factory=list)  # per request: full history and as sent
    last_seen: SeenMessages | None = None  # the newest history the session saw, for /stowage preview
    # (history, as sent) of the newest request the view shaped: answers re-reads (reread.py)
    last_request: tuple[list[Message], list[Message]] | None = None
    # the view's cache anchors in the newest lean request: (messages from its end, the message there)
    anchors_from_end: tuple[tuple[int, Message], ...] = ()
    last_outcome: CompactionOutcome | None = None
    rough_basis: RoughBasis = field(default_factory=RoughBasis)  # the host's rough figure at the last real usage
    tools_tokens: ToolsTokens = field(default_factory=ToolsTokens)  # of the request's tool list (the view's room)
    fixed_part: FixedPart = field(default_factory=FixedPart)  # system prompt + tool schemas of the newest request
    turn_end_full: int = 0  # the whole history's tokens at the last turn end (how much a turn grows it)
    # select_context ran in this turn: the host's pressure questions since are about the selected request (0.20+
    # pre-API gate), while the first of a turn is its preflight over the whole history (turn_context.py)
    turn_selected: bool = False
    over_trigger: OverTrigger = field(default_factory=OverTrigger)  # the requests a compaction lets go on
    # the session's earlier runs (a resumed session: its status file as they left it), None for a first run
    earlier: SessionStatus | None = None
    sent_request: SentRequest = field(default_factory=SentRequest)  # the newest request as sent, counted
    # one compaction or preparation at a time (held while either reads and writes the session's history figures)
    lock: AbstractContextManager[Any] = field(default_factory=threading.RLock, repr=False, compare=False)

    @classmethod
    def new(cls, settings: Settings, *, counter: TokenCounter | None = None, store: StoreSession | None = None) -> Self:
        c = settings.compaction
        if counter is None:
            counter = TokenCounter(settings.tokenizer.encoding, allow_download=settings.tokenizer.allow_download)
        store = store if store is not None else StoreSession(settings)
        return cls(
            store=store,
            counter=counter,
            tool_search=ToolSearchSession(
                settings.tool_search,
                counter.count_text,
                dense=DenseLegSource(settings.tool_search, lambda: store.root),
                picks_folder=lambda: store.root / VECTOR_FOLDER if store.root is not None else None,
            ),
            view=LeanView(ViewSettings.from_settings(settings), counter.count_message),
            governor=Governor(GovernorPolicy(c.max_ineffective, c.backoff_turns, c.failure_cooldown_seconds)),
            # a compaction waits for a running preparation within its one summary deadline
            ahead=AheadSummaries(),
        )

    def for_another_agent(self, settings: Settings) -> Self:
        """A fresh state for another agent's engine: the same store folder and tokenizer, nothing else."""
        return self.new(settings, counter=copy.deepcopy(self.counter), store=self.store.relocated())

    # -- the session's lifecycle ----------------------------------------------------------
    def start(
        self,
        session_id: str,
        *,
        hermes_home: Any = None,
        old_session_id: str | None = None,
        boundary_reason: str | None = None,
    ) -> None:
        """This agent's session starts; another id (not our own compaction's) is another conversation.

        Another conversation starts afresh, or where the earlier runs of that
        session left it (a resume: :meth:`resume_earlier_runs`).
        """
        previous = self.session_id
        self.session_id = session_id
        if hermes_home:
            self.store.attach(hermes_home)
        self.store.start(session_id, old_session_id=old_session_id, boundary_reason=boundary_reason)
        if boundary_reason == "compression" and previous is not None and previous != session_id:
            carry_summaries(self.store.root, old_session_id or previous, session_id)  # under a new id
        if boundary_reason == "compression" or previous == session_id:
            return  # the same conversation goes on (after our own compaction, or started twice)
        if previous is not None:
            self.reset_for_new_session()
        self.resume_earlier_runs()

    def resume_earlier_runs(self) -> None:
        """Carry on from the figures this session's earlier runs left in the store (none: a first run).

        The status shows them extended by this run's (``resumed_status.continued``);
        the compaction count is restored here, as the host reads it and numbers
        the summaries by it.
        """
        root, session_id = self.store.root, self.session_id
        earlier = read_session_status(root, session_id) if root is not None and session_id else None
        self.earlier = earlier
        self.compression_count = earlier.compression_count if earlier is not None else 0
        if earlier is not None:
            logger.info(
                "stowage: session %s resumed (run %d): %d compaction(s), %d request(s), %d spill(s) so far",
                session_id,
                max(earlier.runs, 1) + 1,
                earlier.compression_count,
                len(earlier.requests),
                earlier.store.spills,
            )

    def record_usage(self, usage: Any, threshold_tokens: int, history: Any = None) -> None:
        """The host's usage after an API call; the first real count after a compaction is the verdict on it.

        ``history`` is the host's live history at that moment (what the request carried): on a host without
        request middleware (0.13.0 - 0.16.x) no request was counted as sent, so the provider's count of this one,
        with the history it carried, is the basis the next request is judged on (:meth:`judged_request`).
        """
        usage = usage if isinstance(usage, dict) else {}
        self.governor.api_call()
        self.store.response_received()  # a new tool batch: the size cap stops sparing the one before the last
        prompt = as_int(usage.get("prompt_tokens"))
        if prompt <= 0:
            # a provider without usage (the host passes {} while it awaits the verdict on a compaction): keep the
            # host's sentinel, but no real count is coming; latched, the flag would defer every preflight for good
            self.awaiting_real_usage_after_compression = False
            return
        self.last_prompt_tokens = self.last_real_prompt_tokens = prompt
        if self.sent_request.tokens > 0 and self.sent_request.real <= 0:  # the request the session counted as sent
            self.sent_request = dataclasses.replace(self.sent_request, real=prompt)
        elif isinstance(history, list):  # no request was counted since the last usage: no middleware
            self.sent_request = SentRequest(prompt, len(conversation_of(history)), real=prompt)
        self.rough_basis.usage_arrived()
        self.over_trigger.sent(threshold_tokens > 0 and prompt >= threshold_tokens)
        self.last_completion_tokens = as_int(usage.get("completion_tokens"))
        self.last_total_tokens = as_int(usage.get("total_tokens")) or prompt + self.last_completion_tokens
        self.awaiting_real_usage_after_compression = False
        if self.governor.verify(prompt, threshold_tokens) is False:
            logger.warning(
                "stowage: the last compaction left %d prompt tokens (threshold %d); ineffective streak %d",
                prompt,
                threshold_tokens,
                self.governor.ineffective_streak,
            )

    def defer_preflight(
        self, rough_tokens: int, threshold_tokens: int, host_selects_context: bool, history: Any = None
    ) -> bool:
        """Whether the host's rough pre-turn estimate should wait for the real count (``thresholds.defer_preflight``).

        Right after a compaction the rough figure can stay over the threshold
        although the real prompt fits; with the view on, it can be over only
        by what the view leaves out.  The figure is remembered as the basis of
        the next estimate (:class:`~..policy.thresholds.RoughBasis`).  Never
        deferred when the request as it will be sent, counted with the
        tokenizer (:meth:`judged_request`; ``history`` the host's live
        history), reaches the threshold: a deferred check lets the request go.
        """
        self.rough_basis.ask(rough_tokens)
        counted = self.judged_request(history)
        if counted is not None and threshold_tokens > 0 and counted >= threshold_tokens:
            return False
        return self.awaiting_real_usage_after_compression or defer_preflight(
            rough_tokens,
            threshold_tokens,
            self.view.stats.last_request,
            view_enabled=self.view.settings.enabled,
            host_selects_context=host_selects_context and self.turn_selected,
            estimate=self.rough_basis.estimate(rough_tokens, self.last_prompt_tokens),
        )

    def judged_request(self, history: Any = None, *, provider_count: bool = True) -> int | None:
        """The next request as it will be sent, counted with the tokenizer (``request_count.judged_request``).

        ``history`` is the host's live history when the call brings it: the
        messages since the last request are counted (each once, cached);
        without it, the last request's own size.  None before any request and
        right after a compaction.
        """
        conversation = conversation_of(history) if isinstance(history, list) else None
        return judged_request(
            self.sent_request, conversation, self.counter.count_message, provider_count=provider_count
        )

    def passes_ceiling(self, messages: Any, limits: Limits, *, provider_count: bool = True) -> bool:
        """The request ``messages`` (the live history) make would pass the ceiling, counted with the tokenizer
        (``provider_count`` False: on the tokenizer's count of the last request, not the provider's)."""
        counted = self.judged_request(messages, provider_count=provider_count)
        return counted is not None and passes_ceiling(counted, limits.context_length)

    def note_sent(self, messages: list[Message], threshold_tokens: int, inlined_tokens: int = 0) -> None:
        """A request goes out as the view shaped it: count it (the tokenizer's figures of the view and the tools).

        The previous request got no usage back (a provider without usage):
        its own count stands in for the provider's, so the requests over the
        trigger are still counted (:class:`~..policy.rules.OverTrigger`) and such
        a provider still compacts at the trigger.
        """
        previous = self.sent_request
        if previous.tokens > 0 and previous.real <= 0:
            self.over_trigger.sent(threshold_tokens > 0 and previous.tokens >= threshold_tokens)
        last = self.view.stats.last_request
        self.sent_request = SentRequest(
            tokens=(last.sent_tokens if last is not None else 0) + self.tools_tokens.tokens + inlined_tokens,
            conversation_messages=len(conversation_of(messages)),
        )

    def request_as_sent(self, host: HostFacts, approx: int, history: Any = None) -> int:
        """The host's figure ``approx`` for the next request, on the trigger's basis: the request as sent.

        At least the tokenizer's count of it (:meth:`judged_request`; ``history``
        the host's live history): the host's figure is characters/4, and the
        real count is missing until usage comes back, or for good.

        A host's preflight (and an older host's pre-API check) estimates the
        whole history, while the view sends less: the request is the last real
        prompt plus the rough growth since (:class:`~..policy.thresholds.RoughBasis`).
        The last *real* prompt: a preflight that is not deferred raises
        ``last_prompt_tokens`` to its rough figure, which would count the whole
        history twice.  A 0.20+ host's pre-API figure is of the selected request
        already, and the check after a tool batch passes the last real prompt.
        0 right after a compaction (the host's -1) and before any usage.
        """
        counted = self.judged_request(history) or 0
        return max(self._rough_request_as_sent(host, approx), counted)

    def _rough_request_as_sent(self, host: HostFacts, approx: int) -> int:
        last = self.last_real_prompt_tokens if self.last_prompt_tokens > 0 else 0
        if approx <= 0 or approx == last:
            return last  # none, or the real figure itself (the host's check after a tool batch passes it)
        if self.view.settings.enabled and not (host.selects_context and self.turn_selected):
            estimate = self.rough_basis.estimate(approx, last)
            return estimate if estimate is not None else last
        return max(approx, last)

    def pressure(self, asked: Asked, limits: Limits, host: HostFacts | None, tokens: int, **figures: Any) -> Pressure:
        """What :func:`..policy.decision.decide` reads, gathered from the session now (``figures``: the asker's own).

        ``host`` None: the dry run, where no host is around.  Reads only: the
        governor's back-off reason clears an expired back-off, as any read of it does.
        """
        governor, ahead, over = self.governor, self.ahead, self.over_trigger
        return Pressure(
            asked,
            tokens,
            threshold=limits.threshold_tokens,
            window=limits.context_length,
            prepare_at=limits.settings.compaction.prepare_at,
            hook_driven=governor.hook_driven,
            compacted_this_turn=governor.compacted_this_turn(),
            backoff=governor.backoff_reason(),
            cooldown_s=governor.cooldown_remaining(),
            model_attached=limits.summary_model is not None,
            memory_in_prompt=host is not None and host.compress_gets_memory,
            hook_brings_history=host is not None and host.history_before_requests,
            ready=ahead.ready(),
            writing=ahead.writing(),
            pending=ahead.pending is not None,
            over_requests=over.requests,
            over_started=over.started,
            awaiting=over.awaiting,
            **figures,
        )

    def saw(self, messages: list[Message], source: str) -> None:
        """Remember the newest history (a shallow copy: the messages themselves are the host's)."""
        self.last_seen = SeenMessages(list(messages), time.time(), source)

    # -- what a compaction and a preparation ahead share -----------------------------------
    def tail_budget_tokens(self, limits: Limits) -> int:
        """The tokens of newest history a compaction keeps verbatim (``thresholds.tail_budget_tokens``)."""
        return tail_budget_tokens(limits.settings, self.view.settings, limits.threshold_tokens)

    def compaction_plan(self, limits: Limits, *, force: bool = False, to_fit: bool = False) -> CompactionPlan:
        """The numbers of a compaction now.

        A forced compaction (``/compress``) keeps only the tail's message floor:
        the user asked to compact now, and a tail sized by the token budget may
        already hold everything since the last compaction.  One whose content
        itself would pass the ceiling (``to_fit``: a large paste) keeps no
        longer tail for a prepared window: a short prepared prefix would leave
        the request over the window, and a host that sees no progress gives up.
        """
        c = limits.settings.compaction
        tail = self.tail_budget_tokens(limits)
        return CompactionPlan(
            # after a compaction the summary carries the early context (compact() also
            # sees summaries in the history, e.g. after a resume)
            protect_first_n=0 if self.compression_count > 0 else c.protect_first_n,
            tail_budget_tokens=0 if force else tail,
            tail_min_messages=c.protect_last_n,
            context_length=limits.context_length,
            summary_max_tokens=c.summary_max_tokens,
            abort_on_summary_failure=c.abort_on_summary_failure,
            profile=c.provider_profile,
            prune=PruneSettings(min_chars=c.prune_min_chars, max_args_chars=c.max_tool_args_chars),
            # a prepared window may leave a longer tail: by what the request grew since it was prepared
            prepared_tail_tokens=tail + (0 if to_fit else int(limits.threshold_tokens * max(0.0, 1 - c.prepare_at))),
        )

    def summarizer(self, limits: Limits, deadline: SummaryDeadline | None = None) -> Callable[[str], str]:
        """The summary call for this session (whether to call it at all is the decision's: not while it cools down).

        A compaction passes its deadline on: the call's ``timeout`` is what is
        left of it; a preparation ahead gets the configured timeout.
        Every route to the model (the compaction, a summary prepared ahead, the
        replay's stand-in) calls it here, so the prompt is sealed here as it leaves.
        """
        model = limits.summary_model
        if model is None:

            def unavailable(prompt: str) -> str:
                raise SummaryFailure("no_provider", "no summary model is attached to the engine")

            return unavailable
        runtime = dict(limits.runtime)
        configured = limits.settings.compaction.summary_timeout_seconds or None

        def call(prompt: str) -> str:
            return model(prompt, runtime, timeout=deadline.call_timeout() if deadline else configured)

        return gated(call)

    def calibrate(self, messages: list[Message]) -> None:
        """Calibrate the token estimate on the newest messages, as every compaction does (the same window)."""
        self.counter.calibrate(messages[-CALIBRATION_MESSAGES:])

    # -- resets ----------------------------------------------------------------------------
    def reset_by_host(self) -> None:
        """The host's ``on_session_reset`` (/new, /reset): a new conversation, the host-read figures zeroed."""
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0
        self.reset_for_new_session()

    def reset_for_new_session(self) -> None:
        """A new conversation on this agent (another session id, or the host's reset).

        The store session and tool search carry on; the host-read token
        figures are reset by the host's ``on_session_reset`` only
        (:meth:`reset_by_host`).  The compaction log and the earlier runs'
        figures are the conversation's own: a session started next brings its
        own (:meth:`resume_earlier_runs`).
        """
        self.ahead.discard("session reset")
        self.request_log = []
        self.compaction_log = []
        self.earlier = None
        self.last_seen = self.last_request = None
        self.governor.reset()
        self.flags = CompactionFlags()
        self.awaiting_real_usage_after_compression = False
        self.over_trigger = OverTrigger()
        self.sent_request = SentRequest()
        self.last_outcome = None
        self.rough_basis = RoughBasis()
        self.turn_end_full = 0
        self.turn_selected = False
        self.view = LeanView(self.view.settings, self.counter.count_message)
