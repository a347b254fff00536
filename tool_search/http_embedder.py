"""A client for OpenAI-compatible ``POST {base_url}/embeddings`` endpoints (stdlib only).

The semantic leg of tool search needs vectors, and most users already run a
server that makes them (Ollama, vLLM, llama.cpp, their provider): asking it
costs no new dependency, where the offline model costs about 1.2 GB of
torch.  Every failure (network, timeout, HTTP status, a body that is not
the expected JSON, vectors of the wrong count or size) is one
``EmbeddingError`` with a one-line reason, so the caller can fall back to
BM25 alone and say why.  The API key is passed in, never stored on disk.
"""

from __future__ import annotations

import json
import math
import socket
import urllib.error
import urllib.request
from typing import Any, Sequence

DEFAULT_BATCH = 64
DEFAULT_TIMEOUT_S = 5.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class EmbeddingError(Exception):
    """The endpoint could not embed the texts; ``str()`` is a one-line reason."""


class HttpEmbedder:
    """Embeds texts with one request per ``batch_size`` texts; returns unit-length vectors.

    ``dimensions``, when known, is checked on every answer; otherwise the
    first answer fixes it, so a server that switches models mid-session is
    caught instead of mixing vector spaces.
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
        self._api_key = api_key
        self.requests = 0

    @property
    def identity(self) -> str:
        """What the vectors depend on (endpoint and model), for cache keys; no secret in it."""
        return f"{self.url}|{self.model}"

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
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # http(s) checked in __init__
                raw = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise EmbeddingError(f"HTTP {exc.code} from {self.url}{_error_detail(exc)}") from None
        except (TimeoutError, socket.timeout):
            raise EmbeddingError(f"no answer from {self.url} within {self.timeout_s:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise EmbeddingError(f"no answer from {self.url} within {self.timeout_s:g} s") from None
            raise EmbeddingError(f"cannot reach {self.url}: {reason}") from None
        except (OSError, ValueError) as exc:  # connection reset, bad status line, ...
            raise EmbeddingError(f"cannot read {self.url}: {exc}") from None
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
        if self.dimensions is None:
            self.dimensions = size
        elif size != self.dimensions:
            raise EmbeddingError(f"vectors have {size} dimensions, expected {self.dimensions} (model changed?)")


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


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(300).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - the status is the message; the body is a courtesy
        return ""
    text = " ".join(text.split())[:160]
    return f": {text}" if text else ""
