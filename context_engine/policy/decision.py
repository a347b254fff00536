"""Compact now?  One pure function answers it for everyone who asks: :func:`decide`.

The host's pressure check (``should_compress_info``), the compaction the
host then calls (``compress``), the summary prepared ahead (at a turn's end
and before each request), the status line before an automatic compaction and
the dry run (``/stowage preview``) all ask the same question in different
words.  Each hands :func:`decide` the figures it knows as one frozen
:class:`Pressure` (``Pressure.asked`` says who asks) and gets one frozen
:class:`Decision`: compact, await (the turn goes on while the summary is
written), prepare (start the next summary ahead), or skip, with its reason.
The gates they share are tested here once: preparing ahead on at all
(``prepare_at``), the summary model cooling down, the back-off, once per turn.
The small rules it is made of (when a request is near the trigger, when it
passes the ceiling, when one over the trigger goes on) are in :mod:`.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .rules import (
    AWAIT_REQUESTS,
    OverTrigger,
    await_over_trigger,
    likely_used,
    passes_ceiling,
    should_prepare,
    take_early,
)


class Asked(StrEnum):
    """Who asks, and so which question :func:`decide` answers."""

    CHECK = "check"  # the host's pressure check (should_compress, should_compress_info): compact now?
    DRY_RUN = "dry_run"  # the same question with no host around (/stowage preview): nothing is awaited
    COMPRESS = "compress"  # the host called compress(): run it, and with which summary?
    STATUS = "status"  # the host's status line before an automatic compaction: what will it do?
    TURN_END = "turn_end"  # a turn ended: start the next compaction's summary ahead?
    REQUEST = "request"  # a request is about to go out: start (or keep) the coming compaction's summary?


class Action(StrEnum):
    COMPACT = "compact"
    AWAIT = "await"  # over the trigger, the turn goes on while the compaction's summary is written
    PREPARE = "prepare"  # preparing ahead applies to this request (``Decision.start``: start one now)
    SKIP = "skip"


# the reasons (``Decision.reason``); the host reads ``once_per_turn`` and ``backoff:<why>``
BELOW_THRESHOLD = "below_threshold"  # written below_threshold:<tokens><<threshold>
ONCE_PER_TURN = "once_per_turn"
BACKOFF = "backoff"  # written backoff:<why>
OVER_TRIGGER = "over_trigger"
PAST_CEILING = "past_ceiling"  # the request as sent would pass the ceiling: it compacts, even twice a turn
PREPARED_READY = "prepared_ready"  # under the trigger, with the summary prepared for it ready
SUMMARY_AWAITED = "summary_awaited"
FORCED = "forced"
OVERFLOWING = "overflowing"
ASKED = "asked"  # the host asked for the compaction (it decided on its own figures)
OFF = "prepare_off"  # compaction.prepare_at 0
NOT_NEAR = "not_near_trigger"
NO_MODEL = "no_summary_model"
MEMORY = "memory_in_prompt"  # the host adds memory to compress()'s prompt: a prepared one would not match
COOLING = "cooling_down"
OUTGROWN = "outgrown_before_used"
NEARING = "nearing_trigger"


@dataclass(frozen=True)
class Pressure:
    """What the decision reads: the figure asked about, the trigger, and the session's state around it.

    Plain values the caller gathers (``SessionParts.pressure``); nothing here
    reads a clock or counts a token.
    """

    asked: Asked
    tokens: int  # the figure asked about: the host's estimate, the last prompt (-1 right after a compaction)
    threshold: int  # the trigger in tokens (0: no window known yet)
    window: int  # the model's window in tokens
    prepare_at: float  # compaction.prepare_at: 0 prepares nothing ahead
    counted: int | None = None  # the request as it will be sent, counted with the tokenizer (None: no basis)
    sent: int = 0  # the request as it will be sent, on the trigger's basis (``SessionParts.request_as_sent``)
    # the governor
    hook_driven: bool = False  # turns are counted by the host's turn hook
    compacted_this_turn: bool = False
    backoff: str | None = None  # why automatic compaction pauses
    cooldown_s: float = 0.0  # the summary model cools down after a failure this much longer (fallback summary)
    # the summary prepared ahead
    model_attached: bool = True
    memory_in_prompt: bool = False
    hook_brings_history: bool = False  # a request's hook brings the history: a request can start a summary
    ready: bool = False  # a prepared summary has its reply
    writing: bool = False  # a prepared summary's reply is still to come
    pending: bool = False  # a summary is prepared (ready, being written, or failed)
    over_requests: int = 0  # requests sent over the trigger in a row since the last compaction
    over_started: bool = False  # one of them started the compaction's summary
    awaiting: bool = False  # the compaction let requests go on for a summary being written
    turn_growth: int | None = None  # TURN_END: what the last turn grew the history by (None: not known)
    due: bool = False  # REQUEST: the measured pace says the summary should start now (``ahead.pace.due``)
    # compress()
    forced: bool = False  # /compress
    bypass_cooldown: bool = False  # after a proven overflow
    overflowing: bool = False  # the history passes the ceiling or the window


@dataclass(frozen=True)
class Decision:
    """What to do and why; ``tokens`` is the figure decided on (the request as sent where that is larger)."""

    action: Action
    reason: str
    tokens: int = 0
    model_summary: bool = True  # COMPACT: call the summary model (False: the fallback summary, it cools down)
    use_prepared: bool = False  # COMPACT: a summary prepared ahead may stand in for the model's call
    clear_cooldown: bool = False  # COMPACT: forced or after an overflow: the model is tried again at once
    start: bool = False  # PREPARE: start a summary now (else only what is pending is reviewed)
    awaited: bool = False  # PREPARE: the compaction waits only for this summary (over the trigger)

    @property
    def compact(self) -> bool:
        return self.action is Action.COMPACT

    def host_answer(self) -> tuple[bool, str | None]:
        """``should_compress_info``'s pair: compact now?, and the reason the host shows when it is blocked."""
        if self.action is Action.COMPACT:
            return True, None
        if self.action is Action.SKIP and not self.reason.startswith(BELOW_THRESHOLD):
            return False, self.reason
        return False, None


