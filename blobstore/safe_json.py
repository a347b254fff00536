"""One reader for JSON that was stored by someone else: bounded in size and depth, never raising oddly.

Stored JSON (status files, the summary log, ``state.db`` rows, transcript
lines, records beside blobs) may be truncated, hostile or simply huge.  The
standard parser raises ``RecursionError`` on a value nested a few thousand
levels deep, and a value nested just under that limit parses but makes every
later recursive walk (``copy.deepcopy``, ``json.dumps``, ``str``) raise.  So
:func:`loads` refuses text over ``max_chars`` before parsing, catches
``RecursionError`` while parsing, measures the parsed value's depth without
recursion, and turns every failure into :class:`JsonRejected` (a
``ValueError``, so callers that already skip unparsable text keep doing so).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

MAX_DEPTH = 64  # deeper than any message, tool call or record we write; far below the interpreter's limit
MAX_CHARS = 64 * 1024 * 1024  # one stored JSON text (a state.db row, a JSONL line, a status file)


class JsonRejected(ValueError):
    """The text is not JSON this reader accepts; ``reason`` is one line for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed value (a scalar is 0), counted without recursion; stops past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list)))
    return deepest


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> Any:
    """Parse ``text``; raise :class:`JsonRejected` when it is too long, too deep or not JSON."""
    if len(text) > max_chars:
        raise JsonRejected(f"{len(text):,} characters of JSON, over the {max_chars:,} read at most")
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonRejected(f"JSON nested deeper than {max_depth} levels") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise JsonRejected(f"not valid JSON ({exc})") from None
    if depth_of(value, max_depth) > max_depth:
        raise JsonRejected(f"JSON nested deeper than {max_depth} levels")
    return value


def loads_or(text: str | bytes, default: Any = None, **limits: Any) -> Any:
    """:func:`loads`, or ``default`` for text it rejects."""
    try:
        return loads(text, **limits)
    except JsonRejected:
        return default


def read_file(path: Path, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> Any:
    """A whole JSON file; raises :class:`JsonRejected` (also for a file over ``max_chars`` bytes) or ``OSError``."""
    with open(path, "rb") as handle:
        data = handle.read(max_chars + 1)
    if len(data) > max_chars:
        raise JsonRejected(f"{path.name} is over the {max_chars:,} bytes read at most")
    return loads(data, max_depth=max_depth, max_chars=max_chars)


def iter_lines(
    path: Path, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS
) -> Iterator[tuple[int, Any | JsonRejected]]:
    """(line number, value or the :class:`JsonRejected` naming why) per non-blank line of a JSONL file.

    A bad line never ends the reading: the caller decides what to do with it.
    A line longer than ``max_chars`` is not held in memory whole.
    """
    with open(path, "rb") as handle:
        yield from iter_lines_of(handle, max_depth=max_depth, max_chars=max_chars)


def iter_lines_of(
    handle: Any, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS
) -> Iterator[tuple[int, Any | JsonRejected]]:
    """:func:`iter_lines` over an open binary (or text) file object."""
    number = 0
    while True:
        line = handle.readline(max_chars + 1)
        if not line:
            return
        number += 1
        if len(line) > max_chars and not line.endswith(b"\n" if isinstance(line, bytes) else "\n"):
            skipped = len(line)
            while line and not line.endswith(b"\n" if isinstance(line, bytes) else "\n"):
                line = handle.readline(1 << 20)
                skipped += len(line)
            yield number, JsonRejected(f"a line of {skipped:,} characters, over the {max_chars:,} read at most")
            continue
        if not line.strip():
            continue
        try:
            yield number, loads(line, max_depth=max_depth, max_chars=max_chars)
        except JsonRejected as exc:
            yield number, exc
