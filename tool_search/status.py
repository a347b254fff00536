"""What one session's tool search reports (``ToolSearchSession.status``), as a typed record.

The engine's status carries it as is; ``stowage status`` reads it back from
files of other versions (unknown keys kept in ``extra``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    inline: bool = False  # inline pre-selection: the picks travel as text in their user message, the list stays
    inlined: list[str] = field(default_factory=list)  # the tools the newest user message's block names
    extra: dict[str, Any] = field(default_factory=dict)
