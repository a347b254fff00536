"""A stand-in OpenAI-compatible ``/v1/embeddings`` server on 127.0.0.1, for tests and the bench.

It answers with whatever ``embed`` (a function of the input texts) returns,
and can be told to misbehave the ways a real endpoint does: an HTTP 500,
a body that is not JSON, vectors of another size, too few vectors, or a
slow answer (to hit the client's timeout).  Every request's input texts are
recorded, so a test can count the embedding calls a session made.

``ConceptEmbedder`` is a tiny deterministic "model" for end-to-end tests:
hashed word counts after a fixed synonym table, so "which folders can you
get into" lands near a tool that lists "allowed directories" without any
weights.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Sequence

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]
MODES = ("ok", "500", "bad_json", "wrong_dims", "wrong_count", "slow")


class EmbeddingServer:
    def __init__(self, embed: Embed, *, model: str = "stand-in-embed", slow_s: float = 3.0) -> None:
        self.embed = embed
        self.model = model
        self.mode = "ok"
        self.fail_when: Callable[[list[str]], bool] | None = None  # a request's texts -> answer HTTP 500
        self.slow_s = slow_s
        self.requests: list[list[str]] = []
        self.auth_headers: list[str | None] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def texts_embedded(self) -> int:
        return sum(len(r) for r in self.requests)

    def __enter__(self) -> "EmbeddingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, texts: list[str]) -> tuple[int, bytes]:
        self.requests.append(texts)
        mode = self.mode
        if self.fail_when is not None and self.fail_when(texts):
            mode = "500"
        if mode == "500":
            return 500, b'{"error": {"message": "stand-in failure"}}'
        if mode == "bad_json":
            return 200, b"<html>not json</html>"
        if mode == "slow":
            time.sleep(self.slow_s)
        vectors = [list(map(float, v)) for v in self.embed(texts)]
        if mode == "wrong_dims":
            vectors = [v + [0.0] for v in vectors]
        if mode == "wrong_count":
            vectors = vectors[:-1]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        body = {"object": "list", "model": self.model, "data": data, "usage": {"prompt_tokens": 0, "total_tokens": 0}}
        return 200, json.dumps(body).encode("utf-8")


def _handler(server: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if not self.path.rstrip("/").endswith("/embeddings"):
                self._send(404, b'{"error": "not found"}')
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                payload = json.loads(self.rfile.read(length) or b"{}")
                texts = payload["input"]
                texts = [texts] if isinstance(texts, str) else [str(t) for t in texts]
            except (ValueError, KeyError, TypeError):
                self._send(400, b'{"error": "bad request"}')
                return
            server.auth_headers.append(self.headers.get("Authorization"))
            status, body = server.answer(texts)
            self._send(status, body)

        def _send(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client gave up (its timeout)
                pass

        def log_message(self, *args: object) -> None:
            pass

    return Handler


# A stand-in model's "knowledge": words mapped to one canonical word before hashing.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "process": ("process", "processes", "running", "jobs", "job", "tasks", "executing"),
    "list": ("list", "lists", "listing", "show", "enumerate", "which"),
    "file": ("file", "files", "document", "documents", "contents"),
    "directory": ("directory", "directories", "folder", "folders", "subdirectories"),
    "access": ("access", "accessible", "allowed", "permitted", "into", "reach"),
    "issue": ("issue", "issues", "bug", "bugs", "ticket", "tickets"),
    "post": ("post", "tell", "notify", "send", "announce"),
    "message": ("message", "messages", "chat", "said", "conversation"),
    "search": ("search", "find", "lookup", "look", "query"),
    "image": ("image", "images", "picture", "pictures", "photo", "draw"),
}
STOP = frozenset("a an and are be can for get i in is it me my of on or that the this to what you with your".split())
_WORD = re.compile(r"[a-z]+")


class ConceptEmbedder:
    """A bag of words hashed into ``dimensions`` buckets, synonyms first mapped to one word.

    Not a model: enough for a test to show that a paraphrase BM25 cannot
    match ("which folders are you able to get into?") still finds its tool
    through the embedding leg, deterministically and with no weights.
    """

    def __init__(self, synonyms: dict[str, tuple[str, ...]] | None = None, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self._canon = {w: canon for canon, words in (synonyms or SYNONYMS).items() for w in words}

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * self.dimensions
            vector[-1] = 0.01  # no all-zero vector
            spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()
            for word in _WORD.findall(spaced):
                if word in STOP or len(word) < 2:
                    continue
                word = self._canon.get(word, word)
                vector[zlib.crc32(word.encode()) % (self.dimensions - 1)] += 1.0
            out.append(vector)
        return out
