"""Validate the user's ``stowage:`` block into :class:`Settings`.

Validation happens once, when the engine starts.  Every problem is reported
together, each naming the key, the bad value and what is accepted, so a user
fixes their ``config.yaml`` in one go.  Keys under ``compaction`` that are not
set fall back to the matching built-in ``compression.*`` key.
"""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from .schema import BOOLEAN, CHOICE, INT_MAP, INTEGER, KEYS, KEYS_BY_PATH, NUMBER, SECTIONS, STRING, STRINGS, Key
from .sections import (
    SECTION_TYPES,
    CompactionSection,
    SpillSection,
    StoreSection,
    TokenizerSection,
    ToolSearchSection,
    ViewSection,
    build_section,
    section_values,
)

INHERITED_TAIL_FLOOR_CAP = 8


class StowageConfigError(ValueError):
    """The ``stowage:`` block (or an inherited key) holds a bad value."""

    def __init__(self, problems: list[str], source: str = "config.yaml") -> None:
        self.problems = problems
        self.source = source
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"Stowage configuration error in {source}:\n{lines}\n"
            "Fix these keys (see docs/configuration.md) and restart Hermes."
        )

    def __reduce__(self) -> tuple:
        # The host deep-copies the engine that holds this error; rebuild from
        # the problem list, not from the formatted message.
        return (type(self), (self.problems, self.source))


class Settings:
    """All Stowage settings, validated; each section a typed, frozen dataclass (config_sections.py)."""

    def __init__(self, values: dict[str, dict[str, Any]], origins: dict[str, str]) -> None:
        self.compaction: CompactionSection = build_section("compaction", values["compaction"])
        self.view: ViewSection = build_section("view", values["view"])
        self.tokenizer: TokenizerSection = build_section("tokenizer", values["tokenizer"])
        self.store: StoreSection = build_section("store", values["store"])
        self.spill: SpillSection = build_section("spill", values["spill"])
        self.tool_search: ToolSearchSection = build_section("tool_search", values["tool_search"])
        self.origins = MappingProxyType(origins)  # path -> "default" | "stowage" | "compression.x"

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__dict__:
            raise AttributeError(f"stowage settings are read-only ({name})")
        super().__setattr__(name, value)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {name: section_values(getattr(self, name)) for name in SECTION_TYPES}

    def __deepcopy__(self, memo: dict[int, Any]) -> "Settings":
        return self  # immutable


def default_settings() -> Settings:
    return load_settings({})


def load_settings(config: Mapping[str, Any] | None, *, source: str = "config.yaml") -> Settings:
    """Validate the whole ``config.yaml`` mapping; raise :class:`StowageConfigError`."""
    config = config if isinstance(config, Mapping) else {}
    problems: list[str] = []
    raw = config.get("stowage") or {}
    if not isinstance(raw, Mapping):
        problems.append(f"stowage: expected a mapping of sections ({', '.join(SECTIONS)}), got {_show(raw)}")
        raw = {}
    problems += _unknown_keys(raw)
    raw_compression = config.get("compression")
    compression: Mapping[str, Any] = raw_compression if isinstance(raw_compression, Mapping) else {}

    values: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    origins: dict[str, str] = {}
    for key in KEYS:
        section_raw = raw.get(key.section)
        section_raw = section_raw if isinstance(section_raw, Mapping) else {}
        if key.name in section_raw:
            value, origin = section_raw[key.name], "stowage"
        elif key.inherits and key.inherits.split(".", 1)[1] in compression:
            value, origin = compression[key.inherits.split(".", 1)[1]], key.inherits
        else:
            values[key.section][key.name] = _copy_default(key.default)
            origins[key.path] = "default"
            continue
        checked, problem = _check(key, value)
        if not problem and key.path == "store.path":
            problem = _store_path_problem(checked)
        if problem:
            label = f"stowage.{key.path}" if origin == "stowage" else f"{origin} (inherited by stowage.{key.path})"
            problems.append(f"{label} = {_show(value)}: {problem}; expected {key.accepted()}. {key.doc}")
            checked = _copy_default(key.default)
        if key.path == "compaction.protect_last_n" and origin != "stowage":
            checked = min(checked, INHERITED_TAIL_FLOOR_CAP)
        values[key.section][key.name] = checked
        origins[key.path] = origin
    if problems:
        raise StowageConfigError(problems, source)
    return Settings(values, origins)


def _unknown_keys(raw: Mapping[str, Any]) -> list[str]:
    problems = []
    for section, body in raw.items():
        if section not in SECTIONS:
            problems.append(
                f"stowage.{section}: unknown section{_suggest(str(section), SECTIONS)}; "
                f"known sections: {', '.join(SECTIONS)}"
            )
            continue
        if body is None:
            continue
        if not isinstance(body, Mapping):
            problems.append(f"stowage.{section} = {_show(body)}: expected a mapping of keys")
            continue
        names = [k.name for k in KEYS if k.section == section]
        for name in body:
            if f"{section}.{name}" not in KEYS_BY_PATH:
                problems.append(
                    f"stowage.{section}.{name}: unknown key{_suggest(str(name), names)}; known keys: {', '.join(names)}"
                )
    return problems


def _suggest(word: str, options) -> str:  # noqa: ANN001
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check(key: Key, value: Any) -> tuple[Any, str]:
    """Coerce ``value`` for ``key``; returns (value, problem or '')."""
    if key.kind == BOOLEAN:
        if isinstance(value, bool):
            return value, ""
        return value, "not a boolean"
    if key.kind in (NUMBER, INTEGER):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, "not a number"
        if isinstance(value, float) and not math.isfinite(value):
            return value, "not a finite number"
        # compare before converting: a huge int has no float, a fractional float no int
        if (key.minimum is not None and value < key.minimum) or (key.maximum is not None and value > key.maximum):
            return value, "out of range"
        if key.kind == INTEGER and isinstance(value, float) and not value.is_integer():
            return value, "not a whole number"
        return (int(value) if key.kind == INTEGER else float(value)), ""
    if key.kind == CHOICE:
        normalized = _normalize_choice(value)
        if normalized in key.choices:
            return normalized, ""
        return value, "not an accepted value"
    if key.kind == STRING:
        if isinstance(value, str):
            return value, ""
        return value, "not a string"
    if key.kind == STRINGS:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value), ""
        return value, "not a list of strings"
    if key.kind == INT_MAP:
        if isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v > 0 for k, v in value.items()
        ):
            return dict(value), ""
        return value, "not a mapping of tool names to positive whole numbers"
    raise AssertionError(f"unhandled key kind {key.kind}")


def _store_path_problem(raw: str) -> str:
    """A store.path that cannot be a folder, caught at start rather than at first use."""
    if "\x00" in raw:
        return "contains a NUL character"
    text = raw.strip()
    if not text:
        return ""
    path = Path(os.path.expandvars(os.path.expanduser(text)))
    if not path.is_absolute():
        return ""  # relative to the Hermes home: checked when the session opens the store
    try:
        for folder in (path, *path.parents):
            if folder.exists():
                return (
                    ""
                    if folder.is_dir()
                    else ("is a file, not a folder" if folder == path else f"{str(folder)!r} is a file, not a folder")
                )
    except OSError:  # unreadable parents: the store reports what it cannot open
        return ""
    return ""


def _normalize_choice(value: Any) -> Any:
    """YAML turns on/off into booleans; accept them for on/off choices."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    return value.strip().lower() if isinstance(value, str) else value


def _copy_default(value: Any) -> Any:
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
