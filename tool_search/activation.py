"""Whether to defer tool schemas for a request: a pure decision, no host access.

Deferring costs the model a search round-trip, so it only pays off when the
deferrable schemas are a real share of the context window. The glue passes
everything the decision needs (the host's core tool names, the user's
never-defer list, a token counter), which keeps this testable without a host.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

from .bridges import BRIDGE_NAMES
from .catalog import unwrap_schema

MODES = ("auto", "on", "off", "preselect")
DEFAULT_MODE = "auto"
DEFAULT_THRESHOLD_PCT = 10.0
# With no known context window, defer above this many schema tokens.
UNKNOWN_CONTEXT_THRESHOLD_TOKENS = 20_000
OWN_TOOL_PREFIX = "stowage_"

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """chars/4: cheap, provider-neutral, good enough to gate a yes/no decision."""
    return int(math.ceil(len(text) / 4.0))


def normalize_mode(mode: Any) -> str:
    """Config value to a mode; booleans and unknown strings fall back safely."""
    if mode is True:
        return "on"
    if mode is False:
        return "off"
    m = str(mode or "").strip().lower()
    if m in ("true", "yes", "1"):
        return "on"
    if m in ("false", "no", "0"):
        return "off"
    return m if m in MODES else DEFAULT_MODE


def schema_name(schema: Mapping[str, Any]) -> str:
    return str(unwrap_schema(schema).get("name") or "")


def is_deferrable(
    name: str, *, core_names: Collection[str], never_defer: Collection[str] = (), own_names: Collection[str] = ()
) -> bool:
    """A tool may be deferred unless it is core, Stowage's own, or pinned by the user."""
    if not name or name in BRIDGE_NAMES or name.startswith(OWN_TOOL_PREFIX):
        return False
    return name not in core_names and name not in never_defer and name not in own_names


def split_deferrable(
    schemas: Iterable[Mapping[str, Any]],
    *,
    core_names: Collection[str],
    never_defer: Collection[str] = (),
    own_names: Collection[str] = (),
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(always visible, deferrable), each in the input order."""
    visible: list[Mapping[str, Any]] = []
    deferrable: list[Mapping[str, Any]] = []
    core, pinned, own = frozenset(core_names), frozenset(never_defer), frozenset(own_names)
    for s in schemas:
        name = schema_name(s)
        target = deferrable if is_deferrable(name, core_names=core, never_defer=pinned, own_names=own) else visible
        target.append(s)
    return visible, deferrable


def schema_tokens(schemas: Sequence[Mapping[str, Any]], count_tokens: TokenCounter = estimate_tokens) -> int:
    """Token cost of schemas as the provider sees them (compact JSON)."""
    if not schemas:
        return 0
    return count_tokens(json.dumps(list(schemas), separators=(",", ":"), ensure_ascii=False, default=str))


@dataclass(frozen=True)
class ActivationDecision:
    """Outcome and the numbers behind it, for logs and status output."""

    active: bool
    mode: str
    reason: str
    deferrable_names: tuple[str, ...]
    deferrable_tokens: int
    threshold_tokens: int

    @property
    def preselect(self) -> bool:
        """Keep the top-K ranked tools visible next to the bridges this turn."""
        return self.active and self.mode == "preselect"


def decide(
    schemas: Sequence[Mapping[str, Any]],
    *,
    mode: Any = DEFAULT_MODE,
    context_length: int | None,
    core_names: Collection[str],
    never_defer: Collection[str] = (),
    own_names: Collection[str] = (),
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    count_tokens: TokenCounter = estimate_tokens,
) -> ActivationDecision:
    """Decide whether deferral is on for this tool list.

    ``off`` never defers; ``on`` defers whenever something is deferrable;
    ``auto`` and ``preselect`` defer once deferrable schemas reach
    ``threshold_pct`` of ``context_length`` (``preselect`` then also keeps
    the best-matching tools visible).
    """
    m = normalize_mode(mode)
    pct = max(0.0, min(100.0, float(threshold_pct)))
    if context_length and context_length > 0:
        threshold = int(context_length * pct / 100.0)
    else:
        threshold = UNKNOWN_CONTEXT_THRESHOLD_TOKENS
    _, deferrable = split_deferrable(schemas, core_names=core_names, never_defer=never_defer, own_names=own_names)
    names = tuple(schema_name(s) for s in deferrable)

    def result(active: bool, reason: str, tokens: int) -> ActivationDecision:
        return ActivationDecision(active, m, reason, names, tokens, threshold)

    if m == "off":
        return result(False, "mode off", 0)
    if not deferrable:
        return result(False, "no deferrable tools", 0)
    tokens = schema_tokens(deferrable, count_tokens)
    if m == "on":
        return result(True, "mode on", tokens)
    if tokens >= threshold:
        return result(True, f"deferrable schemas {tokens} >= threshold {threshold} tokens", tokens)
    return result(False, f"deferrable schemas {tokens} < threshold {threshold} tokens", tokens)
