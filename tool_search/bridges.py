"""The three bridge tools: fixed schemas and host-agnostic answers.

Bridge schemas sit in every request's tool list, i.e. in the cached prompt
prefix. Their text is therefore constant: no tool counts, no tool lists,
nothing that changes when an MCP server connects, so adding or removing a
deferred tool never busts the provider's prompt cache.

``BridgeService`` answers for one session's *scoped* catalog: a tool outside
it is neither listed, described nor callable (the bridge must not widen a
restricted session's toolset).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Mapping

from .batch import MAX_CALLS, MAX_NAME_CHARS, MAX_NAMES, MAX_QUERIES, MAX_QUERY_CHARS, BatchError, Slot, string_slots
from .cache import IndexCache, default_cache
from .catalog import Catalog, ToolEntry
from .index import Hit
from .semantic import SemanticSearch

SEARCH_NAME = "stowage_tool_search"
DESCRIBE_NAME = "stowage_tool_describe"
CALL_NAME = "stowage_tool_call"
BRIDGE_NAMES: frozenset[str] = frozenset({SEARCH_NAME, DESCRIBE_NAME, CALL_NAME})

LIST_ALL_QUERY = "*"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
LIST_PAGE_SIZE = 500
SHORT_DESCRIPTION_CHARS = 240

NOTHING_MATCHED = (
    "Nothing matched. Tool names and descriptions are mostly English: try a few English keywords "
    f"(e.g. 'weather forecast city'), or query \"{LIST_ALL_QUERY}\" to list every tool name."
)

_SEARCH_DESCRIPTION = (
    "Find tools that are available but not listed here (MCP servers, plugins). "
    "Describe what you want to do, or give a tool name; returns the best matches "
    "with name, source and a short description. Several searches at once: pass "
    "'queries' (a list) instead of 'query'. Use query \"*\" to list the names "
    f"of every such tool. Then call {DESCRIBE_NAME} for a tool's parameters and "
    f"{CALL_NAME} to run it."
)
_DESCRIBE_DESCRIPTION = (
    "Return the full schema (description and JSON parameters) of a deferred tool "
    f"(listed or found with {SEARCH_NAME}); "
    "pass 'names' (a list) to describe several at once."
)
_CALL_DESCRIPTION = (
    f"Run a deferred tool (listed in {SEARCH_NAME}'s description, or found with it). "
    "Pass its exact name and its arguments as an "
    "object matching the tool's parameters. Approvals and hooks apply as for any tool. "
    "Several independent calls at once: pass 'calls', a list of {name, arguments} objects; "
    "they run one after the other and each gets its own result or error."
)


def _limit_text(default_limit: int, max_limit: int) -> str:
    return f"Maximum matches to return (default {default_limit}, at most {max_limit})."


_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "name": SEARCH_NAME,
        "description": _SEARCH_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do (e.g. 'create github issue'), a tool name, "
                    'or "*" to list all tool names.',
                },
                "queries": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": f"Several searches in one call (up to {MAX_QUERIES}); results come back per query.",
                },
                "limit": {"type": "integer", "description": _limit_text(DEFAULT_LIMIT, MAX_LIMIT)},
                "offset": {
                    "type": "integer",
                    "description": 'With query "*": index of the first name to list, for the next page.',
                },
            },
            "required": [],
        },
    },
    {
        "name": DESCRIBE_NAME,
        "description": _DESCRIBE_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Exact tool name."},
                "names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": f"Several exact tool names (up to {MAX_NAMES}).",
                },
            },
            "required": [],
        },
    },
    {
        "name": CALL_NAME,
        "description": _CALL_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Exact tool name."},
                "arguments": {"type": "object", "description": "Arguments for the tool, matching its parameters."},
                "calls": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "Exact tool name."},
                            "arguments": {"type": "object", "description": "Arguments for the tool."},
                        },
                        "required": ["name", "arguments"],
                    },
                    "description": f"Several independent calls (up to {MAX_CALLS}), instead of name and arguments.",
                },
            },
            "required": [],
        },
    },
)


def bridge_schemas(
    default_limit: int = DEFAULT_LIMIT, max_limit: int = MAX_LIMIT, listing: str = ""
) -> list[dict[str, Any]]:
    """Bare schemas of the three bridges; identical bytes on every call.

    The only variable text is the configured search limits, which are fixed
    for a session (pass the same values given to ``BridgeService``), and the
    deferred-tool ``listing`` (see ``listing.py``), appended to the search
    description; it changes only when the session's deferred tools do.
    """
    schemas = copy.deepcopy(list(_SCHEMAS))
    max_limit = max(1, max_limit)
    default_limit = max(1, min(max_limit, default_limit))
    if (default_limit, max_limit) != (DEFAULT_LIMIT, MAX_LIMIT):
        schemas[0]["parameters"]["properties"]["limit"]["description"] = _limit_text(default_limit, max_limit)
    if listing:
        schemas[0]["description"] += "\n\n" + listing
    return schemas


def bridge_tool_defs(
    default_limit: int = DEFAULT_LIMIT, max_limit: int = MAX_LIMIT, listing: str = ""
) -> list[dict[str, Any]]:
    """The same schemas in the OpenAI ``{"type":"function","function":...}`` wrapper."""
    return [{"type": "function", "function": s} for s in bridge_schemas(default_limit, max_limit, listing)]


class BridgeError(ValueError):
    """A bridge request the model got wrong; the message is meant for the model."""


class ToolNotAvailable(BridgeError):
    """The named tool is not in this session's scoped catalog."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        msg = f"Tool '{name}' is not available to this session."
        if suggestions:
            msg += " Did you mean: " + ", ".join(suggestions) + "?"
        msg += f" Use {SEARCH_NAME} to find available tools."
        super().__init__(msg)
        self.name = name
        self.suggestions = suggestions


