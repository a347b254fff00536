"""Paging ``stowage_grep`` through everything a session stored.

A session can store thousands of items; one call searches them newest first
until it has enough matches or its time budget is spent, and says exactly how
many are left.  The continuation is a cursor naming the last item searched by
its place in that order (creation time, then SHA-256), not an offset: items
stored or evicted between two calls never make a continuation skip one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...blobstore import CatalogEntry

_CURSOR = re.compile(r"(\d{1,12}(?:\.\d{1,20})?(?:e[+-]?\d{1,3})?):([0-9a-f]{16,64})")


class CursorError(ValueError):
    """A cursor that no earlier reply gave."""


@dataclass(frozen=True)
class Cursor:
    created_at: float
    sha_prefix: str

    def __str__(self) -> str:
        return f"{self.created_at!r}:{self.sha_prefix}"

    def is_after(self, entry: CatalogEntry) -> bool:
        """Whether ``entry`` comes after this cursor in newest-first order (not searched yet)."""
        return (entry.created_at, entry.sha256[: len(self.sha_prefix)]) < (self.created_at, self.sha_prefix)


def cursor_after(entry: CatalogEntry) -> Cursor:
    """The cursor that continues right after ``entry``."""
    return Cursor(entry.created_at, entry.sha256[:24])


def parse_cursor(value: object) -> Cursor | None:
    """None for no cursor; raises CursorError for anything an earlier reply could not have given."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 120:
        raise CursorError("cursor must be the next_cursor string of an earlier stowage_grep reply")
    match = _CURSOR.fullmatch(value.strip().lower())
    if match is None:
        raise CursorError("cursor must be the next_cursor string of an earlier stowage_grep reply")
    return Cursor(float(match.group(1)), match.group(2))


@dataclass(frozen=True)
class Page:
    """What is left to search: ``todo`` in order, after ``done`` items an earlier call covered."""

    todo: Sequence[CatalogEntry]
    done: int


def page(entries: Sequence[CatalogEntry], cursor: Cursor | None) -> Page:
    """``entries`` (newest first) split at ``cursor``."""
    if cursor is None:
        return Page(entries, 0)
    for position, entry in enumerate(entries):
        if cursor.is_after(entry):
            return Page(entries[position:], position)
    return Page((), len(entries))
