"""Stowage tool search: catalog, ranking and bridge logic, independent of any host.

How a host uses it, per request (nothing here imports the host):

1. ``decision = decide(tools, mode=..., context_length=..., core_names=...,
   never_defer=..., own_names=..., threshold_pct=..., count_tokens=...)``
2. if ``decision.active``: ``catalog = Catalog.from_schemas(<the session's
   scoped deferrable schemas>, toolset_of=...)``; optionally
   ``keep = preselect(catalog, last_user_message)`` when ``decision.preselect``;
   ``tools = assemble_tools(tools, decision, keep)``.
3. bridge calls: ``BridgeService(catalog).handle(name, raw_args)`` answers
   search/describe; ``resolve_call(name, arguments)`` validates a call (scope,
   argument parsing) and the host dispatches the returned ``(name, args)``.

Indexes are cached by catalog checksum (``default_cache``), so building a
``Catalog`` and a ``BridgeService`` per request is cheap.
"""

from .activation import (
    MODES,
    ActivationDecision,
    decide,
    estimate_tokens,
    is_deferrable,
    normalize_mode,
    split_deferrable,
)
from .assembly import assemble_tools
from .bridges import (
    BRIDGE_NAMES,
    CALL_NAME,
    DESCRIBE_NAME,
    SEARCH_NAME,
    BridgeError,
    BridgeService,
    ToolNotAvailable,
    bridge_schemas,
    bridge_tool_defs,
    parse_arguments,
)
from .cache import IndexCache, default_cache, get_index
from .catalog import Catalog, ToolEntry
from .embeddings import Embedder, load_default_embedder
from .fields import FieldWeights
from .fusion import reciprocal_rank_fusion
from .index import Hit, ToolIndex
from .preselect import preselect

__all__ = [
    "assemble_tools",
    "MODES",
    "ActivationDecision",
    "decide",
    "estimate_tokens",
    "is_deferrable",
    "normalize_mode",
    "split_deferrable",
    "BRIDGE_NAMES",
    "CALL_NAME",
    "DESCRIBE_NAME",
    "SEARCH_NAME",
    "BridgeError",
    "BridgeService",
    "ToolNotAvailable",
    "bridge_schemas",
    "bridge_tool_defs",
    "parse_arguments",
    "IndexCache",
    "default_cache",
    "get_index",
    "Catalog",
    "ToolEntry",
    "Embedder",
    "load_default_embedder",
    "FieldWeights",
    "reciprocal_rank_fusion",
    "Hit",
    "ToolIndex",
    "preselect",
]
