"""The lean view: what each provider request carries instead of the whole history.

Old tool outputs outside the hot zone are sent as one-line stubs with the
handle of their original bytes (the store's stub service decides it, the
words come from ``context_engine/chat/stubs.py``, both shared with compaction),
and oversized tool-call arguments are cut with a handle to the whole text.  The session's history is never changed: only
the request.  :func:`plan_view` decides *which* messages (deterministic,
stepwise, prompt-cache friendly); this module measures the messages, asks the
store for handles, renders the stubs and keeps the figures status shows.

A stub never points to nothing: an output whose bytes the store cannot
confirm or write stays verbatim, and the reason is counted.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..chat.markers import SPILL_HEADER, BlobKind
from ..chat.messages import Message, call_arguments_text, call_name, tool_result_id, with_call_arguments
from ..chat.stubs import StubHandle, cut_arguments, view_stub
from ..records.part_status import LastRequest, ViewStatus
from .cache_anchor import AnchorMemory, anchor_points, unmarked
from .collapse import REPEAT_THE_CALL, collapse_run, collapsible_message, runs, settled_steps
from .measure import READ_BACK_TOOLS, ViewMeasure, condensable, plain_text
from .plan import ViewItem, ViewPlan, plan_view
from .render import condensed_reasoning
from .stub_digest import digest
from .view_settings import ViewSettings

logger = logging.getLogger(__name__)

DEEP_MIN_TOKENS = 1000  # a deep step must take out at least this much (each step is one prompt-cache break)
_MEMO_LIMIT = 8192


class StoreHandles(Protocol):
    """Where the view confirms (or puts) the bytes a stub points to (``StoreSession``, through its stub service)."""

    def handle_for(self, text: str, *, kind: BlobKind, tool_name: str, arguments: str) -> StubHandle | None:
        """Handle of the original bytes ``text`` stands for (a spill preview: the spilled output), stored if need be.

        For a spill preview whose original the size cap evicted: the preview's own bytes, ``original_evicted``.
        """

    def spilled_tokens(self, preview: str) -> int | None:
        """Tokens of the original output ``preview`` (a spill preview of this session) stands for; None if unknown."""


@dataclass
class ViewOutcome:
    """One request: ``full_tokens`` of the history as the host holds it, ``lean_tokens`` as sent.

    ``spill_tokens`` is what spilling took out of that history (each spilled
    output's original tokens minus its preview's), so ``unshaped_tokens`` is
    the same history with nothing shaped by Stowage: the base of "saved".
    """

    messages: list[Message]
    full_tokens: int
    lean_tokens: int
    plan: ViewPlan
    stubbed_outputs: int = 0
    cut_arguments: int = 0
    condensed: int = 0
    unstored: int = 0
    spill_tokens: int = 0
    collapsed_steps: int = 0  # settled steps sent as one line each
    collapsed_runs: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, messages sent for it)
    anchors: tuple[int, ...] = ()  # indices in ``messages`` where the next step's break may start (newest first)
    anchoring: AnchorMemory = AnchorMemory()  # what the next request needs to place its anchors

    @property
    def saved_tokens(self) -> int:
        """What the view took out (spills aside): the host's own estimate already sees the previews."""
        return self.full_tokens - self.lean_tokens

    @property
    def unshaped_tokens(self) -> int:
        return self.full_tokens + self.spill_tokens


