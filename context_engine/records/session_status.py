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

from ...tool_search.status import ToolSearchStatus
from .compaction_record import CompactionRecord
from .part_status import (
    AheadStatus,
    CapEvictions,
    FixedPartFigures,
    GovernorStatus,
    HostStatus,
    LastRequest,
    RequestFigures,
    SpillRecord,
    StoreStatus,
    SummaryState,
    TriggerStatus,
    ViewStatus,
)
from .plain_data import from_plain, to_plain

__all__ = [
    "AheadStatus",
    "CapEvictions",
    "FixedPartFigures",
    "GovernorStatus",
    "HostStatus",
    "LastRequest",
    "RequestFigures",
    "SessionStatus",
    "SpillRecord",
    "StoreStatus",
    "SummaryState",
    "ToolSearchStatus",
    "TriggerStatus",
    "ViewStatus",
]

COMPACTIONS_SHOWN = 10  # the newest compactions a status carries


@dataclass
class SessionStatus:
    engine: str = "stowage"
    session_id: str | None = None  # set in status files (the file's session)
    updated_at: float | None = None  # set in status files (when it was written)
    runs: int = 1  # the runs of the session so far: a resume adds one (``resumed_status.continued``)
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
    # what every request carries before any history (fixed_part.py); None: not measured yet
    fixed_part: FixedPartFigures | None = None
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
