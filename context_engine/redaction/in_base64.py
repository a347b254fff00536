"""Secrets inside base64: a value that decodes to text holding a secret is masked whole.

A Kubernetes Secret's ``data:`` values, a ``.dockerconfigjson``, an
``_auth`` line or an environment variable often carry a password, a URL with
credentials or a private key base64-encoded, where no rule can read it.
Each run of base64 of 24 characters or more (18 bytes: ``password=hunter2``
and up) that decodes to printable UTF-8 is redacted decoded; when that masks
something, the whole run is replaced.  Binary (images, hashes read as
base64) fails the UTF-8 or printable test and stays as it is.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from .match import MASK

__all__ = ["redact_base64_values_many"]

_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_TEXT_CONTROLS = "\n\r\t"


def _decoded_text(run: str) -> str | None:
    """The text ``run`` encodes, or None when it is not base64 of printable UTF-8."""
    if len(run) % 4:
        return None
    try:
        text = base64.b64decode(run, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not all(c.isprintable() or c in _TEXT_CONTROLS for c in text):
        return None
    return text


def redact_base64_values_many(texts: list[str], redact_all: Callable[[list[str]], list[str]]) -> list[str]:
    """Each text with every base64 run whose decoded text ``redact_all`` changes replaced by the mask."""
    found: list[tuple[int, int, int, str]] = []  # (text, start, end, decoded)
    for index, text in enumerate(texts):
        for match in _RUN.finditer(text):
            decoded = _decoded_text(match.group(0))
            if decoded is not None:
                found.append((index, match.start(), match.end(), decoded))
    if not found:
        return texts
    out = list(texts)
    pieces: dict[int, list[str]] = {}
    ends: dict[int, int] = {}
    for (index, start, stop, decoded), redacted in zip(found, redact_all([f[3] for f in found]), strict=True):
        if redacted != decoded:
            pieces.setdefault(index, []).extend((texts[index][ends.get(index, 0) : start], MASK))
            ends[index] = stop
    for index, parts in pieces.items():
        out[index] = "".join(parts) + texts[index][ends[index] :]
    return out
