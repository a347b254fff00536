"""A window of lines bounded in bytes: what a viewer shows of a blob, and where to continue.

``read_lines`` bounds a read in lines only, so one 8 MB line comes back
whole.  A window stops at ``max_lines`` lines or ``max_bytes`` bytes of
text, whichever comes first; a long line is read in pieces (memory stays
bounded) and cut, and the window says where the next one starts: a line
number and a character offset within that line.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reader import BlobReader, iter_line_batches

PIECE_BYTES = 64 * 1024  # a long line is decoded at most this much at a time


@dataclass(frozen=True)
class LineWindow:
    """``text``: lines joined by ``\\n`` (no marker); ``cut``: stopped by the byte bound.

    ``next_start``/``next_offset`` (1-based line, 0-based character in it) is
    where the following window starts; ``next_start`` is None at the end.
    """

    text: str
    start: int
    offset: int
    end: int
    cut: bool
    next_start: int | None
    next_offset: int


def _fit(text: str, room: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits ``room`` bytes."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= room:
        return text
    return data[: max(0, room)].decode("utf-8", "ignore")


def read_window(reader: BlobReader, start: int, offset: int, max_lines: int, max_bytes: int) -> LineWindow:
    """Lines from 1-based ``start`` (from character ``offset`` in it), bounded by ``max_lines`` and ``max_bytes``."""
    if start < 1 or offset < 0 or max_lines < 1 or max_bytes < 1:
        raise ValueError("start >= 1, offset >= 0, max_lines >= 1 and max_bytes >= 1 are required")
    total_lines = reader.off.line_count
    parts: list[str] = []
    used = 0
    shown_any = False
    line, column = start, 0  # the line and character the reader's next text starts at
    for _first, texts, is_piece in iter_line_batches(reader, start, min(PIECE_BYTES, max_bytes + 4)):
        for text in texts:
            skip = max(0, offset - column) if line == start else 0
            shown_from = column + skip
            column += len(text)
            text = text[skip:]
            separator = "\n" if shown_any and shown_from == 0 else ""
            size = len(separator) + len(text.encode("utf-8", "surrogatepass"))
            if used + size > max_bytes:
                room = max_bytes - used - len(separator)
                kept = _fit(text, room) if room > 0 else ""
                if not kept and separator:  # not even a character of this line fits: end before it
                    return LineWindow("".join(parts), start, offset, line - 1, True, line, 0)
                parts.append(separator + kept)
                return LineWindow("".join(parts), start, offset, line, True, line, shown_from + len(kept))
            parts.append(separator + text)
            used += size
            shown_any = shown_any or bool(text) or shown_from == 0
            if is_piece:
                continue
            if line - start + 1 >= max_lines:
                return LineWindow(
                    "".join(parts), start, offset, line, False, line + 1 if line < total_lines else None, 0
                )
            line, column = line + 1, 0
    return LineWindow("".join(parts), start, offset, max(start, min(line, total_lines)), False, None, 0)
