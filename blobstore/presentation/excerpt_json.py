"""Structure outlines of JSON documents for previews.

A truncated dump of a large JSON document shows one branch in detail and hides
the rest (and is no longer valid JSON).  An outline shows the *shape*: keys to
a small depth, array lengths with their first and last items, scalar types and
short values, so the model knows which path to fetch.  Rendering is
deterministic (document order, fixed formatting) because previews sit in the
prompt-cache prefix.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from ..retrieval.jsonpath import Segment

__all__ = ["OutlineStyle", "STYLES", "inline_value", "outline", "plural", "top_level_shape"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_SAMPLE_ITEMS = 50


@dataclass(frozen=True)
class OutlineStyle:
    """How much detail an outline shows; :data:`STYLES` goes from rich to terse."""

    max_depth: int
    max_keys: int
    item_chars: int
    head_items: int
    tail_items: int


STYLES = (
    OutlineStyle(3, 20, 160, 2, 1),
    OutlineStyle(2, 12, 120, 2, 1),
    OutlineStyle(2, 8, 80, 1, 1),
    OutlineStyle(1, 8, 60, 1, 1),
    OutlineStyle(1, 4, 40, 1, 0),
    OutlineStyle(0, 0, 40, 0, 0),
)


def _key(k: str) -> str:
    return k if _IDENT.match(k) else json.dumps(k, ensure_ascii=False)


def _type_name(v: Any) -> str:
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    return "number"


def _str_note(s: str) -> str:
    lines = s.count("\n") + (1 if s and not s.endswith("\n") else 0)
    extra = f", {lines:,} lines" if lines > 1 else ""
    return f"string, {len(s):,} chars{extra}"


def plural(n: int, word: str) -> str:
    """``1 line``, ``2 lines``, ``1,204 lines``."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


_SHAPE_KEYS = 6


def top_level_shape(doc: Any) -> str:
    """What a parsed document is at its top, in a few words: ``a JSON object with 2 keys: output, exit_code``.

    A spill's first line names it, so the model knows before the preview
    whether to ask for a key, an index range or lines.
    """
    if isinstance(doc, dict):
        if not doc:
            return "an empty JSON object"
        keys = ", ".join(_key(str(k)) for k in itertools.islice(doc, _SHAPE_KEYS))
        more = ", …" if len(doc) > _SHAPE_KEYS else ""
        return f"a JSON object with {plural(len(doc), 'key')}: {keys}{more}"
    if isinstance(doc, list):
        return f"a JSON array of {plural(len(doc), 'item')}" if doc else "an empty JSON array"
    return "JSON null" if doc is None else f"a JSON {_type_name(doc)}"


