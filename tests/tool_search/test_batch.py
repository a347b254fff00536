"""Batched bridges: ``queries``, ``names`` and ``calls`` lists, checked entry by entry."""

from __future__ import annotations

import json

import pytest

from stowage.tool_search import (
    CALL_NAME,
    DESCRIBE_NAME,
    SEARCH_NAME,
    BridgeService,
    Catalog,
    IndexCache,
    bridge_schemas,
)
from stowage.tool_search.batch import MAX_NAMES, MAX_QUERIES

from .catalogs import SCHEMAS


@pytest.fixture
def svc(catalog: Catalog) -> BridgeService:
    return BridgeService(catalog, cache=IndexCache())


def test_queries_come_back_grouped_with_one_shared_tool_map(svc):
    out = svc.handle(SEARCH_NAME, {"queries": ["create github issue", "read a file from disk"], "limit": 3})
    assert [r["query"] for r in out["results"]] == ["create github issue", "read a file from disk"]
    assert out["results"][0]["matches"][0]["name"] == "mcp__github__create_issue"
    assert out["results"][1]["matches"][0]["name"] == "mcp__filesystem__read_file"
    named = {m["name"] for r in out["results"] for m in r["matches"]}
    assert set(out["tools"]) == named  # every named tool described once, no more
    assert out["tools"]["mcp__github__create_issue"] == {
        "source": "mcp-github",
        "description": "Create a new issue in a GitHub repository.",
        "required": [],
    }
    assert all(set(m) == {"name", "score", "match"} for r in out["results"] for m in r["matches"])
    assert out["total_available"] == len(svc.catalog)


def test_a_bare_string_query_keeps_the_single_answer_shape(svc):
    single = svc.handle(SEARCH_NAME, {"query": "weather"})
    assert single["matches"][0]["name"] == "weather_forecast" and "results" not in single
    as_list = svc.handle(SEARCH_NAME, {"queries": "weather"})  # a string where a list is expected
    assert [r["query"] for r in as_list["results"]] == ["weather"]


def test_bad_entries_get_their_own_errors_and_do_not_hide_the_others(svc):
    out = svc.handle(SEARCH_NAME, {"queries": ["weather", 42, "  ", "weather", "x" * 600, None, "slack message"]})
    results = out["results"]
    assert len(results) == 7
    assert results[0]["matches"][0]["name"] == "weather_forecast"
    assert "not a string" in results[1]["error"]
    assert "empty" in results[2]["error"]
    assert "repeats entry 0" in results[3]["error"]
    assert "over 500 characters" in results[4]["error"] and len(results[4]["query"]) < 50
    assert "not a string" in results[5]["error"]
    assert results[6]["matches"][0]["name"] == "sendSlackMessage"


def test_a_batch_over_the_limit_runs_the_first_ones_and_says_so_for_the_rest(svc):
    queries = [f"query number {i}" for i in range(MAX_QUERIES + 3)]
    results = svc.handle(SEARCH_NAME, {"queries": queries})["results"]
    assert all("matches" in r for r in results[:MAX_QUERIES])
    assert all("limit of 7 queries" in r["error"] for r in results[MAX_QUERIES:])


@pytest.mark.parametrize("bad, message", [([], "is empty"), ({"q": 1}, "must be a list"), (7, "must be a list")])
def test_an_unusable_batch_is_one_clear_error(svc, bad, message):
    out = svc.handle(SEARCH_NAME, {"queries": bad})
    assert message in out["error"]
    assert message in svc.handle(DESCRIBE_NAME, {"names": bad})["error"]


def test_list_all_is_not_batched(svc):
    out = svc.handle(SEARCH_NAME, {"queries": ["*", "weather"]})
    assert "alone" in out["results"][0]["error"] and out["results"][1]["matches"]


def test_names_describe_several_tools_in_order_with_per_name_errors(svc):
    out = svc.handle(DESCRIBE_NAME, {"names": ["weather_forecast", "creat_issue", "read_file", 3, "weather_forecast"]})
    r = out["results"]
    assert r[0]["name"] == "weather_forecast" and r[0]["parameters"]["properties"]["city"]
    assert r[1]["name"] == "creat_issue" and "not available" in r[1]["error"]
    assert r[1]["did_you_mean"][0] == "mcp__github__create_issue"
    assert r[2]["name"] == "mcp__filesystem__read_file"  # forgiving, as the single form
    assert "not a string" in r[3]["error"] and "repeats entry 0" in r[4]["error"]
    many = svc.handle(DESCRIBE_NAME, {"names": [s["name"] for s in SCHEMAS] + ["x", "y", "z"]})["results"]
    assert len(many) == MAX_NAMES + 1 and "limit of 10 tool names" in many[-1]["error"]
    assert all("error" not in x for x in many[: len(SCHEMAS)])
    assert svc.handle(DESCRIBE_NAME, {"name": "weather_forecast"})["name"] == "weather_forecast"  # single form


