"""A client for OpenAI-compatible ``POST {base_url}/embeddings`` endpoints (stdlib only).

The semantic leg of tool search needs vectors, and most users already run a
server that makes them (Ollama, vLLM, llama.cpp, their provider): asking it
costs no new dependency, where the offline model costs about 1.2 GB of
torch.  Each call has one total deadline (``timeout_s``) covering connect,
send and every read: a server that drips its answer a byte at a time is cut
off at the deadline like one that never answers (a per-read socket timeout
alone would wait forever on a drip).  Every failure (network, timeout, HTTP status, a body that is not
the expected JSON, vectors of the wrong count or size) is one
``EmbeddingError`` with a one-line reason, so the caller can fall back to
BM25 alone and say why.  The API key is passed in, never stored on disk.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import socket
import threading
import time
import urllib.parse
import urllib.request
from typing import Any, Sequence

DEFAULT_BATCH = 16  # small: each call must finish within one deadline on a CPU endpoint
DEFAULT_TIMEOUT_S = 5.0
READ_CHUNK = 65536
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class EmbeddingError(Exception):
    """The endpoint could not embed the texts; ``str()`` is a one-line reason."""


class HttpEmbedder:
    """Embeds texts with one request per ``batch_size`` texts; returns unit-length vectors.

    ``dimensions``, when configured, is checked on every answer; otherwise
    ``dimensions`` tells the newest answer's size, and ``DenseLeg`` notices a
    server that switched models mid-session (re-indexing instead of mixing
    vector spaces).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        batch_size: int = DEFAULT_BATCH,
        dimensions: int | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"embedding endpoint must be an http(s) URL, not {base_url!r}")
        if not model:
            raise ValueError("an embedding model name is required")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.timeout_s = timeout_s
        self.batch_size = max(1, batch_size)
        self.dimensions = dimensions
        self._expected = dimensions  # configured: every answer must have it
        self._api_key = api_key
        self.requests = 0

    @property
    def identity(self) -> str:
        """What the vectors depend on, for cache keys: the model, not the URL (the same model served on another
        port or host reuses its vectors; a server that answers another size under the same name is caught by
        the dimension check of ``DenseLeg``). No secret in it."""
        return f"model|{self.model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._embed_batch(list(texts[start : start + self.batch_size])))
        return out

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self.requests += 1
        raw = post_within(self.url, body, headers, self.timeout_s)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise EmbeddingError(f"answer from {self.url} is larger than {MAX_RESPONSE_BYTES} bytes")
        vectors = parse_embeddings(raw, len(texts))
        self._check_dimensions(vectors)
        return [normalized(v) for v in vectors]

    def _check_dimensions(self, vectors: list[list[float]]) -> None:
        sizes = {len(v) for v in vectors}
        if len(sizes) > 1:
            raise EmbeddingError(f"vectors of different sizes in one answer: {sorted(sizes)}")
        if not sizes:
            return
        size = sizes.pop()
        if self._expected is not None and size != self._expected:
            raise EmbeddingError(f"vectors have {size} dimensions, expected {self._expected} (model changed?)")
        self.dimensions = size  # the newest answer's size: ``DenseLeg`` notices a change and re-indexes


def post_within(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> bytes:
    """POST ``body`` and read the whole answer within ``timeout_s`` in all; ``EmbeddingError`` otherwise.

    The socket's own timeout is set to what is left before each step, and a
    watchdog shuts the socket down at the deadline, which wakes a read that
    is stuck on a server sending one byte at a time.
    """
    parts = urllib.parse.urlsplit(url)
    deadline = time.monotonic() + timeout_s
    connection, path = _connection(parts, timeout_s, headers)
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(READ_CHUNK) if hasattr(response, "read1") else response.read(READ_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise EmbeddingError(f"answer from {url} is larger than {MAX_RESPONSE_BYTES} bytes")
        if expired.is_set():
            raise TimeoutError
        raw = b"".join(chunks)
        if response.status >= 400:
            detail = " ".join(raw[:300].decode("utf-8", "replace").split())[:160]
            raise EmbeddingError(f"HTTP {response.status} from {url}" + (f": {detail}" if detail else ""))
        return raw
    except EmbeddingError:
        raise
    except (TimeoutError, socket.timeout):
        raise EmbeddingError(f"no whole answer from {url} within {timeout_s:g} s") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set():
            raise EmbeddingError(f"no whole answer from {url} within {timeout_s:g} s") from None
        raise EmbeddingError(f"cannot reach or read {url}: {exc}") from None
    finally:
        watchdog.cancel()
        connection.close()


def _connection(
    parts: urllib.parse.SplitResult, timeout_s: float, headers: dict[str, str]
) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the endpoint, through the environment's proxy (``HTTPS_PROXY``...) as urllib would."""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host, port, https = parts.hostname or "", parts.port, parts.scheme == "https"
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        auth = {}
        if via.username:
            token = base64.b64encode(f"{via.username}:{via.password or ''}".encode()).decode("ascii")
            auth = {"Proxy-Authorization": f"Basic {token}"}
        if https:  # a CONNECT tunnel to the endpoint through the proxy
            tunnel = http.client.HTTPSConnection(via.hostname or "", via.port or 80, timeout=timeout_s)
            tunnel.set_tunnel(host, port, headers=auth)
            return tunnel, path
        headers.update(auth)  # plain http: the proxy is asked for the absolute URL
        return http.client.HTTPConnection(via.hostname or "", via.port or 80, timeout=timeout_s), parts.geturl()
    connection_class = http.client.HTTPSConnection if https else http.client.HTTPConnection
    return connection_class(host, port, timeout=timeout_s), path


def parse_embeddings(raw: bytes, expected: int) -> list[list[float]]:
    """The vectors of an OpenAI-style answer, in input order; ``EmbeddingError`` when malformed."""
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise EmbeddingError(f"the answer is not JSON: {raw[:80]!r}") from None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingError("the answer has no 'data' list")
    if len(data) != expected:
        raise EmbeddingError(f"asked for {expected} vectors, got {len(data)}")
    slots: list[list[float] | None] = [None] * expected
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise EmbeddingError("an item of 'data' is not an object")
        index = item.get("index", position)
        if not isinstance(index, int) or not 0 <= index < expected or slots[index] is not None:
            raise EmbeddingError(f"bad or repeated index {index!r} in 'data'")
        slots[index] = _vector(item.get("embedding"))
    return [v for v in slots if v is not None]


def _vector(value: Any) -> list[float]:
    if not isinstance(value, list) or not value:
        raise EmbeddingError("an 'embedding' is not a list of numbers (base64 answers are not asked for)")
    try:
        vector = [float(x) for x in value]
    except (TypeError, ValueError):
        raise EmbeddingError("an 'embedding' holds something other than numbers") from None
    if any(isinstance(x, bool) for x in value) or not all(math.isfinite(x) for x in vector):
        raise EmbeddingError("an 'embedding' holds something other than finite numbers")
    return vector


def normalized(vector: Sequence[float]) -> list[float]:
    """Unit length, so cosine similarity is a dot product; a zero vector stays zero."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]
