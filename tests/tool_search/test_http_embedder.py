"""The OpenAI-compatible embedding client against a stand-in server on 127.0.0.1."""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import pytest

from stowage.tool_search.http_embedder import EmbeddingError, HttpEmbedder, parse_embeddings
from stowage_dev.embedding_server import EmbeddingServer

FAKE_KEY = "sk-test-not-a-real-key-0000"


def three_dims(texts: Sequence[str]) -> list[list[float]]:
    return [[float(len(t)), 1.0, 0.0] for t in texts]


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(three_dims, slow_s=1.5) as s:
        yield s


def client(server: EmbeddingServer, **kw: object) -> HttpEmbedder:
    return HttpEmbedder(server.base_url, "stand-in-embed", **kw)  # type: ignore[arg-type]


def test_batches_in_input_order_and_normalizes(server: EmbeddingServer) -> None:
    texts = [f"text {'x' * i}" for i in range(7)]
    vectors = client(server, batch_size=3, api_key=FAKE_KEY).embed(texts)
    assert [len(r) for r in server.requests] == [3, 3, 1]
    assert [t for r in server.requests for t in r] == texts
    assert server.auth_headers == [f"Bearer {FAKE_KEY}"] * 3
    assert len(vectors) == len(texts)
    for text, vector in zip(texts, vectors, strict=True):
        assert math.isclose(sum(x * x for x in vector), 1.0)
        assert math.isclose(vector[0] / vector[1], len(text))  # the server's vector, scaled


def test_no_key_sends_no_authorization(server: EmbeddingServer) -> None:
    client(server).embed(["a"])
    assert server.auth_headers == [None]


@pytest.mark.parametrize(
    "mode, reason", [("500", "HTTP 500"), ("bad_json", "not JSON"), ("wrong_count", "asked for 2 vectors, got 1")]
)
def test_a_bad_answer_is_one_embedding_error(server: EmbeddingServer, mode: str, reason: str) -> None:
    server.mode = mode
    with pytest.raises(EmbeddingError, match=reason):
        client(server).embed(["a", "b"])


def test_a_change_of_size_is_reported_for_the_leg_to_reindex(server: EmbeddingServer) -> None:
    embedder = client(server)
    embedder.embed(["a"])
    assert embedder.dimensions == 3
    server.mode = "wrong_dims"
    assert len(embedder.embed(["a"])[0]) == 4 and embedder.dimensions == 4


@pytest.mark.parametrize("mode", ["drip", "hang"])
def test_one_deadline_covers_the_whole_answer(server: EmbeddingServer, mode: str) -> None:
    """A drip (every read quick) and a hang are both cut at the one deadline; the error says so."""
    server.mode = mode
    server.drip_s = 0.05  # a read every 50 ms: a per-read timeout of 0.3 s would never fire
    with pytest.raises(EmbeddingError, match="no whole answer .* within 0.3 s"):
        client(server, timeout_s=0.3).embed(["a", "b", "c"])


def test_configured_dimensions_are_checked_on_the_first_answer(server: EmbeddingServer) -> None:
    with pytest.raises(EmbeddingError, match="3 dimensions, expected 384"):
        client(server, dimensions=384).embed(["a"])


def test_a_slow_server_times_out_at_the_deadline(server: EmbeddingServer) -> None:
    """The server answers after ``slow_s`` (3 s): an error, not the answer, shows the 0.3 s deadline fired first."""
    server.mode = "slow"
    with pytest.raises(EmbeddingError, match="within 0.3 s"):
        client(server, timeout_s=0.3).embed(["a"])


def test_nothing_listening_is_an_embedding_error() -> None:
    with EmbeddingServer(three_dims) as s:
        url = s.base_url
    with pytest.raises(EmbeddingError, match="cannot reach"):
        HttpEmbedder(url, "m", timeout_s=1).embed(["a"])


def test_the_key_is_not_in_the_identity(server: EmbeddingServer) -> None:
    embedder = client(server, api_key=FAKE_KEY)
    assert FAKE_KEY not in embedder.identity and "stand-in-embed" in embedder.identity
    assert FAKE_KEY not in repr(vars(embedder).get("identity", ""))


@pytest.mark.parametrize(
    "body, reason",
    [
        (b'{"data": "x"}', "no 'data' list"),
        (b"[1, 2]", "no 'data' list"),
        (b'{"data": [{"embedding": "AAAA"}]}', "not a list of numbers"),
        (b'{"data": [{"embedding": [1, "x"]}]}', "other than numbers"),
        (b'{"data": [{"embedding": [true, 1]}]}', "finite numbers"),
        (b'{"data": [{"embedding": [1e999]}]}', "finite numbers"),
        (b'{"data": [{"index": 3, "embedding": [1]}]}', "bad or repeated index"),
    ],
)
def test_malformed_bodies(body: bytes, reason: str) -> None:
    with pytest.raises(EmbeddingError, match=reason):
        parse_embeddings(body, 1)


def test_out_of_order_indexes_are_put_back_in_order() -> None:
    body = b'{"data": [{"index": 1, "embedding": [2]}, {"index": 0, "embedding": [1]}]}'
    assert parse_embeddings(body, 2) == [[1.0], [2.0]]


def test_bad_configuration_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="http"):
        HttpEmbedder("localhost:11434", "m")
    with pytest.raises(ValueError, match="model"):
        HttpEmbedder("http://127.0.0.1:1/v1", "")


def test_the_environments_http_proxy_is_used(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """As urllib did: a plain-http endpoint is asked through ``HTTP_PROXY`` with the absolute URL."""
    for name in ("no_proxy", "NO_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.base_url.rsplit("/v1", 1)[0])  # the stand-in plays the proxy
    vectors = HttpEmbedder("http://embeddings.invalid/v1", "m", timeout_s=2).embed(["a"])
    assert len(vectors) == 1 and server.requests == [["a"]]
