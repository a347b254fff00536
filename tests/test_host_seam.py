"""One seam between the Hermes glue and the engine: the glue calls the engine only through the host contract's
members and the calls the contract lists for the glue (``host_contract.GLUE_CALLS``), and never reads the session
(``engine.state``).  What the glue imports is held by the layer test (``HOST_MAY_IMPORT``)."""

from __future__ import annotations

import ast
from pathlib import Path

from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.host_adapter.host_contract import GLUE_CALLS, member_names

HOST = Path(__file__).resolve().parents[1] / "host"
ENGINE_NAMES = {"engine", "parent", "child", "guest", "eng"}  # how the glue names an engine it holds
NOT_AN_ENGINE = {"notice.py"}  # its ``engine`` is the configured engine's name (a string)


def engine_uses(source: str) -> list[tuple[int, str]]:
    """(line, attribute) of each attribute the code reads on a name that holds an engine, and of every ``.state``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and (
            node.attr == "state" or isinstance(node.value, ast.Name) and node.value.id in ENGINE_NAMES
        ):
            found.append((node.lineno, node.attr))
    return found


def test_the_glue_calls_the_engine_only_through_the_seam():
    allowed = set(member_names()) | set(GLUE_CALLS)
    found = [
        f"host/{path.name}:{line}: .{attr}"
        for path in sorted(HOST.glob("*.py"))
        if path.name not in NOT_AN_ENGINE
        for line, attr in engine_uses(path.read_text(encoding="utf-8"))
        if attr not in allowed
    ]
    assert not found, "the glue reaches past the engine's seam:\n" + "\n".join(found)


def test_every_glue_call_is_the_engines():
    missing = [name for name in GLUE_CALLS if not hasattr(StowageEngineCore(), name)]
    assert not missing, missing


def test_a_reach_into_the_session_is_found():
    uses = engine_uses("x = engine.state.store.root\nengine.preview()\nother.state\n")
    assert (1, "state") in uses and (2, "preview") in uses and (3, "state") in uses


def test_a_bridge_call_resolves_only_when_it_is_one_the_session_can_run():
    engine = StowageEngineCore()
    assert engine.bridged_call_target("terminal", '{"command": "ls"}') is None  # not a bridge call
    assert engine.bridged_call_target("stowage_tool_call", "{not json") is None
    # nothing is deferred in this session: refused here (left for the engine's answer), never counted
    assert engine.bridged_call_target("stowage_tool_call", '{"name": "terminal", "arguments": {}}') is None
    assert engine.state.tool_search.calls == 0 and engine.state.tool_search.refusals == 0
    assert engine.scoped_tool_names() == []
