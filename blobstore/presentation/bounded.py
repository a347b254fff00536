"""Hard size bounds for tool responses that say what was cut and how to get it.

A silent cut looks like the whole answer.  Every cut here leaves an inline
marker with the number of characters removed and their offsets, so the model
can ask for exactly the missing part with a range read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bounded", "bound_text"]

_DEFAULT_HINT = "use range with start={start} to read more"


@dataclass(frozen=True)
class Bounded:
    """A text cut to a bound.

    ``text`` is what to show (marker included, ``len(text) <= max_chars``);
    ``cut_chars`` how many original characters were removed, starting at
    offset ``cut_start`` (relative to the caller's ``base_offset``); ``note``
    repeats the marker wording for callers that show it elsewhere, and is
    empty when nothing was cut.
    """

    text: str
    cut_chars: int
    note: str
    cut_start: int = 0


def _align_left(text: str, end: int, slack: int) -> int:
    """Move a head cut back to just after a newline if one is close."""
    if end <= 0 or end >= len(text):
        return end
    nl = text.rfind("\n", max(0, end - slack), end)
    return nl + 1 if nl >= 0 else end


def _align_right(text: str, start: int, slack: int) -> int:
    """Move a tail cut forward to just after a newline if one is close."""
    if start <= 0 or start >= len(text):
        return start
    nl = text.find("\n", start, min(len(text), start + slack))
    return nl + 1 if nl >= 0 else start


def _fmt(template: str, start: int, end: int) -> str:
    try:
        return template.format(start=start, end=end)
    except (KeyError, IndexError, ValueError):
        return template


def bound_text(
    text: str, max_chars: int, *, where: str = "end", more_hint: str | None = _DEFAULT_HINT, base_offset: int = 0
) -> Bounded:
    """Cut *text* to at most *max_chars* characters, marker included.

    ``where="end"`` keeps the head (reading continues forwards);
    ``where="middle"`` keeps head and tail (both ends of a log matter).  Cuts
    snap to a nearby line break when one is within a few hundred characters.
    *more_hint* may use ``{start}``/``{end}`` (absolute offsets of the cut part,
    shifted by *base_offset*, as a slice: ``start`` inclusive, ``end``
    exclusive).  If the bound is too small for a marker, the text is simply
    truncated and only ``note`` carries the explanation.
    """
    if where not in ("end", "middle"):
        raise ValueError(f"where must be 'end' or 'middle', not {where!r}")
    text = "" if text is None else str(text)
    max_chars = max(0, int(max_chars))
    base_offset = max(0, int(base_offset))
    n = len(text)
    if n <= max_chars:
        return Bounded(text, 0, "", base_offset + n)

    def marker(cut: int, start: int, end: int) -> str:
        msg = f"… {cut:,} chars cut (offsets {start:,}–{end:,})"
        if more_hint:
            msg += "; " + _fmt(more_hint, start, end)
        return msg + " …"

    def marker_at(cut_from: int, cut_to: int) -> str:
        return marker(cut_to - cut_from, base_offset + cut_from, base_offset + cut_to)

    # The marker length depends on the numbers in it; size it with the largest
    # numbers it can contain so the final text cannot overshoot.
    big = base_offset + n
    worst = "\n" + marker(big, big, big) + ("\n" if where == "middle" else "")
    room = max_chars - len(worst)
    if room < 1:
        keep = text[:max_chars]
        return Bounded(keep, n - len(keep), marker_at(len(keep), n), base_offset + len(keep))

    slack = min(300, room // 4)
    if where == "middle":
        head_n = _align_left(text, (room + 1) // 2, slack)
        tail_start = _align_right(text, n - (room - head_n), slack)
        tail_start = max(tail_start, head_n)
        m = marker_at(head_n, tail_start)
        head = text[:head_n]
        sep_l = "" if head.endswith("\n") or not head else "\n"
        out = f"{head}{sep_l}{m}\n{text[tail_start:]}"
        return Bounded(out, tail_start - head_n, m, base_offset + head_n)
    head_n = _align_left(text, room, slack)
    m = marker_at(head_n, n)
    head = text[:head_n]
    sep = "" if head.endswith("\n") or not head else "\n"
    return Bounded(f"{head}{sep}{m}", n - head_n, m, base_offset + head_n)
