"""Address one value inside a stored JSON document.

Models write paths in whatever dialect they last saw, so both JSON Pointer
(``/items/0/name``) and the dotted form (``$.items[0].name``, ``items[-1]``,
``a.b["weird key"]``) are accepted.  Errors name the segment that failed and
show what *is* there, so the next call can be right without a round of
guessing.  :func:`format_path` is the inverse used when we report paths.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "JsonPathError",
    "Segment",
    "parse_path",
    "format_path",
    "to_pointer",
    "resolve_json_path",
    "describe_value",
    "SerializedValue",
    "serialize_bounded",
]

Segment = str | int
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_NAME = re.compile(r"[^.\[\]\s]+")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")
_MAX_KEYS_SHOWN = 20


class JsonPathError(ValueError):
    """A path that is malformed or does not lead anywhere in the document."""

    def __init__(self, message: str, *, path: str = "", segment: Segment | None = None):
        super().__init__(message)
        self.path = path
        self.segment = segment


def _parse_pointer(path: str) -> list[Segment]:
    if path == "":
        return []
    parts = path.split("/")[1:]
    return [p.replace("~1", "/").replace("~0", "~") for p in parts]


def _parse_dotted(path: str) -> list[Segment]:
    segs: list[Segment] = []
    s = path.strip()
    i = 1 if s.startswith("$") else 0
    n = len(s)
    while i < n:
        ch = s[i]
        if ch == ".":
            i += 1
            m = _NAME.match(s, i)
            if not m:
                raise JsonPathError(f"expected a key name after '.' at position {i} in {path!r}", path=path)
            segs.append(m.group())
            i = m.end()
        elif ch == "[":
            m = _INDEX.match(s, i)
            if m:
                segs.append(int(m.group(1)))
                i = m.end()
                continue
            j = i + 1
            while j < n and s[j] == " ":
                j += 1
            if j >= n or s[j] not in "\"'":
                raise JsonPathError(
                    f'expected an index like [0] or a quoted key like ["k"] at position {i} in {path!r}', path=path
                )
            key, end = _read_quoted(s, j, path)
            while end < n and s[end] == " ":
                end += 1
            if end >= n or s[end] != "]":
                raise JsonPathError(f"missing ']' after quoted key at position {end} in {path!r}", path=path)
            segs.append(key)
            i = end + 1
        elif i == (1 if s.startswith("$") else 0):
            m = _NAME.match(s, i)
            if not m:
                raise JsonPathError(f"unexpected {ch!r} at position {i} in {path!r}", path=path)
            segs.append(m.group())
            i = m.end()
        else:
            raise JsonPathError(f"unexpected {ch!r} at position {i} in {path!r}; use '.key' or '[0]'", path=path)
    return segs


def _read_quoted(s: str, j: int, path: str) -> tuple[str, int]:
    """Read a quoted key starting at ``s[j]``; return (key, index after quote)."""
    quote = s[j]
    k = j + 1
    buf: list[str] = []
    while k < len(s):
        c = s[k]
        if c == "\\" and k + 1 < len(s):
            if quote == '"':
                buf.append(c + s[k + 1])
            else:
                buf.append(s[k + 1])
            k += 2
            continue
        if c == quote:
            raw = "".join(buf)
            if quote == '"':
                try:
                    return json.loads('"' + raw + '"'), k + 1
                except ValueError as exc:
                    raise JsonPathError(f"bad escape in quoted key {raw!r}: {exc}", path=path) from None
            return raw, k + 1
        buf.append(c)
        k += 1
    raise JsonPathError(f"unterminated quoted key starting at position {j} in {path!r}", path=path)


def parse_path(path: str) -> list[Segment]:
    """Split *path* into keys (str) and indexes (int).

    A leading ``/`` (or the empty string) selects JSON Pointer syntax, where
    every segment is a string and numeric strings index arrays; anything else
    is the dotted form, where ``[n]`` is an index and ``.name`` / ``["k"]`` a key.
    ``$`` alone means the whole document.
    """
    if not isinstance(path, str):
        raise JsonPathError(f"path must be a string, got {type(path).__name__}")
    if path == "" or path.startswith("/"):
        return _parse_pointer(path)
    return _parse_dotted(path)


def format_path(segments: list[Segment] | tuple[Segment, ...]) -> str:
    """Dotted form of *segments* that :func:`parse_path` reads back exactly.

    The root is ``$``; plain keys print bare (``result.content[0].text``),
    others in brackets with JSON quoting (``a["weird key"]``).
    """
    out: list[str] = []
    for seg in segments:
        if isinstance(seg, int) and not isinstance(seg, bool):
            out.append(f"[{seg}]")
        elif isinstance(seg, str) and _IDENT.match(seg):
            out.append(("." if out else "") + seg)
        else:
            out.append("[" + json.dumps(seg, ensure_ascii=False) + "]")
    return "".join(out) or "$"


def to_pointer(segments: list[Segment] | tuple[Segment, ...]) -> str:
    """RFC 6901 JSON Pointer for *segments*."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def describe_value(value: Any) -> str:
    """Short type description used in error messages and outlines."""
    if isinstance(value, dict):
        return f"object with {len(value):,} keys"
    if isinstance(value, list):
        return f"array of {len(value):,} items"
    if isinstance(value, str):
        return f"string of {len(value):,} chars"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def _missing_key(node: dict, key: str, where: str, path: str) -> JsonPathError:
    keys = list(node.keys())
    shown = ", ".join(json.dumps(k, ensure_ascii=False) for k in keys[:_MAX_KEYS_SHOWN])
    more = f" (+{len(keys) - _MAX_KEYS_SHOWN:,} more)" if len(keys) > _MAX_KEYS_SHOWN else ""
    str_keys = [k for k in keys[:2000] if isinstance(k, str)]
    close = difflib.get_close_matches(key, str_keys, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    avail = f"available keys: {shown}{more}" if keys else "the object is empty"
    return JsonPathError(f"key {key!r} not found at {where}; {avail}{hint}", path=path, segment=key)


def resolve_json_path(doc: Any, path: str | list[Segment]) -> Any:
    """Value of *doc* at *path*; raises :class:`JsonPathError` naming the failing segment."""
    segs = parse_path(path) if isinstance(path, str) else list(path)
    shown_path = path if isinstance(path, str) else format_path(segs)
    node = doc
    walked: list[Segment] = []
    for seg in segs:
        where = format_path(walked)
        if isinstance(node, dict):
            key = str(seg)
            if key not in node:
                raise _missing_key(node, key, where, shown_path)
            node = node[key]
        elif isinstance(node, list):
            try:
                idx = int(seg) if not isinstance(seg, bool) else None
            except (TypeError, ValueError):
                idx = None
            if idx is None:
                raise JsonPathError(
                    f"{where} is an array of {len(node):,} items; segment {seg!r} is not an index",
                    path=shown_path,
                    segment=seg,
                )
            if not -len(node) <= idx < len(node):
                span = f"valid indexes are 0..{len(node) - 1} (or -1 for the last)" if node else "it is empty"
                raise JsonPathError(
                    f"index {idx} out of range at {where}: array of {len(node):,} items; {span}",
                    path=shown_path,
                    segment=seg,
                )
            seg = idx if idx >= 0 else len(node) + idx
            node = node[seg]
        else:
            raise JsonPathError(
                f"cannot descend into {where} with {seg!r}: it is a {describe_value(node)}, not an object or array",
                path=shown_path,
                segment=seg,
            )
        walked.append(seg)
    return node


@dataclass(frozen=True)
class SerializedValue:
    """JSON text of a value, cut to a size bound; ``note`` explains any cut."""

    text: str
    truncated: bool
    note: str


def serialize_bounded(value: Any, max_chars: int, *, path: str = "$", indent: int | None = 2) -> SerializedValue:
    """Serialize *value* as JSON, stopping once *max_chars* is exceeded.

    Encoding is incremental, so a huge value costs only what is shown.  A cut
    value is no longer valid JSON, so the note suggests narrower paths that
    would return complete JSON instead.
    """
    enc = json.JSONEncoder(ensure_ascii=False, indent=indent, default=repr, check_circular=False)
    parts: list[str] = []
    size = 0
    cut = False
    for chunk in enc.iterencode(value):
        parts.append(chunk)
        size += len(chunk)
        if size > max_chars:
            cut = True
            break
    text = "".join(parts)
    if not cut:
        return SerializedValue(text, False, "")
    segs = parse_path(path) if path not in ("", "$") else []
    if isinstance(value, list) and value:
        narrower = f"{format_path(segs + [0])} … {format_path(segs + [len(value) - 1])}"
    elif isinstance(value, dict) and value:
        narrower = ", ".join(format_path(segs + [k]) for k in list(value)[:5])
    else:
        narrower = ""
    hint = f"request a narrower path ({narrower})" if narrower else "use a char range to read the rest"
    marker = f"\n… JSON cut at {max_chars:,} chars (not valid JSON past this point); {hint} …"
    keep = max(0, max_chars - len(marker))
    nl = text.rfind("\n", 0, keep)
    head = text[: nl if nl > keep // 2 else keep]
    out = (head + marker)[:max_chars] if keep else text[:max_chars]
    note = f"value at {path} ({describe_value(value)}) is over {max_chars:,} chars as JSON; {hint}"
    return SerializedValue(out, True, note)
