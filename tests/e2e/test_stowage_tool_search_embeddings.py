"""Preselect with an embedding endpoint, end to end: a real ``AIAgent``, the MCP catalog, a stand-in endpoint.

The endpoint (plugins/stowage_dev/embedding_server.py) runs in the test
process on 127.0.0.1 and serves a deterministic synonym-hashing "model";
Hermes runs in a scenario subprocess with ``stowage.tool_search`` pointed at
it.  First message: a paraphrase BM25 cannot match keeps the right tool
visible, and the scripted model calls it directly, with no search round
trip.  Then the endpoint starts failing: the next message is ranked by
BM25 alone, the turn completes, and the status says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stowage.tool_search import BRIDGE_NAMES, Catalog, preselect
from stowage_dev.embedding_server import ConceptEmbedder, EmbeddingServer
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario

from .test_stowage_tool_search import (  # noqa: F401 - the fixtures are used by name
    CapturedCatalog,
    assert_consistent,
    catalog_home,
    catalog_records,
    mcp_catalog,
    npm_root,
    run_catalog,
)

pytestmark = pytest.mark.e2e

PARAPHRASE = "tell #deploys the release went out"
TARGET = "slack_slack_post_message"
K = 4


def test_a_paraphrase_keeps_its_tool_visible_and_a_failing_endpoint_falls_back_to_bm25(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    schemas = [
        {"name": f"{server}_{t['name']}", "description": t.get("description", ""), "parameters": t["inputSchema"]}
        for server, info in mcp_catalog.data["servers"].items()
        for t in info["tools"]
    ]
    assert TARGET not in preselect(Catalog.from_schemas(schemas), PARAPHRASE, k=K)  # BM25 alone misses it

    with EmbeddingServer(ConceptEmbedder()) as endpoint:
        home = catalog_home(
            e2e_tmp / "embed",
            fake_llm.base_url,
            {
                "enabled": "on",
                "preselect": True,
                "preselect_k": K,
                "embedding_endpoint": endpoint.base_url,
                "embedding_model": "stand-in",
                "embedding_timeout_s": 2,
            },
        )
        args = {"channel_id": "C0123", "text": "release went out"}
        fake_llm.on(Match.user_turn("tell #deploys"), Reply.tool(ToolCall(TARGET, args, id="call_post")))
        fake_llm.on(Match.after_tool_result("call_post"), Reply.say("told them"))
        fake_llm.on(Match.user_turn("read the text file"), Reply.say("it says hello"))
        # the endpoint answers until the paraphrase was embedded, then fails with HTTP 500
        seen = {"paraphrase": False}

        def failing(texts: list[str]) -> bool:
            failed = seen["paraphrase"]
            seen["paraphrase"] = seen["paraphrase"] or texts == [PARAPHRASE]
            return failed

        endpoint.fail_when = failing
        scenario = Scenario().turn(PARAPHRASE, id="post").turn("read the text file notes.txt", id="read")
        result = run_catalog(home, scenario, mcp_catalog)

        post = [r for r in result.step_requests(fake_llm, "post") if r.is_main]
        assert len(post) == 2  # the direct call and the answer: no search round trip
        for request in post:
            assert TARGET in request.tool_names and set(BRIDGE_NAMES) <= set(request.tool_names)
            assert_consistent(request)
        assert post[0].tool_names == post[1].tool_names  # one tool list per user message: the cache prefix holds
        assert [r["tool"] for r in catalog_records(home, "call")] == [TARGET]
        assert result.step("post")["engine"]["status"]["tool_search"]["semantic"].startswith("BM25 + embeddings")

        # one query call per message: the paraphrase once (both requests of its turn), the next message once
        queries = [r for r in endpoint.requests if len(r) == 1]
        assert queries == [[PARAPHRASE], ["read the text file notes.txt"]]
        assert sum(len(r) for r in endpoint.requests[: endpoint.requests.index([PARAPHRASE])]) >= len(
            mcp_catalog.names
        )  # the catalog's tools, embedded before the first query

        read = [r for r in result.step_requests(fake_llm, "read") if r.is_main]
        assert read and result.final_responses()[-1] == "it says hello"
        assert "filesystem_read_text_file" in read[0].tool_names and TARGET not in read[0].tool_names
        status = result.step("read")["engine"]["status"]["tool_search"]
        assert status["semantic"].startswith("BM25 alone") and "HTTP 500" in status["semantic"]

    vector_files = list((home.path / "stowage" / "tool-vectors").glob("tool-vectors-*.json"))
    assert len(vector_files) == 1
    stored = json.loads(vector_files[0].read_text())
    assert len(stored["vectors"]) >= len(mcp_catalog.names) and "stand-in" in stored["identity"]
