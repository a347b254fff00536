"""One session's tool search: which schemas a request carries, and the bridges.

Per request (``shape_request``): decide whether deferral is on (mode and the
deferrable schemas' share of the window), build or reuse the session's scoped
catalog (only the tools this request offers, i.e. what the session was
granted), optionally pre-select the best tools for the latest user message,
and return the new tool list.  Calls the model made to a deferred tool
appear in the history in bridge form, so the transcript never names a tool
the request does not offer.

The bridges are answered here (search, describe) and a bridged call is
resolved against the scoped catalog: a tool outside it is refused, whatever
name the model tries.  Knows nothing of Hermes: the host supplies its core
tool names, the registry's toolsets and a dispatcher.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from . import (
    BRIDGE_NAMES,
    CALL_NAME,
    ActivationDecision,
    BridgeError,
    BridgeService,
    Catalog,
    assemble_tools,
    bridge_schemas,
    decide,
    load_default_embedder,
    preselect,
)
from .activation import schema_name
from .calls import call_batch
from .dense_leg import DenseLeg
from .inline_picks import PickStore, blocks_for, store_for
from .listing import count_in_pieces, session_listing
from .messages import call_id, call_name, last_index, message_text, role_of, tool_calls_of
from .search_settings import ToolSearchSection
from .semantic import semantic_leg
from .status import ToolSearchStatus

logger = logging.getLogger(__name__)

HOST_BRIDGE_NAMES = frozenset({"tool_search", "tool_describe", "tool_call"})
Dispatcher = Callable[[str, dict[str, Any]], str]
DenseSource = Callable[[], "DenseLeg | None"]
PicksFolder = Callable[[], "Path | None"]


@dataclass(frozen=True)
class ShapedRequest:
    tools: list[Any]
    messages: list[dict[str, Any]]
    decision: ActivationDecision | None
    preselected: tuple[str, ...] = ()
    note: str = ""


class ToolSearchSession:
    def __init__(
        self,
        ts: ToolSearchSection,
        count_tokens: Callable[[str], int],
        dense: DenseSource | None = None,
        picks_folder: PicksFolder | None = None,
    ) -> None:
        # The library's "preselect" mode follows the auto threshold, so it only
        # stands in for "auto"; with "on", deferral stays unconditional and
        # preselection is applied on top.
        self.mode = "preselect" if ts.preselect and ts.enabled == "auto" else ts.enabled
        self.preselect = bool(ts.preselect) and ts.enabled != "off"
        self.threshold_pct = ts.threshold_pct
        self.never_defer = tuple(ts.never_defer)
        self.preselect_k = ts.preselect_k
        self.hybrid = ts.hybrid
        self.search_limit = ts.search_limit
        self.settings_ts = ts
        self.pinned = tuple(ts.preselect_pinned)
        # inline pre-selection: the tool list stays fixed, the picks travel as text in their user message
        self.inline = ts.enabled != "off" and (
            ts.inline == "on" or (ts.inline == "auto" and bool(ts.embedding_endpoint.strip()))
        )
        self.inline_k = ts.inline_k
        self._picks_folder = picks_folder
        self.inlined: tuple[str, ...] = ()  # the tools the newest request's newest block names
        # the host's semantic leg (an embedding endpoint, cached vectors); None: the offline extra as before
        self._dense_source = dense
        self._keep_memo: tuple[tuple[str, str, int], tuple[str, ...]] | None = None
        # a child agent's copy (review agent, subagent) keeps the parent's list-mode pick: its own prompt
        # would otherwise pick another list and re-bill the prefix it shares with the parent
        self._parent_keep: tuple[str, ...] | None = None
        self.listing: tuple[str, str] = ("", "")
        self._count_tokens = count_tokens
        self._catalog_key: tuple | None = None
        self.catalog: Catalog | None = None
        self.service: BridgeService | None = None
        self.last: ShapedRequest | None = None
        self.offered: frozenset[str] = frozenset()  # every tool name the last request offered
        self.searches = 0
        self.calls = 0
        self.refusals = 0

    # -- the tool list of one request ------------------------------------------------
    def shape_request(
        self,
        tools: Sequence[Any],
        messages: list[dict[str, Any]],
        *,
        context_length: int,
        core_names: Collection[str],
        toolset_of: Callable[[str], str | None],
        registered: Collection[str],
    ) -> ShapedRequest:
        names = [schema_name(t) for t in tools]
        self.offered = frozenset(names)
        if HOST_BRIDGE_NAMES & set(names):
            # Hermes's own tool search already deferred: do not defer twice.
            shaped = ShapedRequest(
                [t for t in tools if schema_name(t) not in BRIDGE_NAMES],
                messages,
                None,
                note="Hermes tool search is active; Stowage does not defer",
            )
            self.last = shaped
            return shaped
        own = {n for n in names if n.startswith("stowage_") or n not in registered}
        decision = decide(
            tools,
            mode=self.mode,
            context_length=context_length,
            core_names=core_names,
            never_defer=self.never_defer,
            own_names=own,
            threshold_pct=self.threshold_pct,
            count_tokens=self._count_tokens,
        )
        if not decision.active:
            shaped = ShapedRequest([t for t in tools if schema_name(t) not in BRIDGE_NAMES], messages, decision)
            self.last = shaped
            return shaped
        deferred = set(decision.deferrable_names)
        self._refresh_catalog([t for t in tools if schema_name(t) in deferred], toolset_of)
        keep: tuple[str, ...] = ()
        if self.preselect and not self.inline and self.catalog is not None:
            keep = self._preselect(self.catalog, _latest_user_text(messages))
        self.listing = session_listing(self.catalog, self.settings_ts, context_length, self._count_tokens)
        new_tools = list(assemble_tools(tools, decision, keep, wrapped=_is_wrapped(tools), listing=self.listing[0]))
        hidden = deferred - set(keep)
        shaped = ShapedRequest(new_tools, bridge_form_history(messages, hidden), decision, keep)
        self.last = shaped
        return shaped

    def _preselect(self, catalog: Catalog, message: str) -> tuple[str, ...]:
        """The pinned tools and the ``preselect_k`` best for ``message``, decided once per message and catalog.

        Every request of one user message (each tool result is another
        request) gets the same list, so the tool list changes at most once
        per user message and the prompt-cache prefix holds within it, even
        when the embedding endpoint fails or comes back mid-message.
        """
        if self._parent_keep is not None:
            return tuple(n for n in self._parent_keep if n in catalog)
        key = (catalog.checksum, message, self.preselect_k)
        if self._keep_memo is not None and self._keep_memo[0] == key:
            return self._keep_memo[1]
        picks = self._rank(catalog, message, self.preselect_k)
        pinned = [n for n in self.pinned if n in catalog and n not in picks]
        keep = tuple(pinned + picks)
        self._keep_memo = (key, keep)
        return keep

    def _rank(self, catalog: Catalog, message: str, k: int) -> list[str]:
        leg = self._dense_source() if self._dense_source is not None else None
        if leg is not None:
            return preselect(catalog, message, k=k, dense=leg)
        # hybrid without a host leg: the offline model of the `embeddings` extra, if installed
        embedder = load_default_embedder() if self.hybrid and self._dense_source is None else None
        return preselect(catalog, message, k=k, embedder=embedder)

    # -- inline pre-selection ----------------------------------------------------------
    def inline_blocks(self, messages: list[dict[str, Any]]) -> dict[int, str]:
        """The inline blocks of this request's user messages (index -> text), after the lean view shaped them
        (``inline_picks.blocks_for``); none unless inline pre-selection is on and deferral active."""
        self.inlined = ()
        decision = self.last.decision if self.last is not None else None
        if not self.inline or decision is None or not decision.active or self.catalog is None:
            return {}
        catalog = self.catalog
        blocks, self.inlined = blocks_for(
            messages, catalog, self._pick_store(), lambda text: self._rank(catalog, text, self.inline_k)
        )
        return blocks

    def _pick_store(self) -> PickStore:
        folder = self._picks_folder() if self._picks_folder is not None else None
        return store_for(folder)

    def semantic_status(self) -> str:
        """One line: how preselect and search rank now (empty when no semantic leg is configured)."""
        if self._dense_source is None:
            return ""
        leg = getattr(self._dense_source, "built", None)  # never built here: a status read loads nothing
        if leg is not None:
            return leg.status_line()
        error = getattr(self._dense_source, "error", None)
        return f"BM25 alone: {error}" if error else ""

    def _refresh_catalog(self, deferred_schemas: list[Any], toolset_of: Callable[[str], str | None]) -> None:
        """Rebuild only when the scoped tools changed (names, descriptions, parameters)."""
        key = tuple(
            (schema_name(s), len(json.dumps(_function(s), sort_keys=True, default=str))) for s in deferred_schemas
        )
        if key == self._catalog_key and self.catalog is not None:
            return
        self.catalog = Catalog.from_schemas(deferred_schemas, toolset_of=lambda name: toolset_of(name) or "")
        self.service = BridgeService(
            self.catalog,
            default_limit=self.search_limit,
            semantic=semantic_leg(self.settings_ts, load_default_embedder, self._dense_source),
        )
        self._catalog_key = key

    # -- the bridges -------------------------------------------------------------------
    @staticmethod
    def bridge_schemas(search_limit: int = 5) -> list[dict[str, Any]]:
        return bridge_schemas(default_limit=search_limit)

    def scoped_names(self) -> frozenset[str]:
        return frozenset(self.catalog.names) if self.catalog is not None else frozenset()

    def resolve_call(self, args: Any, *, count_refusal: bool = True) -> tuple[str, dict[str, Any]]:
        """Underlying (name, arguments) of a bridged call; BridgeError when refused."""
        if self.service is None:
            raise BridgeError("no tools are deferred in this session; call tools directly by name")
        if not isinstance(args, Mapping):
            raise BridgeError(f"{CALL_NAME} arguments must be an object with 'name' and 'arguments'")
        if args.get("calls") is not None:
            raise BridgeError("a batch ('calls') runs through the engine's dispatcher, not as one direct call")
        try:
            return self.service.resolve_call(args.get("name"), args.get("arguments"))
        except BridgeError:
            self.refusals += count_refusal
            name = str(args.get("name") or "")
            if name in self.offered and name not in self.scoped_names():
                raise BridgeError(f"'{name}' is not deferred: it is listed directly, call it by its name") from None
            raise

    def record_bridged_call(self) -> None:
        """Count a bridged call resolved to its tool, here or by the host's middleware."""
        self.calls += 1

    def handle(self, name: str, args: Any, dispatch: Dispatcher | None) -> str:
        """Answer a bridge call (search, describe, or a call via ``dispatch``)."""
        if name == CALL_NAME and isinstance(args, Mapping) and args.get("calls") is not None:
            return json.dumps(call_batch(self, args, dispatch), ensure_ascii=False)
        if name == CALL_NAME:
            try:
                tool, arguments = self.resolve_call(args)
            except BridgeError as exc:
                return json.dumps({"error": str(exc)})
            if dispatch is None:
                return json.dumps({"error": "this host cannot dispatch bridged calls; call the tool directly"})
            self.record_bridged_call()
            return dispatch(tool, arguments)
        if self.service is None:
            return json.dumps({"error": "no tools are deferred in this session; all tools are listed directly"})
        self.searches += 1
        return json.dumps(self.service.handle(name, args), ensure_ascii=False)

    def status(self) -> ToolSearchStatus:
        decision = self.last.decision if self.last else None
        reason = "no request yet"
        if self.last is not None:
            reason = self.last.note or (decision.reason if decision else "")
        return ToolSearchStatus(
            mode=self.mode,
            active=bool(decision and decision.active),
            reason=reason,
            deferred=len(decision.deferrable_names) if decision and decision.active else 0,
            deferred_tokens=decision.deferrable_tokens if decision else 0,
            preselected=list(self.last.preselected) if self.last else [],
            searches=self.searches,
            calls=self.calls,
            refusals=self.refusals,
            listing_level=self.listing[1],
            listing_tokens=count_in_pieces(self._count_tokens, self.listing[0]),
            semantic=self.semantic_status(),
            inline=self.inline,
            inlined=list(self.inlined),
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> "ToolSearchSession":
        clone = ToolSearchSession.__new__(ToolSearchSession)
        clone.__dict__.update(self.__dict__)  # catalogs are immutable; share them
        if self._keep_memo is not None:  # a copy made after requests: another agent of this conversation
            clone._parent_keep = self._keep_memo[1]
        return clone


def bridge_form_history(messages: list[dict[str, Any]], deferred: Collection[str]) -> list[dict[str, Any]]:
    """Show calls to deferred tools as ``stowage_tool_call`` calls (same id, same result).

    Stowage lets Hermes run a bridged call as a direct call to the underlying
    tool (so every hook, approval and guardrail applies); this keeps the
    request consistent with its tool list.  Deterministic, so the prefix
    stays byte-stable from turn to turn.
    """
    if not deferred:
        return messages
    out = []
    for message in messages:
        calls = tool_calls_of(message)
        if role_of(message) != "assistant" or not any(call_name(c) in deferred for c in calls):
            out.append(message)
            continue
        out.append({**message, "tool_calls": [_as_bridge_call(c) if call_name(c) in deferred else c for c in calls]})
    return out


def _as_bridge_call(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    raw = fn.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
    except ValueError:
        arguments = raw
    wrapped = json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False)
    return {**call, "id": call_id(call), "function": {**fn, "name": CALL_NAME, "arguments": wrapped}}


def _function(schema: Any) -> Any:
    return schema.get("function", schema) if isinstance(schema, Mapping) else schema


def _is_wrapped(tools: Sequence[Any]) -> bool:
    return bool(tools) and isinstance(tools[0], Mapping) and "function" in tools[0]


def _latest_user_text(messages: list[dict[str, Any]]) -> str:
    index = last_index(messages, lambda m: role_of(m) == "user")
    return message_text(messages[index]) if index >= 0 else ""