class BridgeService:
    """Answers the bridges for one session's scoped catalog."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        cache: IndexCache | None = None,
        default_limit: int = DEFAULT_LIMIT,
        max_limit: int = MAX_LIMIT,
        semantic: "SemanticSearch | None" = None,
    ) -> None:
        self.catalog = catalog
        self.max_limit = max(1, max_limit)
        self.default_limit = max(1, min(self.max_limit, default_limit))
        self._index = (cache if cache is not None else default_cache).get(catalog)
        self._semantic = semantic

    def _hits(self, query: str, limit: int) -> list[Hit]:
        """BM25 (with name matches first), fused with embeddings when the semantic leg is on."""
        if self._semantic is not None:
            return self._semantic.search(self._index, query, limit)
        return self._index.search(query, limit)

    # -- stowage_tool_search -------------------------------------------------
    def search(self, query: str, limit: int | None = None, offset: int = 0) -> dict[str, Any]:
        """Ranked matches, or (query "*") every tool name grouped by toolset."""
        query = str(query or "").strip()
        if not query:
            return {
                "error": f'query (or queries) is required; describe the task, name a tool, or use "{LIST_ALL_QUERY}".'
            }
        if query == LIST_ALL_QUERY:
            return self.list_all(offset)
        n = self._clamp_limit(limit)
        hits = self._hits(query, n)
        out: dict[str, Any] = {
            "query": query,
            "matches": [
                {
                    "name": h.name,
                    "source": h.entry.toolset or h.entry.source,
                    "description": short_description(h.entry.description),
                    "required": required_params(h.entry),
                    "score": round(h.score, 3),
                    "match": h.match,
                }
                for h in hits
            ],
            "total_available": len(self.catalog),
        }
        if not hits:
            out["note"] = NOTHING_MATCHED
            out["sources"] = self.sources()
        return out

    def sources(self) -> dict[str, int]:
        """Tool count per toolset, for an answer that found nothing."""
        counts: dict[str, int] = {}
        for entry in self.catalog.entries:
            key = entry.toolset or entry.source
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def search_many(self, slots: list[Slot], limit: int | None = None) -> dict[str, Any]:
        """Several searches: matches per query, and one map of the tools they name."""
        n = self._clamp_limit(limit)
        results: list[dict[str, Any]] = []
        tools: dict[str, dict[str, Any]] = {}
        for slot in slots:
            if not slot.ok:
                results.append({"query": slot.value, "error": slot.error})
                continue
            if slot.value == LIST_ALL_QUERY:
                results.append(
                    {
                        "query": slot.value,
                        "error": f'"{LIST_ALL_QUERY}" lists every tool; ask for it alone '
                        "with 'query', not in a batch.",
                    }
                )
                continue
            hits = self._hits(slot.value, n)
            entry: dict[str, Any] = {
                "query": slot.value,
                "matches": [{"name": h.name, "score": round(h.score, 3), "match": h.match} for h in hits],
            }
            if not hits:
                entry["note"] = NOTHING_MATCHED
            results.append(entry)
            for h in hits:
                tools.setdefault(
                    h.name,
                    {
                        "source": h.entry.toolset or h.entry.source,
                        "description": short_description(h.entry.description),
                        "required": required_params(h.entry),
                    },
                )
        return {"results": results, "tools": tools, "total_available": len(self.catalog)}

    def list_all(self, offset: int = 0) -> dict[str, Any]:
        """Names only, so even thousands of tools stay affordable to list."""
        names = self.catalog.names
        start = max(0, _as_int(offset, 0))
        page = names[start : start + LIST_PAGE_SIZE]
        grouped: dict[str, list[str]] = {}
        for name in page:
            entry = self.catalog.get(name)
            grouped.setdefault((entry.toolset if entry else "") or "other", []).append(name)
        out: dict[str, Any] = {
            "query": LIST_ALL_QUERY,
            "total_available": len(names),
            "offset": start,
            "tools": grouped,
        }
        if start + LIST_PAGE_SIZE < len(names):
            out["next_offset"] = start + LIST_PAGE_SIZE
        return out

    # -- stowage_tool_describe -----------------------------------------------
    def describe(self, name: str) -> dict[str, Any]:
        """Full schema of one tool, or an error naming close alternatives."""
        name = str(name or "").strip()
        if not name:
            return {"error": "name (or names) is required."}
        entry = self.catalog.get(name) or self._unique_name_match(name)
        if entry is None:
            err = ToolNotAvailable(name, self._index.suggest(name))
            return {"error": str(err), "did_you_mean": err.suggestions}
        return {**entry.schema(), "source": entry.toolset or entry.source}

    def describe_many(self, slots: list[Slot]) -> dict[str, Any]:
        """Several schemas, in the order asked; an unknown name gets its own error."""
        results: list[dict[str, Any]] = []
        for slot in slots:
            if not slot.ok:
                results.append({"name": slot.value, "error": slot.error})
                continue
            described = self.describe(slot.value)
            if "error" in described:
                described = {"name": slot.value, **described}
            results.append(described)
        return {"results": results}

    def _unique_name_match(self, name: str) -> ToolEntry | None:
        """Forgive case, separators or a dropped ``mcp__server__`` prefix when unambiguous."""
        matches = self._index.names.exact(name)
        if len(matches) == 1:
            return self.catalog.entries[matches[0]]
        return None

    # -- stowage_tool_call ---------------------------------------------------
    def resolve_call(self, name: Any, arguments: Any) -> tuple[str, dict[str, Any]]:
        """Validate a bridged call; returns (tool name, argument dict) for the host.

        Raises ``ToolNotAvailable`` for names outside the scoped catalog (the
        scope-leak guard) and ``BridgeError`` for malformed arguments.
        """
        tool = str(name or "").strip()
        if not tool:
            raise BridgeError(f"{CALL_NAME} needs 'name': the exact name of a tool from {SEARCH_NAME}.")
        if tool in BRIDGE_NAMES:
            raise BridgeError(f"'{tool}' is a bridge tool; call it directly, not through {CALL_NAME}.")
        if tool not in self.catalog:
            raise ToolNotAvailable(tool, self._index.suggest(tool))
        return tool, parse_arguments(arguments)

    def handle(self, bridge: str, args: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Answer a search or describe call from the model's raw arguments."""
        try:
            params = parse_arguments(args)
        except BridgeError as exc:
            return {"error": str(exc)}
        try:
            if bridge == SEARCH_NAME:
                slots = string_slots(params, "queries", "query", MAX_QUERIES, MAX_QUERY_CHARS, "queries")
                if slots is not None:
                    return self.search_many(slots, params.get("limit"))
                return self.search(params.get("query", ""), params.get("limit"), params.get("offset", 0))
            if bridge == DESCRIBE_NAME:
                slots = string_slots(params, "names", "name", MAX_NAMES, MAX_NAME_CHARS, "tool names")
                if slots is not None:
                    return self.describe_many(slots)
                return self.describe(params.get("name", ""))
        except BatchError as exc:
            return {"error": str(exc)}
        return {"error": f"'{bridge}' is not answered inline; resolve it with resolve_call."}

    def _clamp_limit(self, limit: Any) -> int:
        if limit is None:
            return self.default_limit
        return max(1, min(self.max_limit, _as_int(limit, self.default_limit)))


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as a dict, from a dict, a JSON object string, or nothing."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        text = arguments.strip()
        if not text:
            return {}
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BridgeError(
                f"'arguments' is not valid JSON ({exc.msg} at position {exc.pos}); pass an object."
            ) from None
    if not isinstance(arguments, Mapping):
        raise BridgeError(f"'arguments' must be an object, got {type(arguments).__name__}.")
    return dict(arguments)


_WS_RE = re.compile(r"\s+")


def required_params(entry: ToolEntry) -> list[str]:
    """The tool's required top-level parameters: with them a model can often call without describing first."""
    required = entry.parameters.get("required")
    return [str(r) for r in required] if isinstance(required, list) else []


def short_description(text: str, limit: int = SHORT_DESCRIPTION_CHARS) -> str:
    """One line, cut at a word boundary: search results stay small."""
    flat = _WS_RE.sub(" ", text or "").strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def _as_int(value: Any, fallback: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return fallback
