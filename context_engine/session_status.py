"""What a session's engine did, as one typed record: :class:`SessionStatus`.

The engine builds it (``StowageEngineCore.status()``); the host gets it as a
dict from ``get_status()``; the status files hold that dict; ``stowage
status``, ``/stowage`` and the dashboard read it back with
:meth:`SessionStatus.from_dict`, which takes files of older and newer
Stowage versions alike (missing figures take their defaults, unknown keys
are kept in ``extra``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .compaction_record import CompactionRecord
from .plain_data import from_plain, to_plain

COMPACTIONS_SHOWN = 10  # the newest compactions a status carries


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
class StoreStatus:
    root: str | None = None
    error: str | None = None  # why the store is not available
    spills: int = 0
    spill_failures: int = 0
    archive_failures: int = 0
    last_store_error: str | None = None
    tool_calls: int = 0
    recent_spills: list[dict[str, Any]] = field(default_factory=list)  # handle, tool, tokens; newest last
    cap_evicted: dict[str, int] = field(default_factory=dict)  # blobs, bytes the size cap tombstoned
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolSearchStatus:
    mode: str = ""
    active: bool = False
    available: bool = True  # False: this host cannot run tool search (``reason`` says why)
    reason: str = ""
    deferred: int = 0
    deferred_tokens: int = 0
    preselected: list[str] = field(default_factory=list)
    searches: int = 0
    calls: int = 0
    refusals: int = 0
    listing_level: str = ""
    listing_tokens: int = 0
    semantic: str = ""  # how preselect ranks: with the embedding endpoint, or BM25 alone and why
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ViewStatus:
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
    last_request: dict[str, Any] = field(default_factory=dict)  # full_tokens, sent_tokens, saved_tokens, ...
    extra: dict[str, Any] = field(default_factory=dict)


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
    last: dict[str, Any] | None = None  # the last compaction's use: prepared_ahead, wait_ms, outcome
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


@dataclass
class HostStatus:
    """What the running Hermes allows (the plugin glue assesses it at load)."""

    hermes: str = "unknown"
    supported: bool = True
    minimum: str = ""
    unavailable: list[str] = field(default_factory=list)
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionStatus:
    engine: str = "stowage"
    session_id: str | None = None  # set in status files (the file's session)
    updated_at: float | None = None  # set in status files (when it was written)
    last_prompt_tokens: int = 0
    threshold_tokens: int = 0
    trigger: TriggerStatus | None = None
    context_length: int = 0
    usage_percent: float = 0.0
    compression_count: int = 0
    tokenizer: str = ""
    tail_budget_tokens: int = 0
    governor: GovernorStatus = field(default_factory=GovernorStatus)
    store: StoreStatus = field(default_factory=StoreStatus)
    tool_search: ToolSearchStatus | None = None  # None: a file that does not say
    view: ViewStatus | None = None  # None: a file that does not say
    ahead: AheadStatus | None = None  # None: a file that does not say
    compactions: list[CompactionRecord] = field(default_factory=list)  # the newest last
    summary: SummaryState = field(default_factory=SummaryState)
    requests: list[RequestFigures] = field(default_factory=list)
    host: HostStatus | None = None
    # what every request carries before any history: system_tokens, tools_tokens, tokens (fixed_part.py)
    fixed_part: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def last_compaction(self) -> CompactionRecord | None:
        return self.compactions[-1] if self.compactions else None

    def as_dict(self) -> dict[str, Any]:
        """The plain form the host, the status files and ``--json`` see (``last_compaction`` included)."""
        data = to_plain(self)
        data["last_compaction"] = to_plain(self.last_compaction) if self.last_compaction else None
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "SessionStatus":
        """Read back a dict from :meth:`as_dict` (or a status file of an older or newer Stowage)."""
        data = dict(data) if isinstance(data, dict) else {}
        last = data.pop("last_compaction", None)
        status = from_plain(cls, data)
        if isinstance(last, dict):  # older files list only some fields of each compaction, all of the last
            full = from_plain(CompactionRecord, last)
            if status.compactions and status.compactions[-1].at == full.at:
                status.compactions[-1] = full
            elif not status.compactions:
                status.compactions = [full]
        return status
