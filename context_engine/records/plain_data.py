"""Typed records read back from plain JSON data that may be old, newer or damaged.

Status files and summary logs outlive the Stowage that wrote them: a reader
meets files from older versions (keys missing), newer ones (keys it does not
know) and damaged ones (wrong types).  :func:`from_plain` builds a dataclass
from such a dict: a missing or mistyped field takes its default, and keys the
class does not know are kept in its ``extra`` field (when it has one) so
:func:`to_plain` writes them back unchanged.  A class whose keys were renamed
gives a static ``upgrade_plain(data) -> data`` that puts an older file's keys
under today's names first.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, Union

T = TypeVar("T")

EXTRA = "extra"
UPGRADE = "upgrade_plain"  # a class's static hook: an older file's keys under today's names


def from_plain(cls: type[T], data: Any) -> T:
    """An instance of the dataclass ``cls`` from ``data`` (anything that is not a dict reads as empty)."""
    data = data if isinstance(data, dict) else {}
    upgrade = getattr(cls, UPGRADE, None)
    if upgrade is not None:
        data = upgrade(data)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    known: set[str] = set()
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        known.add(field.name)
        if field.name == EXTRA or field.name not in data:
            continue
        converted = _convert(hints[field.name], data[field.name])
        if converted is not _INVALID:
            values[field.name] = converted
    if EXTRA in known:
        values[EXTRA] = {k: v for k, v in data.items() if k not in known}
    return cls(**values)


def to_plain(record: Any) -> dict[str, Any]:
    """The record as JSON-ready data; its ``extra`` keys are merged back at the top level."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if field.name == EXTRA:
            out.update({k: v for k, v in value.items() if k not in out})
            continue
        out[field.name] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_plain(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Invalid:
    pass


_INVALID: Any = _Invalid()


def _convert(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is not type(None):
                converted = _convert(option, value)
                if converted is not _INVALID:
                    return converted
        return _INVALID
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        return from_plain(hint, value) if isinstance(value, dict) else _INVALID  # type: ignore[arg-type]
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        if not isinstance(value, list):
            return _INVALID
        items = [_convert(item, v) for v in value]
        return [v for v in items if v is not _INVALID]
    if origin is dict or hint is dict:
        return dict(value) if isinstance(value, dict) else _INVALID
    if hint is bool:
        return value if isinstance(value, bool) else _INVALID
    if hint is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else _INVALID
    if hint is float:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _INVALID
    if hint is str:
        return value if isinstance(value, str) else _INVALID
    return value
