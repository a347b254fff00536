"""``preselect: true`` combined with ``enabled``: the mode decides deferral, preselect only adds picks.

Regression: ``enabled: on`` with ``preselect: true`` used to become the
library's ``preselect`` mode, which follows the auto threshold, so below the
threshold nothing was deferred although the user had asked for ``on``.
"""

from __future__ import annotations

from typing import Any

import pytest

from stowage.context_engine.config.settings import load_settings
from stowage.tool_search import BRIDGE_NAMES
from stowage.tool_search.activation import estimate_tokens
from stowage.tool_search.session import ToolSearchSession

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"weather_{what}",
            "description": f"Get the {what} forecast.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for what in ("rain", "wind", "snow", "sun")
]


def shape(tool_search: dict[str, Any], context_length: int = 128_000) -> tuple[ToolSearchSession, list[str]]:
    session = ToolSearchSession(load_settings({"stowage": {"tool_search": tool_search}}).tool_search, estimate_tokens)
    shaped = session.shape_request(
        TOOLS,
        [{"role": "user", "content": "will there be snow tomorrow?"}],
        context_length=context_length,
        core_names=(),
        toolset_of=lambda _: "weather",
        registered={t["function"]["name"] for t in TOOLS},
    )
    return session, [t["function"]["name"] for t in shaped.tools]


def test_on_with_preselect_defers_below_the_threshold_and_keeps_the_best_match() -> None:
    session, names = shape({"enabled": "on", "preselect": True, "preselect_k": 1})
    assert set(BRIDGE_NAMES) <= set(names)
    assert [n for n in names if n.startswith("weather_")] == ["weather_snow"]
    assert session.status().active and session.status().preselected == ["weather_snow"]


@pytest.mark.parametrize("context_length, active", [(1_000, True), (10_000_000, False)])
def test_auto_with_preselect_still_follows_the_threshold(context_length: int, active: bool) -> None:
    session, names = shape({"enabled": "auto", "preselect": True, "preselect_k": 1}, context_length)
    assert bool(set(BRIDGE_NAMES) & set(names)) is active
    assert session.status().active is active


def test_off_with_preselect_defers_nothing() -> None:
    session, names = shape({"enabled": "off", "preselect": True})
    assert names == [t["function"]["name"] for t in TOOLS]


def test_bridging_a_directly_listed_tool_says_to_call_it_by_name():
    import json

    from stowage.context_engine.config.settings import load_settings
    from stowage.tool_search.session import ToolSearchSession

    def schema(name: str) -> dict:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name} tool",
                "parameters": {"type": "object", "properties": {}},
            },
        }

    session = ToolSearchSession(
        load_settings({"stowage": {"tool_search": {"enabled": "on"}}}).tool_search, lambda t: len(t) // 4
    )
    session.shape_request(
        [schema("terminal"), schema("plugin_a"), schema("plugin_b")],
        [],
        context_length=128_000,
        core_names={"terminal"},
        toolset_of=lambda n: "x",
        registered={"terminal", "plugin_a", "plugin_b"},
    )
    reply = json.loads(session.handle("stowage_tool_call", {"name": "terminal", "arguments": {}}, None))
    assert "listed directly" in reply["error"]
    refused = json.loads(session.handle("stowage_tool_call", {"name": "secret_tool", "arguments": {}}, None))
    assert "not available to this session" in refused["error"]
