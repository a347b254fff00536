"""The deferred-tool catalog: schemas plus where they come from, and a checksum.

The catalog is an immutable value. Its checksum (sha256 over each tool's
name, description, toolset and canonical-JSON parameters) identifies it, so an
index built for one catalog can be reused for every request that carries the
same tools, and rebuilt the moment one schema changes. Entries are kept sorted by name so tool order in the host's list
never changes the checksum or the tie-breaking of the ranking.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from .tokens import split_tool_name

MCP_TOOLSET_PREFIX = "mcp-"


def source_kind(toolset: str) -> str:
    """``mcp`` for MCP servers' toolsets, ``plugin`` for any other named toolset."""
    if toolset.startswith(MCP_TOOLSET_PREFIX):
        return "mcp"
    return "plugin" if toolset else "other"


def unwrap_schema(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept both bare ``{"name",...}`` and OpenAI ``{"type":"function","function":{...}}``."""
    fn = schema.get("function")
    if fn is not None and (type(fn) is dict or isinstance(fn, Mapping)) and "name" in fn:
        return fn
    return schema


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, unicode kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class ToolEntry:
    """One deferred tool as the bridges serve it.

    Parameters are held as canonical JSON text: immutable (a cached catalog
    cannot be mutated behind its checksum), hashable, and cheap to checksum.
    """

    name: str
    description: str
    parameters_json: str = "{}"
    toolset: str = ""

    @classmethod
    def create(
        cls, name: str, description: str = "", parameters: Mapping[str, Any] | None = None, toolset: str = ""
    ) -> "ToolEntry":
        return cls(name, description, canonical_json(dict(parameters or {})), toolset)

    @property
    def parameters(self) -> dict[str, Any]:
        """A fresh copy of the JSON-schema parameters."""
        return json.loads(self.parameters_json)

    @property
    def source(self) -> str:
        return source_kind(self.toolset)

    def schema(self) -> dict[str, Any]:
        """The bare schema, as ``stowage_tool_describe`` returns it."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class Catalog:
    """Sorted, de-duplicated tool entries with a content checksum."""

    entries: tuple[ToolEntry, ...]
    checksum: str
    _by_name: Mapping[str, ToolEntry] = field(repr=False, compare=False)

    @classmethod
    def from_entries(cls, entries: Iterable[ToolEntry]) -> "Catalog":
        by_name: dict[str, ToolEntry] = {}
        for e in entries:
            # First registration wins, as in a host registry that rejects overrides.
            by_name.setdefault(e.name, e)
        ordered = tuple(by_name[n] for n in sorted(by_name))
        h = hashlib.sha256()
        for e in ordered:
            # Length-prefixed fields: unambiguous without re-serializing each schema.
            for part in (e.name, e.description, e.toolset, e.parameters_json):
                raw = part.encode("utf-8")
                h.update(len(raw).to_bytes(8, "big"))
                h.update(raw)
        digest = h.hexdigest()
        return cls(entries=ordered, checksum=digest, _by_name=MappingProxyType(dict(by_name)))

    @classmethod
    def from_schemas(
        cls, schemas: Iterable[Mapping[str, Any]], toolset_of: Mapping[str, str] | Callable[[str], str] | None = None
    ) -> "Catalog":
        """Build from tool schemas; ``toolset_of`` maps a name to its toolset.

        A schema may also carry its toolset itself under ``"toolset"``. Without
        either, ``mcp__<server>__x`` (and 0.17.0's ``mcp_<server>_x``) names are attributed to ``mcp-<server>``.
        """
        lookup = _toolset_lookup(toolset_of)
        entries: list[ToolEntry] = []
        for raw in schemas:
            fn = unwrap_schema(raw)
            name = str(fn.get("name") or "").strip()
            if not name:
                continue
            params = fn.get("parameters")
            toolset = str(raw.get("toolset") or fn.get("toolset") or lookup(name) or _implied_toolset(name))
            entries.append(
                ToolEntry(
                    name=name,
                    description=str(fn.get("description") or ""),
                    parameters_json=canonical_json(
                        params if type(params) is dict else dict(params) if isinstance(params, Mapping) else {}
                    ),
                    toolset=toolset,
                )
            )
        return cls.from_entries(entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.entries)

    def get(self, name: str) -> ToolEntry | None:
        return self._by_name.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    def restrict(self, allowed: Iterable[str]) -> "Catalog":
        """The sub-catalog a session may reach (its toolset scope)."""
        keep = set(allowed)
        return Catalog.from_entries(e for e in self.entries if e.name in keep)


def _toolset_lookup(toolset_of: Mapping[str, str] | Callable[[str], str] | None) -> Callable[[str], str]:
    if toolset_of is None:
        return lambda _name: ""
    if callable(toolset_of):
        return lambda name: toolset_of(name) or ""
    return lambda name: toolset_of.get(name, "")


def _implied_toolset(name: str) -> str:
    server, _tool = split_tool_name(name)
    return MCP_TOOLSET_PREFIX + server if server else ""
