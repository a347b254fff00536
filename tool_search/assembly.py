"""Build the tool list a request carries once deferral is on.

Kept byte-stable on purpose: the visible tools keep the host's order, the
bridges follow with their constant text, and preselected tools (the only
part that varies per turn) come last in name order, so two turns that
preselect the same tools produce identical lists.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping, Sequence

from .activation import ActivationDecision, schema_name
from .bridges import BRIDGE_NAMES, bridge_schemas, bridge_tool_defs


def assemble_tools(
    schemas: Sequence[Mapping[str, Any]],
    decision: ActivationDecision,
    keep_visible: Collection[str] = (),
    *,
    wrapped: bool = True,
    listing: str = "",
) -> list[Mapping[str, Any]]:
    """The request's tools: unchanged when inactive, else visible + bridges + kept.

    ``schemas`` is the host's full list; ``keep_visible`` names deferrable
    tools to show directly this turn (from ``preselect``). ``wrapped`` picks
    the bridge format: OpenAI ``{"type":"function",...}`` or bare schemas.
    ``listing`` (from ``listing.build_listing``) goes into the search bridge's description.
    """
    incoming = [s for s in schemas if schema_name(s) not in BRIDGE_NAMES]
    if not decision.active:
        return incoming
    deferred = set(decision.deferrable_names)
    keep = set(keep_visible) & deferred
    visible = [s for s in incoming if schema_name(s) not in deferred]
    kept = sorted((s for s in incoming if schema_name(s) in keep), key=schema_name)
    bridges = bridge_tool_defs(listing=listing) if wrapped else bridge_schemas(listing=listing)
    return [*visible, *bridges, *kept]