class LeanView:
    """One session's lean view (per engine copy; nothing shared between agents)."""

    def __init__(self, settings: ViewSettings, count: Callable[[Message], int]) -> None:
        self.settings = settings
        self._count = count
        self.stats = ViewStatus(  # sums over the session's requests, and its newest request
            enabled=settings.enabled,
            hot_tokens=settings.hot_tokens,
            step_tokens=settings.step_tokens,
            pin_turns=settings.pin_turns,
            unshaped_tokens=0,
        )
        self._memo: dict[tuple[str, str, str], str] = {}
        self._measurer = ViewMeasure(settings, count)
        self._last_steps = 0
        self._anchoring = AnchorMemory()  # of the last request sent

    def apply(
        self, messages: list[Message], store_session: StoreHandles | None, deep_at: int = 0, record: bool = True
    ) -> ViewOutcome:
        """The request's messages with the view applied (the input list is not changed).

        ``deep_at``: the messages' share of the compaction trigger (with ``deep_step`` on, the plan stubs
        what it can early once the request grows past it; 0: never).  ``record``: count the request in
        the figures now (False: the caller calls :meth:`record` with the outcome it sends).
        """
        items, calls = self._measurer.items(unmarked(messages))
        full = sum(item.tokens for item in items)
        plan = plan_view(
            items,
            hot_tokens=self.settings.hot_tokens,
            step_tokens=self.settings.step_tokens,
            deep_at=deep_at if self.settings.deep_step else 0,
            deep_min=DEEP_MIN_TOKENS,
            release_reach=self.settings.release_reach,
            payback=self.settings.step_payback,
        )
        outcome = ViewOutcome(
            list(messages),
            full,
            full,
            plan,
            spill_tokens=_spill_tokens(messages, items, store_session) if store_session is not None else 0,
        )
        if store_session is not None:
            for index in plan.stubbed:
                self._stub(outcome, index, calls, store_session, _stale_note(items[index], plan.stubbed_at.get(index)))
        elif plan.stubbed:
            outcome.unstored = len(plan.stubbed)
        if self.settings.collapse_steps and plan.step_ends and store_session is not None:
            self._collapse(outcome, messages, items, store_session)
        outcome.anchors, outcome.anchoring = anchor_points(
            plan, messages, items, outcome.collapsed_runs, self._anchoring
        )
        if record:
            self._record(outcome)
        return outcome

    def forget(self, handles: frozenset[str]) -> None:
        """Drop the remembered stubs naming ``handles`` (the size cap evicted them): the next render asks again.

        Every other stub keeps its text, so the prompt cache keeps its prefix up to the first one changed.
        """
        needles = tuple(f'"{h}"' for h in handles)
        for key in [k for k, v in self._memo.items() if any(n in v or v == n[1:-1] for n in needles)]:
            del self._memo[key]

    def record(self, outcome: ViewOutcome) -> None:
        """Count one sent request in the figures (after :meth:`apply` with ``record=False``)."""
        self._record(outcome)

    def measure(self, messages: list[Message], store_session: StoreHandles | None) -> ViewOutcome:
        """With the view off nothing is stubbed; the figures still count what spilling saved."""
        items, _ = self._measurer.items(unmarked(messages))
        full = sum(item.tokens for item in items)
        outcome = ViewOutcome(
            list(messages),
            full,
            full,
            ViewPlan(),
            spill_tokens=_spill_tokens(messages, items, store_session) if store_session is not None else 0,
        )
        self._record(outcome)
        return outcome

    # -- rendering -------------------------------------------------------------
    def _stub(
        self, outcome: ViewOutcome, index: int, calls: dict[str, Any], store_session: StoreHandles, note: str = ""
    ) -> None:
        message = outcome.messages[index]
        if message.get("role") == "tool":
            self._stub_output(outcome, index, message, calls, store_session, note)
        else:
            self._condense_call_message(outcome, index, message, store_session)

    def _stub_output(
        self,
        outcome: ViewOutcome,
        index: int,
        message: Message,
        calls: dict[str, Any],
        store_session: StoreHandles,
        note: str = "",
    ) -> None:
        text = plain_text(message.get("content")) or ""
        call = calls.get(tool_result_id(message))
        name = call_name(call) if call is not None else (message.get("name") or "")
        name = name if isinstance(name, str) else ""
        arguments = call_arguments_text(call) if call is not None else ""
        key = ("output", f"{name}\x00{arguments}\x00{note}", text)
        stub = self._memo.get(key)
        if stub is None:
            found = None
            if name not in READ_BACK_TOOLS:
                found = self._keep(store_session, text, kind=BlobKind.OUTPUT, tool_name=name, arguments=arguments)
                if found is None:
                    outcome.unstored += 1
                    return
            kept = None
            if found is not None:
                kept = digest(name, arguments, text, self.settings.stub_lines_chars, self.settings.stub_names)
            lines = kept.render() if kept is not None else ""
            stub = view_stub(
                name,
                text,
                found.handle if found is not None else None,
                f"{note}\n{lines}" if note and lines else note or lines,
                original_evicted=found is not None and found.original_evicted,
            )
            if len(stub) >= len(text):
                return
            self._remember(key, stub)
        replaced = dict(message)
        replaced["content"] = _same_shape(message.get("content"), stub)
        outcome.messages[index] = replaced
        outcome.stubbed_outputs += 1
        outcome.lean_tokens -= self._count(message) - self._count(replaced)

    def _condense_call_message(
        self, outcome: ViewOutcome, index: int, message: Message, store_session: StoreHandles
    ) -> None:
        """An older assistant message: its text condensed (reasoning, or an answer moved past), long arguments cut."""
        replaced = dict(message)
        content = message.get("content")
        if isinstance(content, str) and condensable(content, self.settings):
            key = ("reasoning", "", content)
            condensed = self._memo.get(key)
            if condensed is None:
                found = self._keep(store_session, content, kind=BlobKind.REASONING, tool_name="assistant", arguments="")
                if found is not None:
                    condensed = condensed_reasoning(content, found.handle)
                    self._remember(key, condensed)
                else:
                    outcome.unstored += 1
            if condensed is not None:
                replaced["content"] = condensed
                outcome.condensed += 1
        limit = self.settings.max_args_chars
        new_calls = []
        for call in message.get("tool_calls") or []:
            arguments = call_arguments_text(call) if isinstance(call, dict) else ""
            if len(arguments) > limit:
                key = ("arguments", call_name(call), arguments)
                cut = self._memo.get(key)
                if cut is None:
                    found = self._keep(
                        store_session, arguments, kind=BlobKind.ARGUMENTS, tool_name=call_name(call), arguments=""
                    )
                    if found is None:
                        outcome.unstored += 1
                        new_calls.append(call)
                        continue
                    cut = cut_arguments(arguments, limit, found.handle)
                    self._remember(key, cut)
                call = with_call_arguments(call, cut)
                outcome.cut_arguments += 1
            new_calls.append(call)
        if new_calls != (message.get("tool_calls") or []):
            replaced["tool_calls"] = new_calls
        if replaced != message:
            outcome.messages[index] = replaced
            outcome.lean_tokens -= self._count(message) - self._count(replaced)

    def _collapse(
        self, outcome: ViewOutcome, history: list[Message], items: list[ViewItem], store: StoreHandles
    ) -> None:
        """Runs of settled steps sent as one line each (``collapse.py``); the counts follow the messages.

        A message may join a line when the plan stubbed it or it was never worth stubbing: an output a pin
        keeps verbatim is neither, so its step stays whole.
        """
        stubbed = set(outcome.plan.stubbed)

        def collapsible(index: int) -> bool:
            return (index in stubbed or items[index].cold_tokens <= 0) and collapsible_message(history[index])

        def stored(text: str, kind: BlobKind, tool: str, arguments: str) -> str | None:
            if kind is BlobKind.OUTPUT and tool in READ_BACK_TOOLS:
                return REPEAT_THE_CALL  # as its stub says: the call reproduces it, nothing to store twice
            key = ("handle", f"{kind}\x00{tool}\x00{arguments}", text)
            handle = self._memo.get(key)
            if handle is None:
                found = self._keep(store, text, kind=kind, tool_name=tool, arguments=arguments)
                if found is not None:
                    handle = found.handle
                    self._remember(key, handle)
            return handle

        shaped = outcome.messages
        steps = settled_steps(history, outcome.plan.step_ends[-1], collapsible)
        for run in reversed(runs(steps, outcome.plan.step_ends)):
            start, end = run[0].start, run[-1].end
            sent = collapse_run(shaped, history, run, stored, self.settings.min_chars)
            outcome.lean_tokens -= sum(self._count(m) for m in shaped[start:end]) - sum(map(self._count, sent))
            shaped[start:end] = sent
            outcome.collapsed_steps += len(run) - 1
            outcome.collapsed_runs.append((start, end, len(sent)))

    def _keep(
        self, store_session: StoreHandles, text: str, *, kind: BlobKind, tool_name: str, arguments: str
    ) -> StubHandle | None:
        try:
            return store_session.handle_for(text, kind=kind, tool_name=tool_name, arguments=arguments)
        except Exception as exc:  # noqa: BLE001 - a store failure keeps the output verbatim
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            logger.warning("stowage: the view could not store an output; it stays verbatim (%s)", exc)
            return None

    def _remember(self, key: tuple[str, str, str], value: str) -> None:
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()  # texts from before a compaction; the next request refills what it needs
        self._memo[key] = value

    # -- figures -----------------------------------------------------------------
    def _record(self, outcome: ViewOutcome) -> None:
        stats = self.stats
        stats.requests += 1
        view_saved = max(0, outcome.saved_tokens)
        stats.view_tokens_saved += view_saved
        stats.spill_tokens_saved += outcome.spill_tokens
        stats.tokens_saved += view_saved + outcome.spill_tokens
        stats.sent_tokens += outcome.lean_tokens
        stats.unshaped_tokens = (stats.unshaped_tokens or 0) + outcome.lean_tokens + view_saved + outcome.spill_tokens
        stats.unstored_outputs = outcome.unstored
        if outcome.plan.steps > self._last_steps and stats.requests > 1:
            stats.steps += outcome.plan.steps - self._last_steps  # the first request caches nothing yet
        self._last_steps = outcome.plan.steps  # fewer after a compaction rewrote the history
        self._anchoring = outcome.anchoring
        stats.last_request = LastRequest(
            full_tokens=outcome.full_tokens,
            sent_tokens=outcome.lean_tokens,
            saved_tokens=outcome.saved_tokens,
            unshaped_tokens=outcome.unshaped_tokens,
            spill_tokens=outcome.spill_tokens,
            stubbed_outputs=outcome.stubbed_outputs,
            cut_arguments=outcome.cut_arguments,
            condensed_reasoning=outcome.condensed,
            collapsed_steps=outcome.collapsed_steps,
            pinned=len(outcome.plan.pinned),
            deep_steps=outcome.plan.deep_steps,
            hot_start=outcome.plan.hot_start,
            unstored=outcome.unstored,
        )

    def status(self) -> ViewStatus:
        """A copy of the figures (the newest request's record is frozen)."""
        return dataclasses.replace(self.stats)


