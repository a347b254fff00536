"""The ``stowage.tool_search`` settings section: what tool search reads, typed and frozen.

It lives with tool search (not with the context engine's other sections)
so this package imports nothing of ``context_engine``; the engine's
settings hold one of these (``Settings.tool_search``), built from the
validated ``tool_search`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolSearchSection:
    enabled: str
    threshold_pct: float
    never_defer: tuple[str, ...]
    preselect: bool
    preselect_k: int
    hybrid: bool
    search_limit: int
    semantic: bool
    listing_max_tokens: int
    listing_window_pct: float
    preselect_pinned: tuple[str, ...] = ()
    embedding_endpoint: str = ""
    embedding_model: str = ""
    embedding_api_key_env: str = ""
    embedding_timeout_s: float = 3.0
    embedding_retry_s: float = 60.0
    inline: str = "auto"
    inline_k: int = 5
