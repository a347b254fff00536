"""The optional semantic leg of stowage_tool_search, with a fake embedder (the real one is optional)."""

from __future__ import annotations

from types import SimpleNamespace

from stowage.tool_search import SEARCH_NAME, BridgeService, Catalog, IndexCache
from stowage.tool_search.embeddings import EmbeddingIndexCache, tool_text
from stowage.tool_search.semantic import MATCH_SEMANTIC, SemanticSearch, semantic_leg

from .catalogs import FakeEmbedder, tool


def service(catalog: Catalog, embedder) -> BridgeService:
    return BridgeService(catalog, cache=IndexCache(), semantic=SemanticSearch(embedder, cache=EmbeddingIndexCache()))


def test_the_semantic_leg_finds_what_bm25_cannot(catalog):
    plain = BridgeService(catalog, cache=IndexCache()).search("do I need an umbrella")
    fused = service(catalog, FakeEmbedder()).search("do I need an umbrella")
    assert plain["matches"] == [] or plain["matches"][0]["name"] != "weather_forecast"
    assert fused["matches"][0]["name"] == "weather_forecast" and fused["matches"][0]["match"] == MATCH_SEMANTIC


def test_named_tools_stay_first_and_other_scripts_get_nothing(catalog):
    svc = service(catalog, FakeEmbedder())
    assert svc.search("mcp__github__list_issues")["matches"][0]["name"] == "mcp__github__list_issues"
    assert svc.search("北京后天的天气如何")["matches"] == []


def test_batched_queries_use_the_semantic_leg_too(catalog):
    out = service(catalog, FakeEmbedder()).handle(SEARCH_NAME, {"queries": ["umbrella today", "create issue"]})
    assert out["results"][0]["matches"][0]["name"] == "weather_forecast"
    assert out["results"][1]["matches"][0]["name"] == "mcp__github__create_issue"


def test_the_model_loads_on_first_search_only_and_its_absence_means_bm25(catalog):
    loads = []

    def loader():
        loads.append(1)
        return None  # the extra is not installed

    svc = service(catalog, loader)
    assert loads == []
    bm25 = BridgeService(catalog, cache=IndexCache()).search("create github issue")
    assert svc.search("create github issue") == bm25
    svc.search("weather")
    assert loads == [1]


def test_semantic_is_off_by_default_and_shared_when_on():
    assert semantic_leg(SimpleNamespace(semantic=False), lambda: None) is None
    on = SimpleNamespace(semantic=True)
    assert semantic_leg(on, lambda: None) is semantic_leg(on, lambda: None)


def test_embedded_text_includes_parameter_descriptions():
    entry = Catalog.from_schemas([tool("send", "Send it.", channel="Channel id to post to")]).entries[0]
    assert tool_text(entry) == "send: Send it. Parameters: channel (Channel id to post to)"
