from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.tool_search import (
    CALL_NAME,
    DESCRIBE_NAME,
    SEARCH_NAME,
    BridgeError,
    BridgeService,
    Catalog,
    IndexCache,
    ToolNotAvailable,
    bridge_schemas,
    bridge_tool_defs,
    parse_arguments,
)
from stowage.tool_search.bridges import LIST_PAGE_SIZE

from .catalogs import tool


def service(catalog: Catalog) -> BridgeService:
    return BridgeService(catalog, cache=IndexCache())


def test_bridge_names_are_exact():
    assert [s["name"] for s in bridge_schemas()] == [SEARCH_NAME, DESCRIBE_NAME, CALL_NAME]
    assert (SEARCH_NAME, DESCRIBE_NAME, CALL_NAME) == (
        "stowage_tool_search",
        "stowage_tool_describe",
        "stowage_tool_call",
    )
    assert [d["function"]["name"] for d in bridge_tool_defs()] == [SEARCH_NAME, DESCRIBE_NAME, CALL_NAME]
    assert all(d["type"] == "function" for d in bridge_tool_defs())


def test_schemas_are_byte_identical_whatever_the_catalog():
    before = json.dumps(bridge_schemas(), sort_keys=False)
    small = service(Catalog.from_schemas([tool("a_tool", "A.")]))
    big = service(Catalog.from_schemas([tool(f"tool_{i}", f"Tool number {i}.") for i in range(3000)]))
    small.search("a")
    big.search("tool 17")
    after = json.dumps(bridge_schemas(), sort_keys=False)
    assert before == after
    # No counts or tool names leak into the text the provider caches.
    text = " ".join(s["description"] for s in bridge_schemas())
    assert "3000" not in after and "tool_17" not in after
    assert not re.search(r"\b\d{2,}\b", text)


def test_schemas_cannot_be_mutated_by_callers():
    schemas = bridge_schemas()
    schemas[0]["description"] = "changed"
    schemas[0]["parameters"]["properties"].clear()
    assert bridge_schemas()[0]["description"] != "changed"
    assert "query" in bridge_schemas()[0]["parameters"]["properties"]


def test_list_all_is_documented_in_the_search_schema():
    search = bridge_schemas()[0]
    assert '"*"' in search["description"]
    assert '"*"' in search["parameters"]["properties"]["query"]["description"]
    assert search["parameters"]["required"] == []  # query or queries