def _stale_note(item: ViewItem, stubbed_at: int | None) -> str:
    """``superseded by ...`` when a later call had superseded the output by the step that stubbed it.

    Decided at that step, a pure function of the history up to it: the stub keeps its bytes in every later request.
    """
    if item.superseded_at < 0 or stubbed_at is None or item.superseded_at > stubbed_at:
        return ""
    return f"superseded by {item.superseded_by}"


def _spill_tokens(messages: list[Message], items: list[ViewItem], store_session: StoreHandles) -> int:
    """What spilling took out of this history: each known preview's original tokens minus its own."""
    known = getattr(store_session, "spilled_tokens", None)
    if known is None:
        return 0
    total = 0
    for message, item in zip(messages, items, strict=True):
        if message.__class__ is not dict or message.get("role") != "tool":
            continue
        text = plain_text(message.get("content"))
        if text is not None and text.startswith(SPILL_HEADER):
            original = known(text)
            if original:
                total += max(0, original - item.tokens)
    return total


def _same_shape(content: Any, stub: str) -> Any:
    """The stub in the content's shape; a part list keeps its first part's other keys (cache_control)."""
    if content.__class__ is str:
        return stub
    first = {k: v for k, v in content[0].items() if k != "text"}
    return [{**first, "type": first.get("type") or "text", "text": stub}]
