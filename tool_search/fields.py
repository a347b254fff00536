"""What text of a tool schema is searchable, split into weighted fields.

A tool is found by its name first, then by what its description says, then
by the arguments it takes. Keeping those apart (instead of one bag of words)
lets the ranking weigh a name hit above a passing mention in a parameter's
help text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

from .catalog import ToolEntry
from .tokens import name_tokens, tokenize

# How deep nested ``properties`` (objects, arrays of objects) are indexed.
MAX_PARAM_DEPTH = 3


@dataclass(frozen=True)
class FieldWeights:
    """Per-field term-frequency weights and length normalization (BM25F)."""

    # Chosen on BFCL (bench/bench_tool_search.py); recall@5 moved by at most
    # ~2 points across the grid tried, so these are round numbers, not a fit.
    name: float = 3.0
    server: float = 0.5
    description: float = 2.0  # 1 -> 2 with the re-ranking bonuses: +0.3 point of recall@5, MRR +0.008
    param_names: float = 1.0
    param_text: float = 1.0
    k1: float = 1.2
    b: float = 0.5  # 0.75 -> 0.5: +0.5 point of recall@5 (short tool texts need less length normalization)


FIELDS = ("name", "server", "description", "param_names", "param_text")


FieldCounts = dict[str, tuple[int, Counter[str]]]


@lru_cache(maxsize=16384)
def field_counts(entry: ToolEntry) -> FieldCounts:
    """(length, term counts) per field; cached per entry so a catalog that gains
    one MCP server re-tokenizes only the new tools when its index is rebuilt.
    Callers must not mutate the returned counters."""
    return {f: (len(toks), Counter(toks)) for f, toks in entry_fields(entry).items()}


def entry_fields(entry: ToolEntry) -> dict[str, list[str]]:
    """Token lists per field for one tool."""
    tool_toks, server_toks = name_tokens(entry.name)
    pnames: list[str] = []
    ptext: list[str] = []
    for pname, pdesc in iter_params(entry.parameters):
        pnames.extend(tokenize(pname))
        if pdesc:
            ptext.extend(tokenize(pdesc))
    return {
        "name": tool_toks,
        "server": server_toks,
        "description": tokenize(entry.description),
        "param_names": pnames,
        "param_text": ptext,
    }


def iter_params(schema: Any, depth: int = 1) -> Iterator[tuple[str, str]]:
    """(name, description + enum values) of each property, nested a few levels deep.

    Plain ``dict`` checks on purpose: ``isinstance(x, Mapping)`` dominated
    index build time, and parameters come from ``json.loads``.
    """
    if depth > MAX_PARAM_DEPTH or not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for pname, pschema in props.items():
            if not isinstance(pschema, dict):
                yield str(pname), ""
                continue
            yield str(pname), _param_text(pschema)
            yield from iter_params(pschema, depth + 1)
            items = pschema.get("items")
            if isinstance(items, dict):
                yield from iter_params(items, depth + 1)


def _param_text(pschema: dict[str, Any]) -> str:
    parts = [str(pschema.get("description") or "")]
    enum = pschema.get("enum")
    if isinstance(enum, (list, tuple)):
        parts.extend(str(v) for v in enum[:20])
    return " ".join(p for p in parts if p)