def decide(p: Pressure) -> Decision:
    """The one answer to "compact now?" for whoever asks (:class:`Asked`)."""
    preparing = p.prepare_at > 0
    may_prepare = _why_not_prepare(p)  # None: a summary can be written ahead now
    if p.asked is Asked.TURN_END:
        if not should_prepare(p.tokens, p.threshold, p.prepare_at):
            return Decision(Action.SKIP, OFF if not preparing else NOT_NEAR, p.tokens)
        if may_prepare is not None:
            return Decision(Action.SKIP, may_prepare, p.tokens)
        if not likely_used(p.turn_growth, p.threshold, p.prepare_at):
            return Decision(Action.SKIP, OUTGROWN, p.tokens)  # the next turn would outgrow it: a wasted call
        return Decision(Action.PREPARE, NEARING, p.tokens, start=True)
    if p.asked is Asked.REQUEST:
        if not preparing:
            return Decision(Action.SKIP, OFF, p.sent)
        if may_prepare is not None:
            return Decision(Action.SKIP, may_prepare, p.sent)
        if p.compacted_this_turn:
            return Decision(Action.SKIP, ONCE_PER_TURN, p.sent)  # this turn compacts no more
        over = p.sent >= p.threshold > 0
        # over the trigger the compaction waits for this summary, not for the model, and takes it once ready
        start = OverTrigger(p.over_requests, started=p.over_started).may_start() if over else p.due
        return Decision(
            Action.PREPARE, OVER_TRIGGER if over else NEARING, p.sent, start=start, awaited=over or p.awaiting
        )
    if p.asked in (Asked.COMPRESS, Asked.STATUS):
        if p.compacted_this_turn and not p.forced and not p.overflowing:
            return Decision(Action.SKIP, ONCE_PER_TURN, p.tokens)
        if p.asked is Asked.STATUS and p.backoff is not None:
            return Decision(Action.SKIP, f"{BACKOFF}:{p.backoff}", p.tokens)
        fresh = p.forced or p.bypass_cooldown
        model = fresh or p.cooldown_s <= 0  # cooling down: no model summary, so no shorter prepared window either
        why = FORCED if p.forced else OVERFLOWING if p.overflowing else ASKED
        return Decision(
            Action.COMPACT, why, p.tokens, model_summary=model, use_prepared=preparing and model, clear_cooldown=fresh
        )
    return _check(p, preparing, may_prepare)


def _check(p: Pressure, preparing: bool, may_prepare: str | None) -> Decision:
    """The pressure check (and its dry run): compact, await the summary being written, or skip."""
    past = p.asked is Asked.CHECK and p.counted is not None and passes_ceiling(p.counted, p.window)
    tokens = max(p.tokens, p.counted or 0) if past else p.tokens
    why = PAST_CEILING if past else OVER_TRIGGER
    if preparing and take_early(tokens, p.threshold, ready=p.ready):
        tokens, why = max(tokens, p.threshold), PREPARED_READY  # compact now, before the trigger
    elif (
        p.asked is Asked.CHECK
        and preparing
        and 0 < p.threshold <= tokens
        and await_over_trigger(
            p.sent,
            p.window,
            OverTrigger(p.over_requests, started=p.over_started),
            writing=p.writing,
            prepared=p.pending,
            can_start=p.hook_brings_history and may_prepare is None,
        )
    ):
        return Decision(Action.AWAIT, SUMMARY_AWAITED, tokens)  # compact once it is ready, not blocking for it
    if tokens <= 0 or not p.threshold or tokens < p.threshold:
        return Decision(Action.SKIP, f"{BELOW_THRESHOLD}:{max(tokens, 0)}<{p.threshold}", tokens)
    if p.hook_driven and p.compacted_this_turn and not past:
        return Decision(Action.SKIP, ONCE_PER_TURN, tokens)
    if p.backoff is not None:
        return Decision(Action.SKIP, f"{BACKOFF}:{p.backoff}", tokens)
    return Decision(Action.COMPACT, why, tokens)


def _why_not_prepare(p: Pressure) -> str | None:
    """Why no summary can be written ahead now (None: one can): no model, memory in the prompt, back-off, cooldown."""
    if not p.model_attached:
        return NO_MODEL
    if p.memory_in_prompt:
        return MEMORY
    if p.backoff is not None:
        return f"{BACKOFF}:{p.backoff}"
    return COOLING if p.cooldown_s > 0 else None


__all__ = ["AWAIT_REQUESTS", "Action", "Asked", "Decision", "Pressure", "decide"]
