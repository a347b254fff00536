from __future__ import annotations

import copy

from stowage.tool_search import Catalog

from .catalogs import tool


def test_accepts_bare_and_openai_wrapped_schemas(schemas):
    wrapped = [{"type": "function", "function": s} for s in schemas]
    assert Catalog.from_schemas(wrapped).checksum == Catalog.from_schemas(schemas).checksum


def test_source_comes_from_toolset_map_schema_or_mcp_name():
    cat = Catalog.from_schemas(
        [tool("mcp__github__create_issue"), tool("kanban_move"), {**tool("video_analyze"), "toolset": "video"}],
        toolset_of={"kanban_move": "kanban"},
    )
    assert cat.get("mcp__github__create_issue").toolset == "mcp-github"
    assert cat.get("mcp__github__create_issue").source == "mcp"
    assert cat.get("kanban_move").toolset == "kanban"
    assert cat.get("kanban_move").source == "plugin"
    assert cat.get("video_analyze").toolset == "video"
    # A callable works as well as a mapping.
    cat2 = Catalog.from_schemas([tool("x_tool")], toolset_of=lambda n: "plugin-x")
    assert cat2.get("x_tool").toolset == "plugin-x"


def test_checksum_ignores_order_but_not_content(schemas):
    base = Catalog.from_schemas(schemas).checksum
    assert Catalog.from_schemas(list(reversed(schemas))).checksum == base
    edited = copy.deepcopy(schemas)
    edited[3]["description"] += "!"
    assert Catalog.from_schemas(edited).checksum != base
    edited = copy.deepcopy(schemas)
    edited[3]["parameters"]["properties"]["path"]["description"] = "Relative path"
    assert Catalog.from_schemas(edited).checksum != base
    assert Catalog.from_schemas(schemas, toolset_of={"weather_forecast": "wx"}).checksum != base
    # Key order inside a schema is not content.
    reordered = [dict(reversed(list(s.items()))) for s in schemas]
    assert Catalog.from_schemas(reordered).checksum == base


def test_first_registration_wins_and_entries_are_sorted():
    cat = Catalog.from_schemas([tool("b", "first"), tool("a"), tool("b", "second"), {"description": "nameless"}])
    assert cat.names == ("a", "b")
    assert cat.get("b").description == "first"
    assert len(cat) == 2 and "a" in cat and "zzz" not in cat


def test_parameters_cannot_be_mutated_through_the_catalog(catalog):
    entry = catalog.get("weather_forecast")
    params = entry.parameters
    params["properties"]["city"]["description"] = "hacked"
    assert entry.parameters["properties"]["city"]["description"] == "City name"
    assert entry.schema()["parameters"]["properties"]["city"]["description"] == "City name"


def test_restrict_keeps_only_the_session_scope(catalog):
    scoped = catalog.restrict({"weather_forecast", "mcp__github__list_issues", "not_a_tool"})
    assert scoped.names == ("mcp__github__list_issues", "weather_forecast")
    assert scoped.checksum != catalog.checksum
