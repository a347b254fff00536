"""Recover multi-line text that a JSON envelope flattened onto one line.

Hermes tools return envelopes like ``{"output": "l1\\nl2\\n…", "exit_code": 1}``;
stored as-is, the real output is one escaped line that cannot be paged or
grepped by line (Hermes #79818).  This module finds the long string values in
such envelopes and returns them unescaped as *views*.  The caller keeps the
original bytes (lossless) and stores views beside them.  Nothing here raises:
garbage in, empty list out.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # public since 2.6, not in typeshed
from typing import Any

from ..retrieval.jsonpath import Segment, format_path, to_pointer

__all__ = [
    "TextView",
    "extract_text_views",
    "salvage_text_views",
    "text_views_in",
    "is_json_string_literal",
    "unescape_json_string",
]

DEFAULT_MIN_CHARS = 512
DEFAULT_MAX_VIEWS = 16
DEFAULT_MAX_INPUT_CHARS = 64 * 1024 * 1024
_MAX_WALK_NODES = 1_000_000


@dataclass(frozen=True)
class TextView:
    """One unescaped string found in a JSON payload.

    ``path`` is the dotted path (``$`` for a whole-value literal) that
    :func:`~.jsonpath.resolve_json_path` accepts, ``pointer`` the same as a
    JSON Pointer.  ``recovered`` is true when the payload was not valid JSON
    (for example cut off by an upstream size cap) and the string was salvaged
    by scanning; then ``path`` is only the nearest key name and the text may
    end early.
    """

    path: str
    pointer: str
    text: str
    line_count: int
    recovered: bool = False
    segments: tuple[Segment, ...] = ()


def _line_count(s: str) -> int:
    return s.count("\n") + (1 if s and not s.endswith("\n") else 0)


def _qualifies(s: str, min_chars: int, require_newline: bool) -> bool:
    return len(s) >= min_chars and (not require_newline or "\n" in s)


def is_json_string_literal(text: str) -> bool:
    """True if *text* (ignoring surrounding whitespace) is exactly one JSON string."""
    try:
        s = text.strip()
        if len(s) < 2 or s[0] != '"' or s[-1] != '"':
            return False
        _, end = scanstring(s, 1, False)
        return end == len(s)
    except Exception:  # noqa: BLE001 - json's private scanstring raises more than ValueError
        return False


def unescape_json_string(text: str) -> str | None:
    """Decoded value of a whole-text JSON string literal, or ``None`` if it is not one."""
    try:
        s = text.strip()
        if len(s) < 2 or s[0] != '"':
            return None
        value, end = scanstring(s, 1, False)
        return value if end == len(s) else None
    except Exception:  # noqa: BLE001 - json's private scanstring raises more than ValueError
        return None


def text_views_in(
    doc: Any,
    *,
    min_chars: int = DEFAULT_MIN_CHARS,
    require_newline: bool = True,
    max_views: int = DEFAULT_MAX_VIEWS,
    max_nodes: int = _MAX_WALK_NODES,
) -> list[TextView]:
    """Like :func:`extract_text_views` for an already-parsed document.

    Depth-first in document order, without recursion (deep JSON is legal);
    stops after visiting *max_nodes* values so huge documents stay cheap.
    """
    views: list[TextView] = []
    stack: list[tuple[tuple[Segment, ...], Any]] = [((), doc)]
    visited = 0
    while stack and len(views) < max_views and visited < max_nodes:
        path, node = stack.pop()
        visited += 1
        if isinstance(node, str):
            if _qualifies(node, min_chars, require_newline):
                segs = list(path)
                views.append(TextView(format_path(segs), to_pointer(segs), node, _line_count(node), False, path))
        elif isinstance(node, (dict, list)):
            room = max(0, max_nodes - visited)  # never queue more than can be visited
            if isinstance(node, dict):
                keys = list(itertools.islice(node.keys(), room))
                stack.extend((path + (k,), node[k]) for k in reversed(keys))
            else:
                stack.extend((path + (i,), node[i]) for i in range(min(len(node), room) - 1, -1, -1))
    return views


def salvage_text_views(
    text: str, *, min_chars: int = DEFAULT_MIN_CHARS, require_newline: bool = True, max_views: int = DEFAULT_MAX_VIEWS
) -> list[TextView]:
    """Scan invalid JSON for long string values, keyed by the nearest key.

    For payloads cut off by an upstream size cap.  Views are ``recovered``.

    Linear: each string literal is decoded once by the C scanner.  A final
    unterminated literal (payload cut mid-string) is decoded up to the cut.
    """
    views: list[TextView] = []
    last_key = ""
    i = text.find('"')
    n = len(text)
    while 0 <= i < n and len(views) < max_views:
        try:
            value, end = scanstring(text, i + 1, False)
        except ValueError as exc:
            near_end = getattr(exc, "pos", -1) >= n - 7  # cut inside an escape
            if not (str(exc).startswith("Unterminated string") or near_end):
                i = text.find('"', i + 1)  # bad escape: not a string start we can use
                continue
            salvaged = _decode_truncated(text[i + 1 :])
            if salvaged is None:
                break
            value, end = salvaged, n
        j = end
        while j < n and text[j] in " \t\r\n":
            j += 1
        if j < n and text[j] == ":":
            last_key = value
        elif _qualifies(value, min_chars, require_newline):
            segs = (last_key,) if last_key else ()
            views.append(TextView(last_key or "$", "", value, _line_count(value), True, segs))
        i = text.find('"', end)
    return views


def _decode_truncated(body: str) -> str | None:
    """Decode the start of a string literal whose closing quote was cut off."""
    for trim in range(0, 7):
        cut = body[: len(body) - trim] if trim else body
        try:
            value, _ = scanstring(cut + '"', 0, False)
            return value
        except ValueError:
            continue
    return None


def extract_text_views(
    text: str,
    *,
    min_chars: int = DEFAULT_MIN_CHARS,
    require_newline: bool = True,
    max_views: int = DEFAULT_MAX_VIEWS,
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
) -> list[TextView]:
    """Long string values inside a JSON payload, unescaped, in document order.

    A value qualifies when it has at least *min_chars* characters and (unless
    *require_newline* is false) contains a newline: those are the ones that
    become unreadable when escaped.  A whole-text string literal yields one
    view at path ``$``.  Payloads over *max_input_chars* are skipped rather
    than parsed, to bound memory.  Never raises.
    """
    try:
        if not isinstance(text, str) or len(text) > max_input_chars:
            return []
        s = text.lstrip()
        if not s or s[0] not in '{["':
            return []
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return salvage_text_views(text, min_chars=min_chars, require_newline=require_newline, max_views=max_views)
        return text_views_in(doc, min_chars=min_chars, require_newline=require_newline, max_views=max_views)
    except Exception:  # noqa: BLE001 - finding views is best effort: the bytes are stored whole anyway
        return []
