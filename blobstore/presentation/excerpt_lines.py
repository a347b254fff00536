"""Line- and char-window previews: head, tail, and the failures in between.

Command output is chronological: the head says what ran, the tail how it
ended, and the middle holds the failures.  A head-only preview shows the least
useful part, so lines are chosen by priority (a little head, the tail, error
lines and the lines after them, then more head/tail, then warnings, then
repeated filler) until the budget is spent.  Lines are located with
``str.find``/``rfind`` and signals with :mod:`.signals`; the text is never
split into a list, so a 100 MB output costs memory only for the lines shown.
"""

from __future__ import annotations

import re

from .signals import iter_hits, scan_signal_lines

__all__ = ["count_lines", "render_lines", "render_chars", "DEFAULT_SCAN_CHARS"]

DEFAULT_SCAN_CHARS = 64_000_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SLICE = 65_536

Span = tuple[int, int]


def count_lines(text: str) -> int:
    """Lines as an editor numbers them: a trailing newline does not open a new line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _head_spans(text: str, k: int) -> list[Span]:
    spans: list[Span] = []
    pos, n = 0, len(text)
    while len(spans) < k and pos < n:
        e = text.find("\n", pos)
        e = n if e < 0 else e
        spans.append((pos, e))
        pos = e + 1
    return spans


def _tail_spans(text: str, k: int) -> list[Span]:
    """Last *k* line spans, last line first."""
    spans: list[Span] = []
    end = len(text) - 1 if text.endswith("\n") else len(text)
    while len(spans) < k and end >= 0:
        s = text.rfind("\n", 0, end) + 1
        spans.append((s, end))
        if s == 0:
            break
        end = s - 1
    return spans


def _display(text: str, s: int, e: int, cap: int, col: int | None) -> str:
    """Line ``text[s:e]`` made printable and cut to *cap*, centred on *col* when given.

    Only a 64 KiB slice of a huge line is copied and cleaned; the cut counts
    are then in raw characters, otherwise in cleaned ones.
    """
    base, sliced = 0, e - s > _SLICE
    if sliced:
        base = 0 if col is None else max(0, col - _SLICE // 2)
        line = text[s + base : min(e, s + base + _SLICE)]
    else:
        line = text[s:e]
        if "\r" in line:
            line = line.rstrip("\r")
            line = line.rsplit("\r", 1)[-1] or line  # what a terminal would show last
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    line = _CTRL.sub("?", line)
    full = e - s if sliced else len(line)
    if not sliced and full <= cap:
        return line
    keep = max(8, cap - 24)
    rel = None if col is None else col - base
    start = 0 if rel is None else max(0, min(len(line) - keep, rel - keep // 3))
    before = base + start
    after = max(0, full - before - min(keep, len(line) - start))
    pre = f"…[{before:,} chars] " if before else ""
    post = f" …[+{after:,} chars]" if after else ""
    return f"{pre}{line[start : start + keep]}{post}"


def _marker(k: int) -> str:
    return f"… {k:,} line{'s' if k != 1 else ''} omitted …"


def _layout(sel: dict[int, str], total: int) -> list[str]:
    width = len(str(max(sel))) if sel else 1
    out: list[str] = []
    prev = 0
    for ln in sorted(sel):
        if ln - prev > 1:
            out.append(_marker(ln - prev - 1))
        disp = sel[ln]
        out.append(f"{ln:>{width}}|" + (f" {disp}" if disp else ""))
        prev = ln
    if total > prev and sel:
        out.append(_marker(total - prev))
    return out


def _cost(sel: dict[int, str], total: int) -> int:
    lines = _layout(sel, total)
    return sum(len(x) for x in lines) + max(0, len(lines) - 1)


def render_lines(
    text: str,
    budget: int,
    *,
    head_lines: int = 10,
    tail_lines: int = 20,
    max_signal_lines: int = 20,
    max_line_chars: int = 240,
    scan_chars: int = DEFAULT_SCAN_CHARS,
) -> tuple[str, tuple[Span, ...], int]:
    """Numbered lines chosen by priority within *budget*; returns (text, shown ranges, omitted)."""
    total = count_lines(text)
    cap = max(16, min(max_line_chars, budget // 3))
    if total == 0:
        return "", (), 0
    # Cleaning and clipping only shorten lines, so this bounds the full render:
    # when it fits, show everything rather than a selection.
    if len(text) + total * (len(str(total)) + 3) <= budget:
        head_lines, tail_lines = total, 0
    candidates: list[tuple[int, int, int, int | None]] = []  # lineno, start, end, col
    head = [(i + 1, s, e, None) for i, (s, e) in enumerate(_head_spans(text, max(0, head_lines)))]
    tail = [(total - i, s, e, None) for i, (s, e) in enumerate(_tail_spans(text, max(0, tail_lines)))]
    errors, warnings = scan_signal_lines(text, max(0, max_signal_lines), scan_chars)
    # The lines after an error often name the place or show the code.
    follow1: list[tuple[int, int, int, int | None]] = []
    follow2: list[tuple[int, int, int, int | None]] = []
    for ln, _s, e, _c in errors[:5]:
        for dst, k in ((follow1, 1), (follow2, 2), (follow2, 3)):
            if ln + k > total or e >= len(text):
                break
            ne = text.find("\n", e + 1)
            ne = len(text) if ne < 0 else ne
            dst.append((ln + k, e + 1, ne, None))
            e = ne
    fill: list[tuple[int, int, int, int | None]] = []
    rest_head, rest_tail = head[2:], tail[4:]
    while rest_head or rest_tail:
        fill += rest_tail[:2] + rest_head[:1]
        rest_tail, rest_head = rest_tail[2:], rest_head[1:]
    # Filler identical to its neighbour (progress spam, repeated "Compiling x")
    # says little; it waits until everything else had its chance.
    raw = {c[0]: text[c[1] : c[2]] for c in head + tail}
    fresh = [c for c in fill if raw.get(c[0] - 1) != raw[c[0]] and raw.get(c[0] + 1) != raw[c[0]]]
    repeats = [c for c in fill if c not in fresh]
    candidates += head[:2] + tail[:4] + errors + follow1[:3] + fresh
    later = sorted(follow2, key=lambda c: c[0]) + follow1[3:]
    candidates += warnings[: max(0, max_signal_lines - len(errors))] + later + repeats

    sel: dict[int, str] = {}
    for ln, s, e, col in candidates:
        if ln in sel:
            continue
        sel[ln] = _display(text, s, e, cap, col)
        if _cost(sel, total) > budget:
            del sel[ln]
    if not sel:
        return "", (), total
    ranges: list[list[int]] = []
    for ln in sorted(sel):
        if ranges and ranges[-1][1] == ln - 1:
            ranges[-1][1] = ln
        else:
            ranges.append([ln, ln])
    return "\n".join(_layout(sel, total)), tuple((a, b) for a, b in ranges), total - len(sel)


def render_chars(text: str, budget: int, *, scan_chars: int = DEFAULT_SCAN_CHARS) -> tuple[str, tuple[Span, ...]]:
    """Head, tail and up to two error windows of one long text, labelled with char offsets."""
    target = budget
    best: tuple[str, tuple[Span, ...]] = ("", ())
    for _ in range(6):  # labels and markers vary in size: adjust the content target
        out, wins = _char_windows(text, target, scan_chars)
        if len(out) <= budget:
            if len(out) > len(best[0]):
                best = (out, wins)
            if budget - len(out) < 16:
                break
        step = budget - len(out)
        target += step if step > 0 else step - 8
    return best if best[0] or budget <= 0 else (text[: max(0, budget)], ((0, min(len(text), budget)),))


def _char_windows(text: str, target: int, scan_chars: int) -> tuple[str, tuple[Span, ...]]:
    n = len(text)
    label = len(f"[chars {n:,}–{n:,} of {n:,}]") + 1
    marker = len(f"… {n:,} chars omitted …") + 1
    if target < 2 * (label + marker) + 80:  # too small for two windows: head only
        k = max(0, min(n, target - label - marker))
        wins: list[Span] = [(0, k)]
    else:
        room = target - 4 * label - 3 * marker
        head_n, tail_n = room * 45 // 100, room * 35 // 100
        sig_n = (room - head_n - tail_n) // 2
        wins = [(0, min(n, head_n))]
        lo, hi = wins[0][1], max(wins[0][1], n - tail_n)
        pos = lo
        if sig_n > 40:
            for hit, lvl in iter_hits(text, lo, min(hi, lo + scan_chars)):
                if len(wins) >= 3:
                    break
                if lvl < 2 or hit < pos:
                    continue
                ws = max(pos, hit - sig_n // 3)
                wins.append((ws, min(hi, ws + sig_n)))
                pos = wins[-1][1]
        if tail_n and hi < n:
            wins.append((hi, n))
    parts: list[str] = []
    prev = 0
    for s, e in wins:
        if s > prev:
            parts.append(f"… {s - prev:,} chars omitted …")
        parts.append(f"[chars {s:,}–{e:,} of {n:,}]\n{text[s:e]}")
        prev = e
    if prev < n:
        parts.append(f"… {n - prev:,} chars omitted …")
    return "\n".join(parts), tuple(wins)