def test_search_returns_ranked_hits(catalog):
    out = service(catalog).search("create github issue", limit=3)
    assert out["total_available"] == len(catalog)
    first = out["matches"][0]
    assert first["name"] == "mcp__github__create_issue"
    assert first["source"] == "mcp-github"
    assert first["description"] == "Create a new issue in a GitHub repository."
    assert first["required"] == []
    req = Catalog.from_schemas(
        [
            {
                "name": "t",
                "description": "T.",
                "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            }
        ]
    )
    assert service(req).search("t")["matches"][0]["required"] == ["a"]
    assert isinstance(first["score"], float) and first["score"] > 0
    assert len(out["matches"]) == 3
    json.dumps(out)  # the glue serializes it as is


def test_search_limit_is_clamped(catalog):
    svc = BridgeService(catalog, cache=IndexCache(), default_limit=2, max_limit=4)
    assert len(svc.search("file")["matches"]) <= 2
    assert len(svc.search("a file to read or write or issue", limit=100)["matches"]) <= 4
    assert len(svc.search("file", limit="bogus")["matches"]) <= 2
    assert len(svc.search("file", limit=-3)["matches"]) == 1


def test_empty_query_is_an_error(catalog):
    assert "error" in service(catalog).search("   ")


def test_long_descriptions_are_shortened():
    cat = Catalog.from_schemas([tool("verbose", "word " * 500)])
    desc = service(cat).search("verbose")["matches"][0]["description"]
    assert len(desc) <= 241 and desc.endswith("…")


def test_list_all_names_every_tool_grouped_by_toolset(catalog):
    out = service(catalog).search("*")
    listed = [n for names in out["tools"].values() for n in names]
    assert sorted(listed) == sorted(catalog.names)
    assert out["tools"]["mcp-github"] == [
        "mcp__github__create_issue",
        "mcp__github__create_pull_request",
        "mcp__github__list_issues",
    ]
    assert "next_offset" not in out


def test_list_all_pages_large_catalogs():
    n = LIST_PAGE_SIZE + 7
    cat = Catalog.from_schemas([tool(f"t{i:05d}") for i in range(n)])
    svc = service(cat)
    page1 = svc.search("*")
    assert page1["next_offset"] == LIST_PAGE_SIZE
    page2 = svc.handle(SEARCH_NAME, {"query": "*", "offset": page1["next_offset"]})
    names = [x for p in (page1, page2) for v in p["tools"].values() for x in v]
    assert names == list(cat.names)


def test_describe_returns_the_full_schema(catalog):
    out = service(catalog).describe("mcp__filesystem__write_file")
    assert out["name"] == "mcp__filesystem__write_file"
    assert out["parameters"]["properties"]["content"] == {"type": "string", "description": "Text to write"}
    assert out["source"] == "mcp-filesystem"


def test_describe_forgives_an_unambiguous_name_variant(catalog):
    assert service(catalog).describe("read_file")["name"] == "mcp__filesystem__read_file"
    assert service(catalog).describe("Weather-Forecast")["name"] == "weather_forecast"


def test_describe_unknown_tool_suggests_close_names(catalog):
    out = service(catalog).describe("creat_issue")
    assert "error" in out and "not available to this session" in out["error"]
    assert out["did_you_mean"][0] == "mcp__github__create_issue"
    assert "mcp__github__create_issue" in out["error"]
    assert "error" in service(catalog).describe("")


def test_resolve_call_accepts_object_or_json_string(catalog):
    svc = service(catalog)
    name = "weather_forecast"
    assert svc.resolve_call(name, {"city": "Oslo"}) == (name, {"city": "Oslo"})
    assert svc.resolve_call(name, '{"city": "Oslo"}') == (name, {"city": "Oslo"})
    assert svc.resolve_call(name, "") == (name, {})
    assert svc.resolve_call(name, None) == (name, {})
    assert svc.resolve_call(f" {name} ", "  {}  ") == (name, {})


@pytest.mark.parametrize("bad", ['{"city": ', "[1, 2]", "42", '"text"', 3.5, ["a"]])
def test_resolve_call_rejects_non_objects(catalog, bad):
    with pytest.raises(BridgeError) as err:
        service(catalog).resolve_call("weather_forecast", bad)
    assert "arguments" in str(err.value)


def test_resolve_call_refuses_tools_outside_the_session_scope(catalog):
    # The scope-leak regression: a session scoped to two tools cannot reach a third,
    # even one that exists in the full catalog or is a core host tool.
    scoped = service(catalog.restrict({"weather_forecast", "mcp__github__list_issues"}))
    with pytest.raises(ToolNotAvailable) as err:
        scoped.resolve_call("mcp__filesystem__write_file", {"path": "/etc/passwd", "content": ""})
    assert "not available to this session" in str(err.value)
    assert err.value.name == "mcp__filesystem__write_file"
    with pytest.raises(ToolNotAvailable):
        scoped.resolve_call("terminal", {"command": "id"})
    assert "error" in scoped.describe("mcp__filesystem__write_file")
    assert all(m["name"] != "mcp__filesystem__write_file" for m in scoped.search("write file")["matches"])
    listed = [n for v in scoped.search("*")["tools"].values() for n in v]
    assert listed == ["mcp__github__list_issues", "weather_forecast"]


def test_resolve_call_is_exact_and_refuses_bridges(catalog):
    svc = service(catalog)
    with pytest.raises(ToolNotAvailable) as err:
        svc.resolve_call("create_issue", {})  # describe forgives this; a call does not guess
    assert "mcp__github__create_issue" in str(err.value)
    with pytest.raises(BridgeError):
        svc.resolve_call(CALL_NAME, {})
    with pytest.raises(BridgeError):
        svc.resolve_call("", {})


def test_handle_parses_raw_model_arguments(catalog):
    svc = service(catalog)
    out = svc.handle(SEARCH_NAME, '{"query": "weather", "limit": 1}')
    assert [m["name"] for m in out["matches"]] == ["weather_forecast"]
    assert svc.handle(DESCRIBE_NAME, {"name": "weather_forecast"})["name"] == "weather_forecast"
    assert "error" in svc.handle(SEARCH_NAME, "{not json")
    assert "error" in svc.handle(CALL_NAME, {"name": "weather_forecast", "arguments": {}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_argument_string_round_trips(args):
    assert parse_arguments(json.dumps(args)) == args
    assert parse_arguments(args) == args


def test_configured_limits_show_in_the_schema_and_stay_stable():
    custom = json.dumps(bridge_schemas(default_limit=3, max_limit=10))
    assert custom == json.dumps(bridge_schemas(default_limit=3, max_limit=10))
    assert "default 3, at most 10" in custom
    assert "default 5, at most 20" in json.dumps(bridge_schemas())
    assert json.dumps(bridge_schemas(5, 20)) == json.dumps(bridge_schemas())
