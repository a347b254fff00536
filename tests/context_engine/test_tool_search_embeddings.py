"""Preselect in a session with an embedding endpoint: config wiring, pinned tools, once per message, failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from stowage.context_engine.config.settings import StowageConfigError, load_settings
from stowage.context_engine.session.tool_search_embeddings import DenseLegSource, reset_shared_legs
from stowage.tool_search.activation import estimate_tokens
from stowage.tool_search.session import ToolSearchSession
from stowage_dev.embedding_server import ConceptEmbedder, EmbeddingServer

from .five_tools import FIVE_TOOLS

FAKE_KEY = "sk-test-synthetic-0000"


def schema(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": {}}},
    }


TOOLS = [schema(name, description) for name, description in FIVE_TOOLS]
NAMES = {t["function"]["name"] for t in TOOLS}


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    reset_shared_legs()
    with EmbeddingServer(ConceptEmbedder(), slow_s=1.0) as s:
        yield s
    reset_shared_legs()


def session(tool_search: dict[str, Any], store: Path | None) -> ToolSearchSession:
    """List-mode pre-selection (``inline: off``); the inline mode is tested in test_tool_search_inline.py."""
    settings = {"enabled": "on", "preselect": True, "inline": "off", **tool_search}
    ts = load_settings({"stowage": {"tool_search": settings}}).tool_search
    return ToolSearchSession(ts, estimate_tokens, dense=DenseLegSource(ts, lambda: store))


def visible(s: ToolSearchSession, message: str) -> list[str]:
    shaped = s.shape_request(
        TOOLS,
        [{"role": "user", "content": message}],
        context_length=128_000,
        core_names=(),
        toolset_of=lambda _: "x",
        registered=NAMES,
    )
    return [t["function"]["name"] for t in shaped.tools if t["function"]["name"] in NAMES]


def endpoint(server: EmbeddingServer, **extra: Any) -> dict[str, Any]:
    return {"embedding_endpoint": server.base_url, "embedding_model": "concepts", "preselect_k": 1, **extra}


def test_a_paraphrase_keeps_the_right_tool_visible_and_vectors_land_in_the_store(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    bm25 = session({"preselect_k": 1}, tmp_path)
    assert visible(bm25, "check what is running") == []
    s = session(endpoint(server), tmp_path)
    assert visible(s, "check what is running") == ["proc_ls"]
    assert s.status().semantic.startswith("BM25 + embeddings from " + server.base_url)
    assert len(list((tmp_path / "tool-vectors").glob("tool-vectors-*.json"))) == 1


def test_one_decision_per_user_message_even_when_the_endpoint_fails_mid_message(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    s = session(endpoint(server, embedding_timeout_s=0.3), tmp_path)
    assert visible(s, "check what is running") == ["proc_ls"]
    calls = len(server.requests)
    server.mode = "500"
    for _ in range(3):  # the tool results of the same message: same list, no call
        assert visible(s, "check what is running") == ["proc_ls"]
    assert len(server.requests) == calls
    # the next message: the endpoint fails, BM25 alone decides, the turn goes on
    assert visible(s, "read the file") == ["fs_read"]
    assert s.status().semantic.startswith("BM25 alone: embeddings from")
    assert "HTTP 500" in s.status().semantic


def test_pinned_tools_stay_visible_on_top_of_k(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(endpoint(server, preselect_pinned=["maps_route", "not_a_tool"]), tmp_path)
    assert visible(s, "check what is running") == ["maps_route", "proc_ls"]


def test_the_key_comes_from_the_named_variable(
    server: EmbeddingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STOWAGE_TEST_EMBED_KEY", FAKE_KEY)
    s = session(endpoint(server, embedding_api_key_env="STOWAGE_TEST_EMBED_KEY"), tmp_path)
    visible(s, "check what is running")
    assert set(server.auth_headers) == {f"Bearer {FAKE_KEY}"}
    stored = "".join(p.read_text() for p in (tmp_path / "tool-vectors").iterdir())
    assert FAKE_KEY not in stored


def test_a_missing_key_variable_is_bm25_alone_with_the_reason(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(endpoint(server, embedding_api_key_env="STOWAGE_TEST_UNSET_VARIABLE"), tmp_path)
    assert visible(s, "read the file") == ["fs_read"]
    assert "STOWAGE_TEST_UNSET_VARIABLE" in s.status().semantic and not server.requests


def test_auxiliary_without_a_host_resolver_is_bm25_alone(tmp_path: Path) -> None:
    reset_shared_legs()
    s = session({"embedding_endpoint": "auxiliary", "embedding_model": "m", "preselect_k": 1}, tmp_path)
    assert visible(s, "read the file") == ["fs_read"]
    assert "auxiliary" in s.status().semantic


def test_no_endpoint_no_semantic_line(tmp_path: Path) -> None:
    s = session({"preselect_k": 1}, tmp_path)
    visible(s, "read the file")
    assert s.status().semantic == ""


def test_a_bad_timeout_is_a_config_error() -> None:
    with pytest.raises(StowageConfigError, match="embedding_timeout_s"):
        load_settings({"stowage": {"tool_search": {"embedding_timeout_s": 0}}})


def test_status_before_any_request_builds_nothing(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(endpoint(server), tmp_path)
    assert s.status().semantic == ""
    assert not server.requests and not (tmp_path / "tool-vectors").exists()


def test_semantic_search_bridge_uses_the_endpoint(server: EmbeddingServer, tmp_path: Path) -> None:
    import json

    plain = session(endpoint(server, preselect=False), tmp_path)
    visible(plain, "hello")
    found = json.loads(plain.handle("stowage_tool_search", {"query": "check what is running"}, None))
    assert "proc_ls" not in [m["name"] for m in found.get("matches", [])][:1]  # BM25 alone misses it
    s = session(endpoint(server, preselect=False, semantic=True), tmp_path)
    visible(s, "hello")
    found = json.loads(s.handle("stowage_tool_search", {"query": "check what is running"}, None))
    assert [m["name"] for m in found["matches"]][:1] == ["proc_ls"]
    server.mode = "500"
    found = json.loads(s.handle("stowage_tool_search", {"query": "which processes exist"}, None))
    assert [m["name"] for m in found["matches"]][:1] == ["proc_ls"]  # BM25 alone ("processes")
    assert s.status().semantic.startswith("BM25 alone")