def inline_value(v: Any, limit: int, focus: tuple[Segment, ...] | None = None) -> str:
    """Compact one-line JSON-like rendering of *v*, at most about *limit* chars.

    Containers are opened only as far as the limit allows; what is left out is
    counted (``…+3 keys``) rather than silently dropped.  *focus* is the
    relative path of a string shown elsewhere, rendered as a short note.
    """
    limit = max(8, limit)
    if focus == () and isinstance(v, str):
        return f"<{_str_note(v)}, shown below>"
    if isinstance(v, str):
        if len(v) + 2 <= limit:
            return json.dumps(v, ensure_ascii=False)
        keep = max(1, limit - 12)
        return json.dumps(v[:keep], ensure_ascii=False)[:-1] + f'…" +{len(v) - keep:,}'
    if not isinstance(v, (dict, list)):
        text = json.dumps(v, ensure_ascii=False, default=repr)
        return text if len(text) <= limit else text[: limit - 1] + "…"
    is_obj = isinstance(v, dict)
    open_, close = ("{", "}") if is_obj else ("[", "]")
    parts: list[str] = []
    used = 2
    items: Iterator[Any] = iter(v.items()) if isinstance(v, dict) else iter(v)
    shown = 0
    for idx, item in enumerate(items):
        if is_obj:
            k, val = item
            prefix = json.dumps(k, ensure_ascii=False) + ": "
        else:
            k, val, prefix = idx, item, ""
        room = limit - used - len(prefix) - 14
        if room < 8:
            break
        sub = focus[1:] if focus and focus[0] == k else None
        piece = prefix + inline_value(val, min(room, max(24, limit // 2)), sub)
        if used + len(piece) + 2 > limit - 12:
            break
        parts.append(piece)
        used += len(piece) + 2
        shown += 1
    rest = len(v) - shown
    if rest:
        parts.append("…+" + plural(rest, "key" if is_obj else "item"))
    return open_ + ", ".join(parts) + close


def _array_summary(arr: list) -> str:
    sample = arr[:_SAMPLE_ITEMS] + (arr[-_SAMPLE_ITEMS:] if len(arr) > _SAMPLE_ITEMS else [])
    types = {_type_name(x) for x in sample}
    if not sample:
        return "array, empty"
    if len(types) > 1:
        return f"array, {plural(len(arr), 'item')} of mixed types ({', '.join(sorted(types))})"
    only = types.pop()
    desc = f"array, {plural(len(arr), 'item')} of {only}"
    if only == "object":
        keys: dict[str, None] = {}
        for x in sample:
            for k in itertools.islice(x.keys(), 40):
                keys.setdefault(k, None)
        names = [_key(k) for k in itertools.islice(keys, 12)]
        more = ", …" if len(keys) > 12 else ""
        desc += " {" + ", ".join(names) + more + "}"
    return desc


def _describe(v: Any, style: OutlineStyle, focus: tuple[Segment, ...] | None, path: tuple[Segment, ...]) -> str:
    if isinstance(v, str):
        if focus is not None and path == focus:
            return f"{_str_note(v)} (unescaped below)"
        if len(v) <= style.item_chars and "\n" not in v:
            return json.dumps(v, ensure_ascii=False)
        return f"{inline_value(v, min(style.item_chars, 60))} ({_str_note(v)})"
    if isinstance(v, dict):
        return f"object, {plural(len(v), 'key')}" if v else "{}"
    if isinstance(v, list):
        return _array_summary(v)
    return inline_value(v, style.item_chars)


def _outline_node(
    v: Any,
    style: OutlineStyle,
    depth: int,
    path: tuple[Segment, ...],
    focus: tuple[Segment, ...] | None,
    out: list[str],
) -> None:
    pad = "  " * (depth + 1)
    if isinstance(v, dict):
        keys = list(itertools.islice(v.keys(), style.max_keys))
        for k in keys:
            child = v[k]
            out.append(f"{pad}{_key(k)}: {_describe(child, style, focus, path + (k,))}")
            if depth + 1 < style.max_depth and isinstance(child, (dict, list)) and child:
                _outline_node(child, style, depth + 1, path + (k,), focus, out)
        if len(v) > len(keys):
            names = ", ".join(_key(k) for k in itertools.islice(v.keys(), len(keys), len(keys) + 8))
            tail = ", …" if len(v) > len(keys) + 8 else ""
            out.append(f"{pad}… {plural(len(v) - len(keys), 'more key')}: {names}{tail}")
    elif isinstance(v, list):
        n = len(v)
        head = min(style.head_items, n)
        tail_n = min(style.tail_items, n - head)

        def item(i: int) -> str:
            sub = focus[len(path) + 1 :] if focus and focus[: len(path) + 1] == path + (i,) else None
            return f"{pad}[{i}]: {inline_value(v[i], style.item_chars, sub)}"

        out += [item(i) for i in range(head)]
        if n - head - tail_n > 0:
            out.append(f"{pad}… {plural(n - head - tail_n, 'item')} …")
        out += [item(i) for i in range(n - tail_n, n)]


def outline(doc: Any, style: OutlineStyle, focus: tuple[Segment, ...] | None = None) -> str:
    """Outline of *doc* in *style*; *focus* marks a string rendered elsewhere."""
    if isinstance(doc, dict):
        head = f"JSON object, {plural(len(doc), 'key')}" + (":" if doc else " (empty)")
    elif isinstance(doc, list):
        head = _array_summary(doc).replace("array", "JSON array", 1) + (":" if doc else "")
    else:
        return f"JSON {_type_name(doc)}: {_describe(doc, style, focus, ())}"
    out = [head]
    if style.max_depth > 0 or style.max_keys > 0:
        _outline_node(doc, style, 0, (), focus, out)
    return "\n".join(out)
