"""The status each part of a session reports: one dataclass per part, returned typed by the part itself.

:class:`.session_status.SessionStatus` gathers them.  Files written by
other Stowage versions are read back into the same classes with the lenient
:func:`.plain_data.from_plain` (``SessionStatus.from_dict``); a part never
goes through it.  Each has an ``extra`` field for the keys of such files this
version does not know.  Imports nothing of the engine, so every part can
return its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class GovernorStatus:
    turn: int = 0
    ineffective_streak: int = 0
    backoff: str | None = None  # why automatic compaction pauses, if it does
    summary_failures: int = 0
    summary_cooldown_seconds: float = 0.0
    compacted_this_turn: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SpillRecord:
    """One output the store took in place of the history (``StoreSession.spill``): what status lists."""

    handle: str = ""
    tool: str = ""
    tokens: int = 0
    chars: int = 0
    at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CapEvictions:
    """This session's blobs the store's size cap tombstoned (their handles answer with tombstones)."""

    blobs: int = 0
    bytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StoreStatus:
    root: str | None = None
    error: str | None = None  # why the store is not available
    spills: int = 0
    spill_failures: int = 0
    archive_failures: int = 0
    last_store_error: str | None = None
    tool_calls: int = 0
    recent_spills: list[SpillRecord] = field(default_factory=list)  # newest last
    cap_evicted: CapEvictions = field(default_factory=CapEvictions)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LastRequest:
    """The newest request the lean view shaped: the history's tokens as held and as sent, and what changed.

    ``unshaped_tokens`` is that history with nothing shaped by Stowage (spilled outputs whole), the base of
    "saved"; None in a file from before spills were counted (then ``full_tokens`` is the base).
    """

    full_tokens: int = 0
    sent_tokens: int = 0
    saved_tokens: int = 0
    unshaped_tokens: int | None = None
    spill_tokens: int = 0
    stubbed_outputs: int = 0
    cut_arguments: int = 0
    condensed_reasoning: int = 0
    collapsed_steps: int = 0
    pinned: int = 0
    deep_steps: int = 0
    hot_start: int = 0
    unstored: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def unshaped_base(self) -> int:
        """The tokens "saved" is measured against: the unshaped history, or in an older file the full one."""
        return self.unshaped_tokens if self.unshaped_tokens is not None else self.full_tokens


@dataclass
class ViewStatus:
    """The lean view's figures: its settings, sums over the session's requests, and its newest request.

    The view keeps one as it goes (``LeanView.stats``) and hands out a copy as its status.
    """

    enabled: bool | None = None  # None: a file that does not say
    hot_tokens: int = 0
    step_tokens: int = 0
    pin_turns: int = 0
    requests: int = 0
    tokens_saved: int = 0  # the one "saved" figure: sent vs the same history unshaped, spills included
    sent_tokens: int = 0
    unshaped_tokens: int | None = None  # None: a file from before spills were counted
    view_tokens_saved: int = 0
    spill_tokens_saved: int = 0
    steps: int = 0
    unstored_outputs: int = 0
    last_error: str | None = None
    last_request: LastRequest | None = None  # None: no request yet
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedUse:
    """How the last compaction used the summary prepared ahead (``AheadSummaries.reply_for``).

    ``outcome`` is ``used``, ``none`` (nothing prepared; ``why``), ``stale`` (prepared for another window or
    prompt; ``why``), ``failed earlier`` or ``failed`` (``error``); ``wait_s`` is how long the compaction
    waited for it, in seconds like ``CompactionRecord.wait_s``.  Status files of older versions said
    ``prepared_ahead``, ``wait_ms`` and ``prepared_ms``: :meth:`upgrade_plain` reads them.
    """

    outcome: str = ""
    prepared: bool = False  # the compaction's summary is the one written ahead
    wait_s: float = 0.0
    lead_s: float | None = None  # used: how long before the compaction the preparation started
    why: str = ""
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def upgrade_plain(data: dict[str, Any]) -> dict[str, Any]:
        """An older file's keys under today's names (milliseconds to seconds); today's keys win."""
        data = dict(data)
        if "prepared_ahead" in data:
            data.setdefault("prepared", data.pop("prepared_ahead"))
        for old, new in (("wait_ms", "wait_s"), ("prepared_ms", "lead_s")):
            ms = data.pop(old, None)
            if new not in data and isinstance(ms, (int, float)) and not isinstance(ms, bool):
                data[new] = round(ms / 1000, 4)
        return data


@dataclass
class AheadStatus:
    prepare_at: float = 0.0  # 0: summaries are not prepared ahead
    prepared: int = 0
    used: int = 0
    discarded: int = 0
    failed: int = 0
    wasted: int = 0  # summary calls prepared and never used (discarded or failed)
    wasted_tokens: int = 0  # their prompts' tokens
    latency_s: float | None = None  # the summary model's observed latency (when to start one)
    state: str = ""  # idle, running, ready
    discard_reasons: dict[str, int] = field(default_factory=dict)
    last: PreparedUse | None = None  # how the last compaction used it (None: it asked for no summary)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TriggerStatus:
    """What starts automatic compaction: which key, its share, on what it is measured (trigger.py)."""

    key: str = ""
    share: float = 0.0
    tokens: int = 0
    context_length: int = 0
    measured_on: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SummaryState:
    last_error: str | None = None
    fallback_used: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RequestFigures:
    """One provider request: tokens of the full history and as sent (the dashboard's timeline)."""

    at: float = 0.0
    full: int = 0
    sent: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FixedPartFigures:
    """What every request carries before any history: the system prompt's and the tool schemas' tokens."""

    system_tokens: int = 0
    tools_tokens: int = 0
    tokens: int = 0  # both
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class HostStatus:
    """What the running Hermes allows (the plugin glue assesses it at load)."""

    hermes: str = "unknown"
    supported: bool = True
    minimum: str = ""
    unavailable: list[str] = field(default_factory=list)
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
