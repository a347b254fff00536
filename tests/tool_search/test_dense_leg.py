"""The semantic leg on the request path: vectors on disk, one query call, BM25 alone on failure."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Iterator

import pytest

from stowage.tool_search import Catalog, preselect
from stowage.tool_search.dense_leg import DenseLeg
from stowage.tool_search.http_embedder import HttpEmbedder
from stowage.tool_search.vector_file import decode, encode, file_for, load, save
from stowage_dev.embedding_server import ConceptEmbedder, EmbeddingServer

SCHEMAS = [
    {"name": "proc_ls", "description": "Show processes on the host.", "parameters": {}},
    {"name": "fs_read", "description": "Read a file's contents.", "parameters": {}},
    {"name": "gh_new_issue", "description": "Open a bug ticket on GitHub.", "parameters": {}},
    {"name": "chat_post", "description": "Send a chat message to a channel.", "parameters": {}},
]


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(ConceptEmbedder(), slow_s=1.0) as s:
        yield s


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def leg(server: EmbeddingServer, folder: Path | None, clock: Clock | None = None) -> DenseLeg:
    embedder = HttpEmbedder(server.base_url, "concepts", timeout_s=0.4)
    return DenseLeg(embedder, embedder.identity, folder=folder, clock=clock or Clock(), label="stand-in")


def test_vectors_round_trip_as_float32() -> None:
    assert decode(encode([0.5, -1.0, 0.25])) == [0.5, -1.0, 0.25]


def test_ranks_a_paraphrase_bm25_cannot_match(server: EmbeddingServer, tmp_path: Path) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    assert preselect(catalog, "check what is running", k=2) == []  # no word in common
    assert preselect(catalog, "check what is running", k=2, dense=leg(server, tmp_path))[0] == "proc_ls"


def test_tool_vectors_are_written_once_and_reused_across_processes(server: EmbeddingServer, tmp_path: Path) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    first = leg(server, tmp_path)
    first.rank(catalog, "check what is running", 3)
    assert server.texts_embedded == len(SCHEMAS) + 1
    path = file_for(tmp_path, first.identity)
    assert path.is_file() and not list(tmp_path.glob("*.tmp"))
    assert len(load(path, first.identity)) == len(SCHEMAS)
    assert first.file_bytes == path.stat().st_size

    # a new process with the same model: only the query is embedded
    server.requests.clear()
    second = leg(server, tmp_path)
    assert second.rank(catalog, "check what is running", 3)[0] == "proc_ls"
    assert server.requests == [["check what is running"]]
    # another model does not read these vectors
    assert load(path, "http://elsewhere/v1/embeddings|other") == {}


def test_only_changed_tools_are_embedded_again(server: EmbeddingServer, tmp_path: Path) -> None:
    first = leg(server, tmp_path)
    first.rank(Catalog.from_schemas(SCHEMAS), "q", 2)
    server.requests.clear()
    edited = [dict(s) for s in SCHEMAS]
    edited[1]["description"] = "Read a document."
    edited.append({"name": "maps_route", "description": "Directions between places.", "parameters": {}})
    leg(server, tmp_path).rank(Catalog.from_schemas(edited), "q", 2)
    embedded = [t for r in server.requests for t in r]
    assert len(embedded) == 3 and "q" in embedded  # the edited tool, the new one, the query
    assert any("document" in t for t in embedded) and any("Directions" in t for t in embedded)


def test_a_repeated_message_makes_no_call(server: EmbeddingServer) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    dense = leg(server, None)
    for _ in range(3):
        dense.rank(catalog, "tell the team", 2)
    assert len(server.requests) == 2  # the catalog once, the query once
    assert dense.query_calls == 1


@pytest.mark.parametrize("mode", ["500", "bad_json", "slow", "drip", "hang"])
def test_failure_means_bm25_alone_one_log_line_and_a_pause(
    server: EmbeddingServer, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    clock = Clock()
    dense = leg(server, None, clock)
    dense.rank(catalog, "warm", 2)  # fixes the dimensions
    server.mode = mode
    server.drip_s = 0.05
    calls = len(server.requests)
    with caplog.at_level(logging.WARNING):
        assert dense.rank(catalog, "show open tickets", 2) is None
        assert dense.rank(catalog, "another message", 2) is None  # paused: the endpoint is not asked
        assert preselect(catalog, "read the file", k=1, dense=dense) == ["fs_read"]  # BM25 alone
    assert len(server.requests) == calls + 1
    failures = [r for r in caplog.records if "embeddings failed" in r.getMessage()]
    assert len(failures) == 1
    assert dense.status_line().startswith("BM25 alone")
    # after the pause the endpoint is asked again, and works
    server.mode = "ok"
    clock.now += dense.retry_after_s + 1
    assert dense.rank(catalog, "show open tickets", 2)[0] == "gh_new_issue"
    assert dense.error is None and dense.status_line().startswith("BM25 + embeddings")


def test_an_unwritable_folder_still_ranks(server: EmbeddingServer, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    dense = leg(server, blocker / "sub")
    assert dense.rank(Catalog.from_schemas(SCHEMAS), "check what is running", 1) == ["proc_ls"]


def test_a_corrupt_file_is_ignored_and_replaced(server: EmbeddingServer, tmp_path: Path) -> None:
    dense = leg(server, tmp_path)
    assert dense.path is not None
    dense.path.write_text("{not json")
    assert dense.rank(Catalog.from_schemas(SCHEMAS), "check what is running", 1) == ["proc_ls"]
    assert json.loads(dense.path.read_text())["format"] == 1


def test_a_file_from_a_model_of_another_size_is_started_afresh(server: EmbeddingServer, tmp_path: Path) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    dense = leg(server, tmp_path)
    assert dense.path is not None
    save(dense.path, dense.identity, {"stale": [1.0, 0.0]})
    assert dense.rank(catalog, "check what is running", 1) == ["proc_ls"]
    assert "stale" not in load(dense.path, dense.identity)


def test_a_large_catalog_is_embedded_in_small_batches_in_the_background_with_bm25_meanwhile(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    schemas = [{"name": f"tool_{i}", "description": f"Tool number {i}.", "parameters": {}} for i in range(200)]
    schemas.append({"name": "proc_ls", "description": "Show processes on the host.", "parameters": {}})
    catalog = Catalog.from_schemas(schemas)
    embedder = HttpEmbedder(server.base_url, "concepts", timeout_s=2)
    dense = DenseLeg(embedder, embedder.identity, folder=tmp_path, batch=16)
    assert dense.rank(catalog, "check what is running", 3, wait_s=0) is None  # the request does not wait
    assert dense.pending > 0 and "to go" in dense.status_line()
    assert dense.idle()
    assert dense.pending == 0 and dense.tools_embedded == len(schemas)
    assert len(load(file_for(tmp_path, dense.identity), dense.identity)) == len(schemas)
    assert dense.rank(catalog, "check what is running", 3)[0] == "proc_ls"
    assert all(len(r) <= 16 for r in server.requests)


def test_indexing_resumes_where_it_stopped(server: EmbeddingServer, tmp_path: Path) -> None:
    schemas = [{"name": f"tool_{i}", "description": f"Tool number {i}.", "parameters": {}} for i in range(100)]
    catalog = Catalog.from_schemas(schemas)
    embedder = HttpEmbedder(server.base_url, "concepts", timeout_s=2)
    server.fail_when = lambda texts: len(server.requests) > 3  # three batches go through, then HTTP 500
    first = DenseLeg(embedder, embedder.identity, folder=tmp_path, batch=16)
    assert first.rank(catalog, "q", 3, wait_s=0) is None
    assert first.idle() and first.error is not None and "HTTP 500" in first.status_line()
    assert len(load(file_for(tmp_path, first.identity), first.identity)) == 48  # progress kept on disk
    server.fail_when = None
    server.requests.clear()
    second = DenseLeg(embedder, embedder.identity, folder=tmp_path, batch=16)  # a restarted process
    assert second.rank(catalog, "q", 3) is not None
    assert sum(len(r) for r in server.requests) == 100 - 48 + 1  # the rest, and the query


def test_a_model_answering_another_size_is_detected_reindexed_and_shown(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    dense = leg(server, tmp_path)
    assert dense.rank(catalog, "check what is running", 1) == ["proc_ls"]
    server.dimensions = 128  # the model behind the name changed (384 -> 128 in the field)
    assert dense.rank(catalog, "show open tickets", 1, wait_s=0) is None
    dense.idle()
    status = dense.status_line()
    assert status.startswith("BM25 alone") and "128 dimensions" in status, status
    assert dense.rank(catalog, "show open tickets", 1) == ["gh_new_issue"]
    assert dense.status_line().startswith("BM25 + embeddings") and "re-embedded" in dense.status_line()
    stored = json.loads(file_for(tmp_path, dense.identity).read_text())
    assert stored["dimensions"] == 128 and len(stored["vectors"]) == len(SCHEMAS)


def test_the_vector_file_is_the_models_not_the_urls(server: EmbeddingServer, tmp_path: Path) -> None:
    catalog = Catalog.from_schemas(SCHEMAS)
    leg(server, tmp_path).rank(catalog, "q", 1)
    with EmbeddingServer(ConceptEmbedder()) as other:  # the same model on another port
        embedder = HttpEmbedder(other.base_url, "concepts", timeout_s=2)
        moved = DenseLeg(embedder, embedder.identity, folder=tmp_path)
        assert moved.rank(catalog, "q", 1) is not None
        assert other.requests == [["q"]]  # only the query: the tools' vectors were found by model


def test_only_the_first_request_of_a_catalog_being_indexed_waits(server: EmbeddingServer, tmp_path: Path) -> None:
    schemas = [{"name": f"tool_{i}", "description": f"Tool number {i}.", "parameters": {}} for i in range(64)]
    catalog = Catalog.from_schemas(schemas)
    server.mode = "slow"  # each batch takes 1 s: the catalog takes 4 s
    embedder = HttpEmbedder(server.base_url, "concepts", timeout_s=5)
    dense = DenseLeg(embedder, embedder.identity, folder=tmp_path, batch=16, wait_s=30)
    assert dense.rank(catalog, "q", 3, wait_s=0) is None
    calls = len(server.requests)
    assert dense.rank(catalog, "q", 3) is None  # does not wait its 30 s: BM25 alone while indexing
    assert len(server.requests) <= calls + 1 and dense.pending > 0
    server.mode = "ok"
    assert dense.idle(30)
