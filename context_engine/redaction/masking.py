"""Mask one text whole, reading secrets that JSON escapes hide.

The masking primitive of the egress gate (:mod:`..summary.egress` decides when it
runs on the routes to the summary model).  It sits apart so that modules the
gate itself reads, such as :mod:`..chat.stubs` (whose argument gists must be cut
only from masked text), can use it without importing the gate.
"""

from __future__ import annotations

import json
from typing import Any

from .redact import redact

__all__ = ["mask", "unescaped_masked"]

# Above this size a JSON text is masked as written, not parsed (parsing costs
# far more than masking; outputs this long are spilled to the store anyway).
_MAX_PARSED_JSON_CHARS = 2_000_000


def mask(text: str) -> str:
    """``text`` whole, masked: call this before any cut, reflow, quote or gist of it."""
    return redact(unescaped_masked(text)) if text else text


def unescaped_masked(text: str) -> str:
    """JSON text whose string values hide a secret behind escapes (``\\n``, ``\\"``), with those values masked.

    The rules read text as written; a YAML block or a JSON document inside a
    JSON string shows its secrets only once unescaped.  Such values are
    masked unescaped and the JSON written again; anything else is returned
    unchanged (the plain mask of the whole text follows).
    """
    if "\\" not in text or len(text) > _MAX_PARSED_JSON_CHARS or not text.lstrip().startswith(("{", "[")):
        return text
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return text
    changed = False

    def clean(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str):
            if "\n" in value or '"' in value or "\r" in value:
                masked = redact(value)
                changed = changed or masked != value
                return masked
            return value
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    try:
        cleaned = clean(parsed)
    except RecursionError:
        return text
    return json.dumps(cleaned, ensure_ascii=False) if changed else text
