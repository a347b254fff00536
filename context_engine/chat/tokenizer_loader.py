"""Load a tiktoken encoding without touching the network.

tiktoken downloads its BPE files on first use and fails on machines without
internet (CI, air-gapped Hermes deployments).  The ``bpe-openai`` package
ships byte-identical copies of those files, so we seed tiktoken's own cache
from them and let tiktoken verify the SHA-256 it expects.  Only if that is
impossible, and the user allowed it, do we let tiktoken download.  When no
encoding can be had, callers fall back to a character estimate; the reason is
kept so ``stowage doctor`` can tell the user what happened.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_BLOB_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
# The hashes tiktoken itself checks (tiktoken_ext/openai_public.py).
_EXPECTED_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
SUPPORTED_ENCODINGS = tuple(_BLOB_URLS)


@dataclass(frozen=True)
class LoadedEncoding:
    """The outcome of a load: the encoding (or ``None``) and how we got it."""

    encoding: Any
    source: str  # "tiktoken-cache", "bpe-openai", "download", or "unavailable"
    detail: str = ""


_lock = threading.Lock()
_loaded: dict[tuple[str, bool], LoadedEncoding] = {}


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads cached BPE files from (None = caching off)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        value = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        value = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        value = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(value) if value else None


def cached_file_for(name: str) -> Path | None:
    directory = tiktoken_cache_dir()
    if directory is None or name not in _BLOB_URLS:
        return None
    return directory / hashlib.sha1(_BLOB_URLS[name].encode()).hexdigest()


def _bundled_bpe_bytes(name: str) -> bytes | None:
    """The BPE file shipped by bpe-openai, decompressed and verified, or None.

    The package is located, not imported: importing it parses its own
    encodings and costs seconds.
    """
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        return None
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        logger.warning("stowage: cannot read bundled BPE file %s: %s", path, exc)
        return None
    if hashlib.sha256(data).hexdigest() != _EXPECTED_SHA256[name]:
        logger.warning("stowage: bundled BPE file %s does not match tiktoken's expected hash", path)
        return None
    return data


def _cache_is_valid(path: Path, name: str) -> bool:
    """A cached file tiktoken will accept (a corrupt one makes it download)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == _EXPECTED_SHA256[name]
    except OSError:
        return False


def _seed_cache(name: str) -> str:
    """Put the bundled BPE file where tiktoken looks; returns a problem or ''."""
    target = cached_file_for(name)
    if target is None:
        return "tiktoken caching is disabled (TIKTOKEN_CACHE_DIR is empty)"
    if target.is_file() and _cache_is_valid(target, name):
        return ""
    data = _bundled_bpe_bytes(name)
    if data is None:
        if target.is_file():
            return f"the cached BPE file {target} is corrupt and bpe-openai is not installed to replace it"
        return "bpe-openai (which ships the BPE files) is not installed"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".stowage-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        return f"cannot write tiktoken cache {target.parent}: {exc}"
    return ""


def load_encoding(name: str = "o200k_base", *, allow_download: bool = False) -> LoadedEncoding:
    """Load ``name`` once per process; never raises."""
    key = (name, allow_download)
    with _lock:
        if key not in _loaded:
            _loaded[key] = _load(name, allow_download)
        return _loaded[key]


def _load(name: str, allow_download: bool) -> LoadedEncoding:
    try:
        import tiktoken
    except ImportError:
        return LoadedEncoding(None, "unavailable", "tiktoken is not installed")
    if name not in _BLOB_URLS:
        return LoadedEncoding(None, "unavailable", f"unknown encoding {name!r}")
    target = cached_file_for(name)
    already_cached = target is not None and target.is_file() and _cache_is_valid(target, name)
    problem = "" if already_cached else _seed_cache(name)
    if problem and not allow_download:
        return LoadedEncoding(
            None, "unavailable", problem + "; set stowage.tokenizer.allow_download: true to let tiktoken download it"
        )
    try:
        encoding = tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001 - tiktoken raises many kinds
        return LoadedEncoding(None, "unavailable", f"tiktoken could not load {name}: {exc}")
    if already_cached:
        source = "tiktoken-cache"
    else:
        source = "download" if problem else "bpe-openai"
    return LoadedEncoding(encoding, source, str(cached_file_for(name) or ""))