def test_schemas_declare_the_lists_and_stay_byte_stable():
    search, describe, call = bridge_schemas()
    assert search["parameters"]["properties"]["queries"]["items"] == {"type": "string"}
    assert describe["parameters"]["properties"]["names"]["items"] == {"type": "string"}
    item = call["parameters"]["properties"]["calls"]["items"]
    assert item["required"] == ["name", "arguments"]
    assert json.dumps(bridge_schemas()) == json.dumps(bridge_schemas())
    assert "queries" in search["description"] and "names" in describe["description"]
    assert "calls" in call["description"]


# ----------------------------------------------------------------------------- calls, through a session
def session(scoped: set[str] | None = None):
    from stowage.context_engine.config.settings import load_settings
    from stowage.tool_search.activation import estimate_tokens
    from stowage.tool_search.session import ToolSearchSession

    tools = [{"type": "function", "function": s} for s in SCHEMAS if scoped is None or s["name"] in scoped]
    ts = ToolSearchSession(load_settings({"stowage": {"tool_search": {"enabled": "on"}}}).tool_search, estimate_tokens)
    ts.shape_request(
        tools,
        [{"role": "user", "content": "hi"}],
        context_length=128_000,
        core_names=(),
        toolset_of=lambda _: "",
        registered={t["function"]["name"] for t in tools},
    )
    return ts


def test_calls_run_each_in_scope_entry_and_refuse_the_rest():
    ts = session(scoped={"weather_forecast", "sendSlackMessage"})
    ran: list[tuple[str, dict]] = []

    def dispatch(name, arguments):
        ran.append((name, arguments))
        return json.dumps({"ok": name})

    out = json.loads(
        ts.handle(
            CALL_NAME,
            {
                "calls": [
                    {"name": "weather_forecast", "arguments": {"city": "Oslo"}},
                    {
                        "name": "mcp__filesystem__write_file",
                        "arguments": {"path": "/etc/passwd", "content": ""},
                    },  # out of scope
                    {"name": "weather_forecast", "arguments": {"city": "Oslo"}},  # duplicate
                    "sendSlackMessage",  # not an object
                    {
                        "name": "sendSlackMessage",
                        "arguments": '{"channel": "C1", "text": "hi"}',
                    },  # JSON-string arguments
                    {"name": "weather_forecast", "arguments": "{broken"},
                ]
            },
            dispatch,
        )
    )
    r = out["results"]
    assert r[0] == {"name": "weather_forecast", "result": {"ok": "weather_forecast"}}
    assert "not available to this session" in r[1]["error"]
    assert "repeats entry 0" in r[2]["error"]
    assert "not a {" in r[3]["error"]
    assert r[4]["result"] == {"ok": "sendSlackMessage"}
    assert "not valid JSON" in r[5]["error"]
    assert ran == [("weather_forecast", {"city": "Oslo"}), ("sendSlackMessage", {"channel": "C1", "text": "hi"})]
    assert (out["ran"], out["failed"]) == (2, 4)
    assert ts.calls == 2 and ts.refusals == 2


def test_a_batch_is_never_unwrapped_as_one_direct_call():
    from stowage.tool_search import BridgeError

    ts = session()
    with pytest.raises(BridgeError):  # the glue leaves it to the engine's dispatcher
        ts.resolve_call({"name": "weather_forecast", "arguments": {}, "calls": []})


@pytest.mark.parametrize("calls, message", [([], "is empty"), ("nope", "got a string"), (5, "must be a list")])
def test_unusable_call_batches(calls, message):
    out = json.loads(session().handle(CALL_NAME, {"calls": calls}, lambda n, a: "x"))
    assert message in out["error"]


def test_calls_over_the_limit_and_without_a_dispatcher():
    ts = session()
    many = [{"name": "weather_forecast", "arguments": {"city": str(i)}} for i in range(12)]
    r = json.loads(ts.handle(CALL_NAME, {"calls": many}, lambda n, a: "done"))["results"]
    assert [x.get("result") for x in r[:10]] == ["done"] * 10
    assert all("limit of 10 calls" in x["error"] for x in r[10:])
    r = json.loads(ts.handle(CALL_NAME, {"calls": many[:1]}, None))["results"]
    assert "cannot run" in r[0]["error"]
