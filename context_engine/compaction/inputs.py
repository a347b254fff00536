"""What one compaction works with and what it returns: the compactor's inputs and outcome, as records.

:class:`CompactionInputs` is everything :func:`.compactor.compact` needs but
the messages: the plan's numbers (:class:`CompactionPlan`), the callables it
may use (the token count, the summary model, the archive, the summaries
prepared ahead) and the deadline.  :class:`CompactionOutcome` is what comes
back, with the figures of the run (:class:`CompactionStats`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..chat.markers import FailureKind
from ..chat.messages import Message
from ..chat.stubs import PrunedOutput
from ..summary.deadline import SummaryDeadline
from ..summary.transcript import TranscriptLimits
from .boundaries import Window
from .prune import PruneSettings

CountFn = Callable[[Message], int]
Summarizer = Callable[[str], str]
COOLDOWN_REASON = "the summary model is cooling down after a failure"


class Archive(Protocol):
    """Where content leaving the window is kept: the store session's archive (store_session/archive.py)."""

    def render_pruned(self, output: PrunedOutput) -> str | None:
        """Keep a pruned tool output; return its replacement text (None = default stub)."""

    def keep_window(self, window: list[Message]) -> Callable[[], str | None]:
        """Start keeping the summarized turns; the callable waits until they are kept durably.

        It returns the reference for the summary (None = not kept).  The
        write may run while the summary model works, but nothing names the
        window before the callable has returned.
        """

    def keep_part(self, part: Any) -> str | None:
        """Keep a message part taken out of the context (an image); return its placeholder (None = plain)."""

    def cut_arguments(self, tool_name: str, arguments: str, max_chars: int) -> str | None:
        """Keep oversized call arguments; return the shortened JSON naming their handle (None = plain cut)."""


class PreparedSummaries(Protocol):
    """Summaries written ahead of the compaction (``context_engine.ahead``)."""

    def window_for(self, messages: list[Message], window: Window) -> Window:
        """``window``, or a prepared window that is a prefix of it and ends at a clean cut."""

    def reply_for(self, prompt: str, window: list[Message], deadline: SummaryDeadline) -> str | None:
        """The prepared reply for exactly this prompt and window (waiting for a running one within
        ``deadline``), else None; raises SummaryFailure when it failed or did not come in time."""


@dataclass(frozen=True)
class CompactionPlan:
    """The numbers one compaction works with (derived from settings and model)."""

    protect_first_n: int
    tail_budget_tokens: int
    tail_min_messages: int
    context_length: int
    summary_max_tokens: int = 8000
    abort_on_summary_failure: bool = False
    profile: str = "strict"
    prune: PruneSettings = PruneSettings()
    transcript: TranscriptLimits = TranscriptLimits()
    # a prepared window's end may leave up to this minus tail_budget_tokens more tail than the compaction's own cut
    prepared_tail_tokens: int = 0  # (0 = never)


@dataclass(frozen=True)
class CompactionInputs:
    """Everything one compaction works with but the messages.

    ``summarize`` is the summary model (None while it cools down: the
    fallback summary, ``cooldown_reason`` says why); ``archive`` keeps what
    leaves the window (the blob store; None: plain stubs); ``prepared`` may
    supply the summary written ahead for this window, or for a prefix of it
    whose kept tail stays within ``plan.prepared_tail_tokens``; ``deadline``
    bounds the wait for it and the model call together (None: Hermes's own
    300 s from the start); ``today`` dates the summary (None: today).
    """

    plan: CompactionPlan
    count: CountFn
    summarize: Summarizer | None
    focus_topic: str | None = None
    memory_context: str = ""
    archive: Archive | None = None
    cooldown_reason: str = COOLDOWN_REASON
    today: str | None = None
    prepared: PreparedSummaries | None = None
    deadline: SummaryDeadline | None = None


@dataclass
class CompactionStats:
    messages_before: int = 0
    messages_after: int = 0
    pruned_outputs: int = 0
    images_removed: int = 0
    arguments_shrunk: int = 0
    window_messages: int = 0
    window_tool_outputs: int = 0  # shown to the summary model as verdicts, kept whole with the stored window
    summary_chars: int = 0
    summary_source: str = ""  # "model" (called now), "prepared" (written ahead), "fallback", or "" (no summary)
    summary_calls: int = 0  # model calls this compaction made itself (a prepared summary's call was made before)
    phase_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class CompactionOutcome:
    messages: list[Message]
    changed: bool
    aborted: bool = False
    summary_error: str | None = None
    failure: FailureKind | None = None  # why summary_error is set: the model's side or ours
    fallback_used: bool = False
    summary_body: str | None = None
    window_reference: str | None = None
    pruned: list[PrunedOutput] = field(default_factory=list)
    stats: CompactionStats = field(default_factory=CompactionStats)
