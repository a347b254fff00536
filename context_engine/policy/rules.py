"""The small rules of "compact now?": near the trigger, taken before it, awaited over it, past the ceiling.

Pure functions of plain figures; :func:`.decision.decide` puts them together into the one decision.
"""

from __future__ import annotations

from dataclasses import dataclass


def should_prepare(prompt_tokens: int, threshold_tokens: int, prepare_at: float) -> bool:
    """True once the last request as sent reached ``prepare_at`` of the compaction trigger.

    ``prompt_tokens`` is the provider's count for the last request (the -1
    sentinel right after a compaction, or 0 before any usage, never
    prepares); ``prepare_at`` 0 turns preparation off.  A request already
    over the trigger still prepares: the compaction it calls for has not
    run yet.
    """
    if prepare_at <= 0 or threshold_tokens <= 0 or prompt_tokens <= 0:
        return False
    return prompt_tokens >= prepare_at * threshold_tokens


def take_early(tokens: int, threshold_tokens: int, *, ready: bool) -> bool:
    """Compact now, under the trigger, with the summary prepared for it?

    Yes once it is ready: the compaction keeps what came since verbatim and
    the turn does not wait (left to the trigger, the history could outgrow
    the prepared window first, and its call would be wasted).  At or over
    the trigger the usual decision applies.
    """
    if threshold_tokens <= 0 or tokens <= 0 or tokens >= threshold_tokens:
        return False
    return ready


def likely_used(turn_growth: int | None, threshold_tokens: int, prepare_at: float) -> bool:
    """Whether a summary prepared at this turn end will fit the compaction that needs it.

    The compaction uses it while the history grew no more than the prepared
    window's slack (``threshold * (1 - prepare_at)`` tokens of longer tail)
    since it was prepared, and that compaction usually comes during the next
    turn.  So it is prepared when the last turn grew the history (all of it,
    not the request as sent: stubs hide most growth) by no more than the
    slack; ``turn_growth`` None (not known yet) prepares.  Long agent turns
    (a whole task per user message) grow far more: a summary prepared at
    their end is for a window the compaction no longer picks, a wasted call.
    """
    return turn_growth is None or turn_growth <= threshold_tokens * (1 - prepare_at)


AWAIT_CEILING = 0.85  # of the window: over the trigger, requests go on while the summary is written up to here
AWAIT_REQUESTS = 2  # over the trigger with no summary being written, requests that go on before one is started


@dataclass
class OverTrigger:
    """The requests a compaction lets go on over the trigger (``policy.decision``: await); new per compaction."""

    requests: int = 0  # sent over the trigger in a row since the last compaction
    started: bool = False  # one of them started the compaction's summary (once: a dropped one is not started again)
    # the compaction let them go on for a summary being written: the compactor's own limit judges that summary until
    # the compaction (ahead.review), even once the view took a request back under
    awaiting: bool = False

    def sent(self, over: bool) -> None:
        """A request's real size came back: one more over the trigger in a row, or back under it."""
        self.requests = self.requests + 1 if over else 0

    def may_start(self) -> bool:
        """Start the compaction's summary at this request over the trigger (after :data:`AWAIT_REQUESTS`, once)."""
        return self.requests >= AWAIT_REQUESTS and not self.started


def passes_ceiling(sent_tokens: int, window: int) -> bool:
    """The request as it will be sent would pass :data:`AWAIT_CEILING` of the ``window``: it compacts first.

    Whatever the host's own figure says (characters/4 undercounts dense
    scripts about four-fold): no turn goes on into a request the provider
    would refuse, or one the next large step could not follow.
    """
    return window > 0 and sent_tokens > AWAIT_CEILING * window


def await_over_trigger(
    sent_tokens: int, window: int, over: OverTrigger, *, writing: bool, prepared: bool, can_start: bool = True
) -> bool:
    """Over the trigger: let this request go on, uncompacted, instead of blocking the turn for the summary model?

    ``sent_tokens`` is the request as it will be sent, counted with the
    tokenizer where the real count is missing or stale
    (``SessionParts.request_as_sent``).  Yes while the summary is being
    written (``writing``), up to :data:`AWAIT_CEILING` of the ``window``, where
    a next large step still fits.  With nothing written: the first
    :data:`AWAIT_REQUESTS` go on and start nothing (a large newest output is
    sent whole only while it is hot, then the view stubs it and the request is
    back under the trigger; a compaction could not have helped, its verbatim
    tail keeps that output), and the next one starts the summary
    (:meth:`OverTrigger.may_start`), once per compaction, when one can start at
    all (``can_start``: a request's hook brings the history, a model is
    attached, no backoff).  A reply that is ready, or one for another window
    (``prepared``), is compacted with now.
    """
    if window <= 0 or passes_ceiling(sent_tokens, window):
        return False
    if writing:
        return True
    if prepared or not can_start:
        return False
    return over.requests < AWAIT_REQUESTS or (over.requests == AWAIT_REQUESTS and not over.started)
