"""Build the compact preview that replaces an oversized tool output in context.

The preview must help the model decide what to fetch next, so it depends on
the content: logs keep head, tail and the error lines between; JSON shows its
shape; one-line blobs show char windows with offsets; binary shows a hex peek.
Guarantees the caller relies on: ``len(excerpt.text) <= budget_chars``, the
same input always gives byte-identical output (the preview sits in the
prompt-cache prefix), and nothing raises.  Wording is neutral: the caller adds
"this is a preview" and the handle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..retrieval.jsonpath import Segment
from .excerpt_json import STYLES, inline_value, outline, plural, top_level_shape
from .excerpt_lines import DEFAULT_SCAN_CHARS, Span, count_lines, render_chars, render_lines
from .sniff import magic_label, sniff
from .unescape import TextView, salvage_text_views, text_views_in

__all__ = ["Excerpt", "build_excerpt"]

DEFAULT_MAX_PARSE_CHARS = 16_000_000
_HEX_ROW = 16
# A string at least this share of a JSON payload is "the output" of an envelope
# such as {"output": "...", "exit_code": 1}.  Not 0.5: escapes (\n, \u00e9)
# shrink when unescaped.
_VIEW_SHARE = 0.3
_VIEW_SEARCH_NODES = 20_000


@dataclass(frozen=True)
class Excerpt:
    """A preview plus the numbers a caller needs to describe it.

    ``total_lines``/``total_chars`` describe the input (bytes for binary).
    ``layout`` says how to read more: ``lines`` (numbered lines; use line
    ranges), ``chars`` (``shown_char_ranges`` are 0-based half-open offsets),
    ``json`` (an outline; use JSON paths), ``json+lines``/``json+chars`` (an
    outline plus the unescaped string at ``view_path``, whose lines or chars
    the ranges then refer to), ``json+json`` (the string at ``view_path`` is
    itself a JSON document, outlined), ``hex`` or ``empty``.
    """

    text: str
    kind: str
    total_lines: int
    total_chars: int
    shown_line_ranges: tuple[tuple[int, int], ...] = ()
    omitted_lines: int = 0
    layout: str = "lines"
    shown_char_ranges: tuple[tuple[int, int], ...] = ()
    view_path: str | None = None
    shape: str = ""  # JSON: what the document is at its top ("a JSON array of 40 items"), else empty


@dataclass(frozen=True)
class _Opts:
    budget: int
    head_lines: int
    tail_lines: int
    max_signal_lines: int
    max_line_chars: int
    scan_chars: int


def _clip(text: str, budget: int) -> str:
    """Last-resort hard cap, line-aligned when possible."""
    if len(text) <= budget:
        return text
    cut = text.rfind("\n", 0, budget)
    return text[:cut] if cut > budget // 2 else text[:budget]


def _hex_excerpt(data: bytes, budget: int, magic: str | None) -> Excerpt:
    head = f"binary data, {len(data):,} bytes" + (f" ({magic})" if magic else "")

    def row(off: int) -> str:
        chunk = data[off : off + _HEX_ROW]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        return f"{off:08x}  {hexes:<{_HEX_ROW * 3 - 1}}  |{text}|"

    rows_total = (len(data) + _HEX_ROW - 1) // _HEX_ROW
    room = max(0, (budget - len(head) - 40) // 80)
    n_head = min(rows_total, 4, room)
    n_tail = min(rows_total - n_head, 2, max(0, room - n_head))
    lines = [head] + [row(i * _HEX_ROW) for i in range(n_head)]
    shown = (n_head + n_tail) * _HEX_ROW
    if rows_total > n_head + n_tail:
        lines.append(f"… {max(0, len(data) - shown):,} bytes omitted …")
    lines += [row(i * _HEX_ROW) for i in range(rows_total - n_tail, rows_total)]
    return Excerpt(_clip("\n".join(lines), budget), "binary", 0, len(data), layout="hex")


def _lines(
    text: str, budget: int, o: _Opts, kind: str, *, head: int | None = None, tail: int | None = None
) -> tuple[str, tuple[Span, ...], int]:
    signals = o.max_signal_lines if kind in ("log", "jsonl") else 0
    return render_lines(
        text,
        budget,
        head_lines=o.head_lines if head is None else head,
        tail_lines=o.tail_lines if tail is None else tail,
        max_signal_lines=signals,
        max_line_chars=o.max_line_chars,
        scan_chars=o.scan_chars,
    )


def _fit_outline(doc: Any, budget: int) -> str:
    """The richest outline style that fits, else the tersest one clipped."""
    for st in STYLES:
        t = outline(doc, st)
        if len(t) <= budget:
            return t
    return _clip(t, budget)


def _string_body(view_text: str, budget: int, o: _Opts) -> tuple[str, str, tuple, int, tuple]:
    """Preview of an unescaped string: an outline when it is itself JSON (MCP
    tools often return a JSON document as text), else by lines, or by chars
    when it is one long line."""
    sub = sniff(view_text).kind
    if sub == "json" and len(view_text) <= DEFAULT_MAX_PARSE_CHARS:
        try:
            return _fit_outline(json.loads(view_text), budget), "json", (), 0, ()
        except (ValueError, RecursionError):
            pass
    n_lines = count_lines(view_text)
    if n_lines <= 3 and len(view_text) > budget:
        body, wins = render_chars(view_text, budget, scan_chars=o.scan_chars)
        return body, "chars", (), 0, wins
    body, ranges, omitted = _lines(view_text, budget, o, "log" if sub in ("log", "text") else sub)
    return body, "lines", ranges, omitted, ()


def _view_excerpt(top: str, view_text: str, path: str, o: _Opts, base: dict) -> Excerpt:
    """An outline or header on top, then the unescaped string previewed by lines or chars."""
    top = _clip(top, o.budget * 2 // 5)
    body, layout, ranges, omitted, wins = _string_body(view_text, o.budget - len(top) - 1, o)
    return Excerpt(
        _clip(f"{top}\n{body}", o.budget),
        shown_line_ranges=ranges,
        omitted_lines=omitted,
        layout="json+" + layout,
        shown_char_ranges=wins,
        view_path=path,
        **base,
    )


def _salvaged_excerpt(text: str, o: _Opts, total_lines: int) -> Excerpt | None:
    """A cut-off envelope: preview its main string if one can be recovered."""
    n = len(text)
    views = salvage_text_views(text, min_chars=max(200, int(_VIEW_SHARE * n)), require_newline=False, max_views=4)
    big = max(views, key=lambda v: len(v.text), default=None)
    if big is None:
        return None
    top = (
        f"JSON, not valid (cut off?), {n:,} chars; recovered string after key {big.path!r} "
        f"({len(big.text):,} chars, {plural(count_lines(big.text), 'line')}, unescaped):"
    )
    base: dict[str, Any] = dict(kind="json", total_lines=total_lines, total_chars=n, shape="JSON cut off (not valid)")
    return _view_excerpt(top, big.text, big.path, o, base)


def _json_excerpt(text: str, doc: Any, o: _Opts, total_lines: int) -> Excerpt:
    n = len(text)
    base: dict[str, Any] = dict(kind="json", total_lines=total_lines, total_chars=n, shape=top_level_shape(doc))
    views: list[TextView] = text_views_in(
        doc, min_chars=max(200, int(_VIEW_SHARE * n)), require_newline=False, max_views=4, max_nodes=_VIEW_SEARCH_NODES
    )
    big = max(views, key=lambda v: len(v.text), default=None)
    if isinstance(doc, str) or big is not None:
        view_text = doc if isinstance(doc, str) else big.text if big is not None else ""
        path = "$" if isinstance(doc, str) or big is None else big.path
        focus: tuple[Segment, ...] = () if isinstance(doc, str) or big is None else big.segments
        if isinstance(doc, str):
            top = f"JSON string, {len(doc):,} chars, {plural(count_lines(doc), 'line')} when unescaped:"
        else:
            top = next(
                (t for st in STYLES if len(t := outline(doc, st, focus)) <= o.budget * 2 // 5),
                outline(doc, STYLES[-1], focus),
            )
            lines = count_lines(view_text)
            size = plural(lines, "line") if lines > 1 else f"{len(view_text):,} chars"
            top += f"\n{path} (unescaped, {size}):"
        return _view_excerpt(top, view_text, path, o, base)
    return Excerpt(_fit_outline(doc, o.budget), layout="json", omitted_lines=total_lines, **base)


def _jsonl_excerpt(text: str, o: _Opts, total_lines: int) -> Excerpt:
    first = text[: text.find("\n")] if "\n" in text else text
    try:
        rec = json.loads(first[:1_000_000])
        shape = inline_value(rec, 120) if not isinstance(rec, dict) else "{" + ", ".join(list(rec)[:12]) + "}"
        head = f"JSONL, {total_lines:,} lines; first record keys: {shape}"
    except (ValueError, RecursionError):
        head = f"JSONL, {total_lines:,} lines"
    head = _clip(head, o.budget // 3)
    body, ranges, omitted = _lines(text, o.budget - len(head) - 1, o, "jsonl", head=3, tail=3)
    out = f"{head}\n{body}" if body else head
    return Excerpt(_clip(out, o.budget), "jsonl", total_lines, len(text), ranges, omitted)


def _build(data: str | bytes, kind: str | None, o: _Opts, max_parse_chars: int) -> Excerpt:
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        sn = sniff(raw)
        if (kind or sn.kind) == "binary":
            return _hex_excerpt(raw, o.budget, sn.magic or magic_label(raw[:32]))
        text = raw.decode("utf-8", "replace")
    else:
        text = str(data)
        sn = sniff(text)
        if (kind or sn.kind) == "binary":
            raw = text.encode("utf-8", "surrogatepass")
            return _hex_excerpt(raw, o.budget, magic_label(raw[:32]))
    kind = kind or sn.kind
    n = len(text)
    total_lines = count_lines(text)
    if n == 0:
        return Excerpt(_clip("(empty)", o.budget), kind, 0, 0, layout="empty")
    jsonish = text[:64].lstrip()[:2] in ('{"', '["', "[{", "[[")
    if (kind == "json" or jsonish) and n <= max_parse_chars:
        try:
            return _json_excerpt(text, json.loads(text), o, total_lines)
        except (ValueError, RecursionError):
            salvaged = _salvaged_excerpt(text, o, total_lines)
            if salvaged is not None:
                return salvaged
    if kind == "jsonl":
        return _jsonl_excerpt(text, o, total_lines)
    if (sn.huge_line or total_lines <= 3) and n > o.budget:
        body, wins = render_chars(text, o.budget, scan_chars=o.scan_chars)
        return Excerpt(_clip(body, o.budget), kind, total_lines, n, layout="chars", shown_char_ranges=wins)
    body, ranges, omitted = _lines(text, o.budget, o, kind)
    return Excerpt(_clip(body, o.budget), kind, total_lines, n, ranges, omitted)


def build_excerpt(
    text: str | bytes,
    *,
    budget_chars: int = 2000,
    kind: str | None = None,
    head_lines: int = 10,
    tail_lines: int = 20,
    max_signal_lines: int = 20,
    max_line_chars: int = 240,
    max_parse_chars: int = DEFAULT_MAX_PARSE_CHARS,
    scan_chars: int = DEFAULT_SCAN_CHARS,
) -> Excerpt:
    """Preview *text* in at most *budget_chars* characters (see module docstring).

    *kind* (``json``, ``jsonl``, ``log``, ``text``, ``binary``) overrides
    sniffing.  JSON over *max_parse_chars* is not parsed (memory) and falls
    back to line or char windows; the error-line scan covers the first and
    last ``scan_chars / 2`` characters of larger texts.
    """
    budget = max(0, int(budget_chars)) if isinstance(budget_chars, int) else 2000
    o = _Opts(
        budget,
        max(0, head_lines),
        max(0, tail_lines),
        max(0, max_signal_lines),
        max(16, max_line_chars),
        max(1, scan_chars),
    )
    try:
        ex = _build(text, kind, o, max_parse_chars)
        if len(ex.text) > budget:  # belt and braces: the cap is a promise
            ex = Excerpt(
                _clip(ex.text, budget),
                ex.kind,
                ex.total_lines,
                ex.total_chars,
                ex.shown_line_ranges,
                ex.omitted_lines,
                ex.layout,
                ex.shown_char_ranges,
                ex.view_path,
            )
        return ex
    except Exception:  # noqa: BLE001 - an excerpt must never take down the caller: a plain clip instead
        try:
            s = text if isinstance(text, str) else bytes(text).decode("utf-8", "replace")
            return Excerpt(
                _clip(s, budget),
                kind or "text",
                count_lines(s),
                len(s),
                layout="chars",
                shown_char_ranges=((0, min(len(s), budget)),),
            )
        except Exception:  # noqa: BLE001 - not even text: an empty excerpt
            return Excerpt("", kind or "text", 0, 0, layout="empty")
