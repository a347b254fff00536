"""What the engine's rooms read and write of the engine, as a protocol.

``compaction_run`` and ``engine_status`` work on the engine's parts; naming
those parts here lets them take the engine without importing ``engine.py``
(which imports them), so the rooms and the engine form no import circle.
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Protocol

from ..tool_search.session import ToolSearchSession
from .ahead import AheadSummaries
from .compaction_record import CompactionRecord
from .compactor import Archive
from .config import Settings
from .governor import Governor
from .host_contract import HostFacts
from .preview import SeenMessages
from .session_state import SessionState
from .session_status import RequestFigures
from .store_session.session import StoreSession
from .tokens import TokenCounter
from .view import LeanView

# (prompt, runtime) -> reply text; raises SummaryFailure.  runtime[TIMEOUT_KEY] (deadline.py) is the call's
# timeout in seconds (what is left of the compaction's deadline), or None for the host's own.
SummaryModel = Callable[[str, dict[str, Any]], str]


class EngineParts(Protocol):
    """The engine (``engine.StowageEngineCore``) as its rooms see it."""

    settings: Settings
    summary_model: SummaryModel | None
    archive: Archive | None
    host: HostFacts
    runtime: dict[str, Any]
    state: SessionState
    threshold_tokens: int
    threshold_key: str
    threshold_share: float
    context_length: int
    last_prompt_tokens: int
    compression_count: int
    session_id: str | None
    store_session: StoreSession
    counter: TokenCounter
    tool_search: ToolSearchSession
    view: LeanView
    governor: Governor
    ahead: AheadSummaries
    compaction_log: list[CompactionRecord]
    request_log: list[RequestFigures]
    last_seen: SeenMessages | None

    @property
    def _lock(self) -> ContextManager[Any]: ...  # one compaction or preparation at a time

    @property
    def name(self) -> str: ...

    @property
    def tail_budget_tokens(self) -> int: ...

    def should_compress_info(self, prompt_tokens: int | None = None, **_: Any) -> tuple[bool, str | None]: ...
