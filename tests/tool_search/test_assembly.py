from __future__ import annotations

import json

from stowage.tool_search import SEARCH_NAME, assemble_tools, bridge_tool_defs, decide

from .catalogs import tool

CORE = {"terminal"}


def wrapped(*names: str) -> list[dict]:
    return [{"type": "function", "function": tool(n, "x" * 400)} for n in names]


def names(tools) -> list[str]:
    return [(t.get("function") or t)["name"] for t in tools]


def test_inactive_decision_passes_tools_through_without_bridges():
    tools = wrapped("terminal", "mcp__a__x") + bridge_tool_defs()
    d = decide(tools, mode="off", context_length=100, core_names=CORE)
    assert names(assemble_tools(tools, d)) == ["terminal", "mcp__a__x"]


def test_active_decision_replaces_deferred_tools_with_bridges():
    tools = wrapped("mcp__a__x", "terminal", "plugin_y")
    d = decide(tools, mode="on", context_length=100_000, core_names=CORE)
    out = assemble_tools(tools, d)
    assert names(out) == ["terminal", "stowage_tool_search", "stowage_tool_describe", "stowage_tool_call"]
    bare = assemble_tools(tools, d, wrapped=False)
    assert bare[1]["name"] == SEARCH_NAME


def test_preselected_tools_follow_the_bridges_in_stable_order():
    tools = wrapped("mcp__a__x", "terminal", "plugin_y", "plugin_z")
    d = decide(tools, mode="preselect", context_length=1_000, core_names=CORE)
    one = assemble_tools(tools, d, keep_visible=["plugin_z", "mcp__a__x", "terminal", "unknown"])
    two = assemble_tools(tools, d, keep_visible=["mcp__a__x", "plugin_z"])
    assert names(one)[-2:] == ["mcp__a__x", "plugin_z"]
    assert json.dumps(one) == json.dumps(two)
    assert names(one).count("terminal") == 1
