"""Stowage tool search: catalog, ranking and bridge logic, independent of any host.

The Hermes glue (``plugins/stowage``) decides activation with
``activation.decide``, serves the three bridges with ``BridgeService`` and
dispatches resolved calls through the host. Nothing in this package imports
the host.
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
    "assemble_tools", "MODES", "ActivationDecision", "decide", "estimate_tokens", "is_deferrable",
    "normalize_mode", "split_deferrable",
    "BRIDGE_NAMES", "CALL_NAME", "DESCRIBE_NAME", "SEARCH_NAME", "BridgeError",
    "BridgeService", "ToolNotAvailable", "bridge_schemas", "bridge_tool_defs", "parse_arguments",
    "IndexCache", "default_cache", "get_index", "Catalog", "ToolEntry",
    "Embedder", "load_default_embedder", "FieldWeights", "reciprocal_rank_fusion",
    "Hit", "ToolIndex", "preselect",
]
