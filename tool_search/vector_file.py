"""Tool vectors on disk: one small file per embedding model, one vector per tool text.

Embedding a catalog is the slow, billed part of the semantic leg (1,853
tools took 33 s with the local model), while a catalog rarely changes.  The
file is named by a hash of the model's identity (endpoint and model name),
and each vector is keyed by a hash of the tool text it was made from, so a
catalog whose checksum changed re-embeds only the tools whose text changed,
and another model never reads these vectors.  Vectors are float32, base64
in JSON (no numpy needed): about 2 KB per tool at 384 dimensions.  Writes go
to a temporary file in the same folder, then ``os.replace``: a reader never
sees half a file, and a concurrent writer at worst costs a re-embedding.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Iterable, Mapping, Sequence

logger = logging.getLogger(__name__)

FORMAT = 1
MAX_VECTORS = 20_000  # a file holding more keeps the current catalog's and drops the rest


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def file_for(folder: Path, identity: str) -> Path:
    return folder / f"tool-vectors-{hashlib.sha256(identity.encode('utf-8')).hexdigest()[:16]}.json"


def encode(vector: Sequence[float]) -> str:
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def decode(text: str) -> list[float]:
    packed = array("f")
    packed.frombytes(base64.b64decode(text.encode("ascii"), validate=True))
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tolist()


def load(path: Path, identity: str) -> dict[str, list[float]]:
    """The vectors in ``path`` for ``identity``; ``{}`` when missing, unreadable or another model's."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("stowage: ignoring unreadable tool vector file %s: %s", path, exc)
        return {}
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or payload.get("identity") != identity:
        return {}
    raw = payload.get("vectors")
    if not isinstance(raw, dict):
        return {}
    out: dict[str, list[float]] = {}
    dims = payload.get("dimensions")
    for key, value in raw.items():
        try:
            vector = decode(value)
        except (ValueError, TypeError):
            continue
        if len(vector) == dims:
            out[key] = vector
    return out


def save(path: Path, identity: str, vectors: Mapping[str, Sequence[float]], keep_first: Iterable[str] = ()) -> int:
    """Write ``vectors`` atomically; returns the file's size in bytes.

    Above ``MAX_VECTORS`` the keys in ``keep_first`` (the current catalog's)
    are kept, then the others in insertion order.
    """
    chosen = dict.fromkeys(k for k in keep_first if k in vectors)
    for key in vectors:
        if len(chosen) >= MAX_VECTORS:
            break
        chosen.setdefault(key, None)
    sizes = {len(vectors[k]) for k in chosen}
    if len(sizes) > 1:
        raise ValueError(f"vectors of different sizes: {sorted(sizes)}")
    payload = {
        "format": FORMAT,
        "identity": identity,
        "dimensions": sizes.pop() if sizes else 0,
        "vectors": {k: encode(vectors[k]) for k in chosen},
    }
    data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return len(data)
