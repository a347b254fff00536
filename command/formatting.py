"""Rendering helpers for the ``stowage`` command line: sizes, times, tables.

Human output shows sizes in binary units labelled KB/MB/GB (the config's
``max_store_mb`` counts the same way, so "cap 1.0 GB" matches 1024 MB) and
times relative to now; JSON output carries absolute UTC timestamps instead.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

from .terminal import safe_text

# Keys of store records that hold epoch seconds; JSON shows them as ISO 8601 UTC.
TIME_KEYS = frozenset(
    {"created_at", "last_access", "last_fetch", "evicted_at", "first_at", "last_at", "now", "granted_at"}
)


def human_size(n: float | None) -> str:
    """``512 B``, ``12.3 KB``, ``1.0 GB``: short enough for a table column."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(value) < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"  # pragma: no cover - loop always returns


def human_duration(seconds: float) -> str:
    """Compact duration: ``45s``, ``12m``, ``3h``, ``2d`` (one unit, rounded down)."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def relative_time(ts: float | None, now: float | None = None) -> str:
    """``3h ago`` (or ``in 5m`` for clocks that disagree); ``never`` for None."""
    if ts is None:
        return "never"
    delta = (time.time() if now is None else now) - ts
    if -1 < delta < 1:
        return "just now"
    return f"{human_duration(delta)} ago" if delta > 0 else f"in {human_duration(-delta)}"


def iso_time(ts: float | None) -> str | None:
    """Absolute UTC time for JSON (``2026-06-01T12:00:00Z``)."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def jsonable(value: Any) -> Any:
    """Deep copy of ``value`` with epoch fields (see :data:`TIME_KEYS`) turned into ISO times."""
    if isinstance(value, dict):
        return {
            k: iso_time(v)
            if k in TIME_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)
            else jsonable(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Iterable[int] = (), indent: int = 0) -> str:
    """Aligned plain-text table; columns in ``right`` are right-aligned (numbers)."""
    body = [[safe_text(str(cell)) for cell in row] for row in rows]  # widths of what the terminal shows
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=False)]  # extra cells have no column
    right_set = set(right)

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if i in right_set else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ]
        return (" " * indent + "  ".join(parts)).rstrip()

    return "\n".join([line(list(headers))] + [line(row) for row in body])


def fields(pairs: Iterable[tuple[str, Any]], indent: int = 2) -> str:
    """``label   value`` lines with the values aligned (status and show pages)."""
    items = [(label, safe_text(str(value))) for label, value in pairs]
    width = max((len(label) for label, _ in items), default=0)
    pad = " " * indent
    return "\n".join(f"{pad}{label.ljust(width)}  {value}".rstrip() for label, value in items)


def counts(mapping: dict[str, int]) -> str:
    """``spill 30, pruned 10`` (largest first) or ``none``."""
    if not mapping:
        return "none"
    ordered = sorted(mapping.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return ", ".join(f"{key or '(none)'} {value:,}" for key, value in ordered)


def clip(text: str, width: int) -> str:
    """One-line, at most ``width`` characters (tool arguments can be long and multi-line)."""
    flat = " ".join(safe_text(str(text)).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "\u2026"
