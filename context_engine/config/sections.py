"""The ``stowage:`` settings as typed, frozen dataclasses, one per section.

``config.load_settings`` validates the user's block against the schema
(``config_schema.KEYS``) and builds these; everything else reads typed
fields (``settings.view.hot_tokens`` is an ``int``) instead of an
``Any``-typed attribute lookup.  A test keeps the fields and the schema in
step, so a key cannot be added to one and forgotten in the other.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Mapping

from ...tool_search.search_settings import (
    ToolSearchSection,  # tool search owns its section (it imports nothing of ours)
)


@dataclass(frozen=True)
class CompactionSection:
    threshold: float
    target_ratio: float
    protect_first_n: int
    protect_last_n: int
    abort_on_summary_failure: bool
    summary_max_tokens: int
    summary_timeout_seconds: float
    prepare_at: float
    prune_min_chars: int
    max_tool_args_chars: int
    failure_cooldown_seconds: int
    max_ineffective: int
    backoff_turns: int
    provider_profile: str


@dataclass(frozen=True)
class ViewSection:
    enabled: bool
    hot_tokens: int
    step_tokens: int
    compact_tail_tokens: int
    pin_turns: int
    pin_quoted: bool
    stub_lines_chars: int
    stub_names: bool
    pin_edited: bool
    pin_named: bool
    min_chars: int
    condense_reasoning: bool
    condense_answers: bool
    compact_at: float
    deep_step: bool
    collapse_steps: bool
    working_set: bool
    release_reach: float
    step_payback: float
    cache_anchor: bool


@dataclass(frozen=True)
class TokenizerSection:
    encoding: str
    allow_download: bool


@dataclass(frozen=True)
class StoreSection:
    path: str
    ttl_hours: float
    max_store_mb: float
    fetch_grace_hours: float
    tombstone_ttl_days: float
    cross_session_reads: bool


@dataclass(frozen=True)
class SpillSection:
    enabled: bool
    threshold_tokens: int
    per_tool: Mapping[str, int]
    never_spill: tuple[str, ...]
    excerpt_chars: int
    fetch_max_chars: int
    full_fetch_max_chars: int


SECTION_TYPES: dict[str, type] = {
    "compaction": CompactionSection,
    "view": ViewSection,
    "tokenizer": TokenizerSection,
    "store": StoreSection,
    "spill": SpillSection,
    "tool_search": ToolSearchSection,
}


def build_section(name: str, values: dict[str, Any]) -> Any:
    """The typed section ``name`` from validated values (lists become tuples, maps read-only: frozen all the way)."""
    frozen = {
        k: tuple(v) if isinstance(v, list) else MappingProxyType(dict(v)) if isinstance(v, dict) else v
        for k, v in values.items()
    }
    return SECTION_TYPES[name](**frozen)


def section_values(section: Any) -> dict[str, Any]:
    """A section as plain, YAML-shaped data (tuples as lists, maps as dicts)."""
    out: dict[str, Any] = {}
    for f in fields(section):
        value = getattr(section, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, Mapping) else value
    return out
