"""Replay one transcript through a context engine the way Hermes 0.19.0 drives it.

No model is called.  The recorded transcript says what the model answered and
what each tool returned; the driver plays the host around it:

* per user turn (``agent/turn_context.py``): the preflight gate (more messages
  than ``protect_first_n + protect_last_n + 1``, or the messages' rough
  estimate over the threshold), then the rough request estimate ->
  ``should_defer_preflight_to_real_usage`` -> ``last_prompt_tokens`` raised to
  the estimate (never over the ``-1`` sentinel) -> the failure-cooldown getter
  -> ``should_compress``, and up to 3 compaction passes while each makes
  progress (fewer messages, or 5% fewer rough tokens) and ``should_compress``
  still says yes;
* per API call (``agent/conversation_loop.py``): the pre-API check
  (``len(history) > 1``, fewer than 3 compaction attempts this turn, not
  deferred, no cooldown, ``should_compress(request_pressure)``; after a
  compaction the check runs again), the request (system prompt + history +
  tool schemas, normalized as the host normalizes ``api_messages``: content
  stripped, tool-call arguments re-dumped compact with sorted keys), every
  ``llm_request`` middleware in order (called with ``request=`` a copy, whose
  message list is new but whose message dicts are shared: a middleware must
  not mutate them in place, which Hermes's deep copy would tolerate, and with
  the host's context keywords; a ``{"request": {...}}`` return replaces the
  request, anything else keeps it; an exception is counted and skipped), the
  request billed **as sent**, then ``update_from_response`` with the sent
  request's token count (and its cached part as ``cache_read_tokens``);
* after an assistant message with tool calls: each result passes through the
  ``transform_tool_result`` hooks (the first ``str`` return replaces it), then
  the post-tool check ``should_compress(real)`` where ``real`` is
  ``last_prompt_tokens`` when positive, ``0`` for the ``-1`` sentinel, and
  the rough estimate of history + tools otherwise; for a target whose
  ``host_version`` is 0.20+, when that check says no,
  ``prune_tool_results_only(history, current_tokens=real)`` (committed only
  for a new list with a positive count), and on 0.22+ no post-tool
  compaction while the engine awaits real usage after a compaction
  (``agent/turn_preflight.py``); 0.20+ also pass
  ``record_completed_compaction(feasibility_skip=False)``;
* a compaction (``agent/conversation_compression.py``): the
  ``_automatic_compression_blocked`` guard, ``compress(history, **supported
  kwargs)`` timed in CPU seconds, the abort flag, no boundary when the result
  equals the input, an empty result refused, the "ensure a real user turn"
  rule, ``on_session_start(boundary_reason="compression")`` (in place, same
  id), then the host's writes: ``last_prompt_tokens = -1``,
  ``last_completion_tokens = 0``, ``awaiting_real_usage_after_compression =
  True`` and, when the engine reports progress, ``record_completed_compaction(
  used_fallback=...)`` or ``_verify_compaction_cleared_threshold = True``;
* at the end of each user turn, the ``on_session_end`` plugin hooks (Hermes
  fires that hook at the end of every ``run_conversation``);
* before each request goes out (after the middleware), the ``pre_api_request``
  plugin hooks with ``conversation_history`` (the live history) and
  ``approx_input_tokens`` (the pre-API check's estimate).

With a :class:`~.clock.Timing` the replay also keeps simulated time
(:mod:`.clock`): each request takes the main model's latency, each summary
call the summary model's (on the turn's thread it blocks the turn; on a
background thread it runs beside it), and each compaction's **wait** is the
simulated time ``compress()`` took, as the host would see it.

The transcript's later messages are appended to whatever history the engine
kept, so the replay continues from the compacted context.  A request that
does not extend the previous one byte for byte is a cache break: counted
apart right after a compaction (expected) and otherwise (e.g. a request view
rewriting older messages), with the tokens it re-writes.  The system prompt
is the transcript's own (Hermes would send its larger one).  Summary calls are
answered by a :class:`StandInSummarizer` the engine adapters route to; every
summary prompt is counted and billed.  This module imports nothing from
Hermes: engines, middlewares and hooks are duck-typed callables.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Mapping, Sequence

from ....context_engine.records.part_status import PreparedUse
from .billing import PRICE_MODELS, PriceModel, RequestBiller, SessionBill, TokenMeter, message_key
from .cache_markers import BREAKPOINTS_MODEL, WRITE, BreakpointCache, mark_like_hermes, strip_markers
from .clock import SimClock, Timing
from .compaction import after_boundary, compress_kwargs, ensure_user_turn, supported_kwargs, version_tuple
from .hooks import apply_llm_request_middleware, transform_tool_result
from .rough import RoughEstimator
from .target import Observer, ReplayTarget, SessionResult
from .wire import call_arguments, text_of, tool_calls_of, wire_message

PREFLIGHT_PASSES = 3
PRE_API_ATTEMPTS = 3


class HostDriver:
    """Replays transcripts through one :class:`ReplayTarget` per session."""

    def __init__(
        self,
        meter: TokenMeter,
        *,
        window: int = 128_000,
        price_models: Sequence[PriceModel] = PRICE_MODELS,
        observer: Observer | None = None,
        timing: Timing | None = None,
        cache_markers: bool = False,
    ) -> None:
        self.meter = meter
        self.cache_markers = cache_markers  # lay Claude's cache markers as Hermes does and bill them too
        self.timing = timing
        self.window = window
        self.price_models = tuple(price_models)
        self.observer = observer or Observer()

    # -- one session -----------------------------------------------------------
    def replay(self, messages: Sequence[Mapping[str, Any]], target: ReplayTarget) -> SessionResult:
        """Play one session through ``target``; the target is closed afterwards, whatever happens."""
        run = _Run(self, target)
        try:
            return run.play(messages)
        finally:
            run.rough.clear()
            if target.close is not None:
                target.close()


class _Run:
    """The state of one replayed session (one agent, one engine)."""

    def __init__(self, driver: HostDriver, target: ReplayTarget) -> None:
        self.driver = driver
        self.target = target
        self.engine = target.engine
        self.meter = driver.meter
        self.emit = driver.observer.event
        self.rough = RoughEstimator()
        self.biller = RequestBiller(driver.meter)
        self.result = SessionResult(target.session_id, target.label, driver.window, SessionBill(driver.price_models))
        self.breakpoints = BreakpointCache(driver.meter) if driver.cache_markers else None
        if self.breakpoints is not None:
            self.result.bill.cost[BREAKPOINTS_MODEL] = 0.0
        self.history: list[dict[str, Any]] = []
        self.system_prompt = ""
        self.compression_attempts = 0
        self.api_calls = 0
        self.turn_open = False
        self.turn = 0
        self.calls_by_id: dict[str, tuple[str, Any]] = {}
        self.pending_ids: set[str] = set()
        self._wire_memo: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._system_wire: dict[str, Any] | None = None
        self._previous_request_tokens = 0
        self._compacted_since_request = False
        self._compress_kwargs = supported_kwargs(getattr(self.engine, "compress", None))
        self._host = version_tuple(target.host_version)
        self._summaries_billed = 0  # summary prompts billed so far (some are written ahead, between compactions)
        self.timing = driver.timing
        self.clock = SimClock() if self.timing is not None else None
        if self.clock is not None and self.timing is not None:
            if target.summarizer is not None:
                target.summarizer.clock, target.summarizer.latency = self.clock, self.timing.summary
            use_clock = getattr(self.engine, "use_clock", None)
            if callable(use_clock):
                use_clock(self.clock)  # the engine's own timing (summaries prepared ahead) reads simulated time

    # -- the transcript ----------------------------------------------------------
    def play(self, messages: Sequence[Mapping[str, Any]]) -> SessionResult:
        for index, original in enumerate(messages):
            role = original.get("role")
            if role == "system":
                if index == 0:
                    self.system_prompt = text_of(original)
                continue
            message: dict[str, Any] = copy.deepcopy(dict(original))
            if role == "user":
                if self.turn_open:
                    self.end_turn()
                self.start_turn()
                self.history.append(message)
                self.preflight()
            elif role == "assistant":
                if not self.turn_open:
                    self.start_turn()
                self.api_call(message)
                self.history.append(message)
                self.calls_by_id = {call.id: (call.name, call.arguments) for call in tool_calls_of(message)}
                self.pending_ids = set(self.calls_by_id)
            elif role == "tool":
                self.history.append(self.tool_result(message))
                call_id = str(message.get("tool_call_id") or "")
                if call_id in self.pending_ids:  # a stray result (no pending call) triggers nothing
                    self.pending_ids.discard(call_id)
                    if not self.pending_ids:
                        self.post_tool_check()  # after the whole batch, as the host does
        if self.turn_open:
            self.end_turn()
        self.finish()
        return self.result

    def start_turn(self) -> None:
        self.turn_open = True
        self.turn += 1
        self.compression_attempts = 0
        self.result.user_turns += 1
        self.emit("turn_start", turn=self.turn)

    def end_turn(self) -> None:
        self.turn_open = False
        for hook in self.target.history_hooks:  # the host fires post_llm_call before on_session_end
            hook(
                session_id=self.target.session_id,
                conversation_history=list(self.history),
                model=self.target.model,
                platform="cli",
            )
        for hook in self.target.turn_end_hooks:
            hook(
                session_id=self.target.session_id,
                completed=True,
                interrupted=False,
                model=self.target.model,
                platform="cli",
            )
        self.emit("turn_end", turn=self.turn)

    def finish(self) -> None:
        ahead = _ahead(self.engine)
        if ahead is not None:
            ahead.settle()  # a summary still being written ahead is billed too: it was a call
            counts = ahead.status()
            self.result.summaries_prepared = counts.prepared
            self.result.summaries_prepared_used = counts.used
            self.result.summaries_prepared_wasted = self.result.summaries_prepared - self.result.summaries_prepared_used
            self.result.summaries_prepared_wasted_tokens = counts.wasted_tokens
            for reason, times in counts.discard_reasons.items():
                self.result.summaries_wasted_reasons += [str(reason)] * int(times)
            self.result.summaries_wasted_reasons += ["failed"] * counts.failed
        self._collect_summaries()
        self.result.engine_compression_count = int(getattr(self.engine, "compression_count", 0) or 0)
        self.result.final_history_messages = len(self.history)
        self._wire_memo.clear()
        self.biller.forget()

    # -- estimates -------------------------------------------------------------------
    def wire(self, message: dict[str, Any]) -> dict[str, Any]:
        """The wire copy of a history message, made once (the same object in every request)."""
        entry = self._wire_memo.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        wired = wire_message(message)
        self._wire_memo[id(message)] = (message, wired)
        return wired

    def system_message(self) -> list[dict[str, Any]]:
        if not self.system_prompt:
            return []
        if self._system_wire is None or self._system_wire["content"] != self.system_prompt:
            self._system_wire = {"role": "system", "content": self.system_prompt}
        return [self._system_wire]

    def rough_request(self, messages: Sequence[Any], *, with_system: bool = True) -> int:
        return self.rough.request(
            messages, system_prompt=self.system_prompt if with_system else "", tools=self.target.tools or None
        )

    # -- gates ---------------------------------------------------------------------
    def _defer(self, tokens: int) -> bool:
        method = getattr(self.engine, "should_defer_preflight_to_real_usage", None)
        return bool(method(tokens)) if callable(method) else False

    def _cooldown(self) -> Any:
        getter = getattr(self.engine, "get_active_compression_failure_cooldown", None)
        return getter() if callable(getter) else None

    def _should_compress(self, where: str, tokens: int) -> bool:
        answer = bool(self.engine.should_compress(tokens))
        self.emit(
            "should_compress",
            where=where,
            tokens=tokens,
            answer=answer,
            last_prompt_tokens=getattr(self.engine, "last_prompt_tokens", None),
        )
        return answer

    def preflight(self) -> None:
        engine = self.engine
        if not self.target.compression_enabled:
            return
        first, last = int(getattr(engine, "protect_first_n", 3)), int(getattr(engine, "protect_last_n", 6))
        threshold = int(getattr(engine, "threshold_tokens", 0) or 0)
        if not (len(self.history) > first + last + 1 or self.rough.messages(self.history) >= threshold):
            self.emit("preflight_skipped", messages=len(self.history))
            return
        tokens = self.rough_request(self.history)
        deferred = self._defer(tokens)
        self.emit("preflight", tokens=tokens, deferred=deferred)
        if not deferred:
            previous = getattr(engine, "last_prompt_tokens", 0)
            if previous >= 0 and tokens > previous:
                engine.last_prompt_tokens = tokens
        cooldown = self._cooldown()
        if deferred or cooldown or not self._should_compress("preflight", tokens):
            return
        for _ in range(PREFLIGHT_PASSES):
            before_len, before_tokens = len(self.history), tokens
            self.compress_context(tokens)
            tokens = self.rough_request(self.history)
            if not (len(self.history) < before_len or (before_tokens > 0 and tokens < before_tokens * 0.95)):
                break
            if not self._should_compress("preflight", tokens):
                break

    def api_call(self, reply: Mapping[str, Any]) -> None:
        engine = self.engine
        target = self.target
        while True:
            api_messages = self.system_message() + [self.wire(m) for m in self.history]
            pressure = self.rough.messages(api_messages) + self.rough.tools(target.tools or None)
            if (
                target.compression_enabled
                and len(self.history) > 1
                and self.compression_attempts < PRE_API_ATTEMPTS
                and not self._defer(pressure)
                and not self._cooldown()
                and self._should_compress("pre_api", pressure)
            ):
                self.compression_attempts += 1
                self.compress_context(pressure)
                continue
            break
        self.api_calls += 1
        if self.breakpoints is not None:
            api_messages = mark_like_hermes(api_messages)
        request: dict[str, Any] = {"model": target.model, "messages": api_messages}
        if target.tools:
            request["tools"] = target.tools
        sent = self.apply_middlewares(request)
        for hook in self.target.request_hooks:  # pre_api_request: after the middleware, before the call
            hook(
                session_id=self.target.session_id,
                conversation_history=list(self.history),
                approx_input_tokens=pressure,
                api_call_count=self.api_calls,
                model=self.target.model,
                platform="cli",
            )
        if self.breakpoints is not None:
            self.result.bill.cost[BREAKPOINTS_MODEL] += self.breakpoints.bill(sent).cost
            bill = self.biller.bill(strip_markers(sent))
        else:
            bill = self.biller.bill(sent)
        self.result.bill.add_request(bill)
        if self._previous_request_tokens and bill.cached < self._previous_request_tokens:
            if self._compacted_since_request:
                self.result.cache_breaks_after_compaction += 1
            else:
                self.result.cache_breaks_other += 1
                self.result.rewritten_tokens_other += self._previous_request_tokens - bill.cached
        self._previous_request_tokens, self._compacted_since_request = bill.tokens, False
        if bill.tokens > self.driver.window:
            self.result.over_window_requests += 1
        self.emit("request", request=sent, tokens=bill.tokens, cached=bill.cached, api_call=self.api_calls)
        completion = self.meter.message_tokens(message_key(wire_message(reply)))
        self.pass_time()
        engine.update_from_response(
            {
                "prompt_tokens": bill.tokens,
                "completion_tokens": completion,
                "total_tokens": bill.tokens + completion,
                "input_tokens": bill.tokens,
                "output_tokens": completion,
                "cache_read_tokens": bill.cached,
                "cache_write_tokens": bill.tokens - bill.cached,
                "reasoning_tokens": 0,
            }
        )
        self.emit("usage", prompt_tokens=bill.tokens)

    def pass_time(self) -> None:
        """The main model's call: a background summary finishes first (its clock is exact in a timed replay).

        Untimed, the summary model answers at once: settled here, a summary
        started before a request is ready at the next check whatever the
        threads' scheduling, so a replay gives the same figures every run.
        """
        ahead = _ahead(self.engine)
        settle = getattr(ahead, "settle", None)
        if callable(settle):
            settle()
        if self.clock is not None and self.timing is not None:
            self.clock.advance(self.timing.main_s)

    def apply_middlewares(self, request: dict[str, Any]) -> dict[str, Any]:
        if not self.target.middlewares:
            return request
        sent, changed, errors = apply_llm_request_middleware(
            self.target.middlewares,
            request,
            task_id="replay",
            turn_id=f"turn-{self.turn}",
            api_request_id=f"req-{self.api_calls}",
            session_id=self.target.session_id,
            platform="cli",
            model=self.target.model,
            provider="custom",
            base_url="",
            api_mode="chat_completions",
            api_call_count=self.api_calls,
        )
        self.result.middleware_errors += errors
        self.result.middleware_changed += int(changed)
        return sent

    def tool_result(self, message: dict[str, Any]) -> dict[str, Any]:
        call_id = str(message.get("tool_call_id") or "")
        name, raw_args = self.calls_by_id.get(call_id, ("", None))
        replaced = transform_tool_result(
            self.target.tool_result_hooks,
            tool_name=name,
            args=call_arguments(raw_args),
            result=message.get("content"),
            task_id="replay",
            session_id=self.target.session_id,
            tool_call_id=call_id,
            turn_id=f"turn-{self.turn}",
            api_request_id=f"req-{self.api_calls}",
        )
        if replaced is None:
            return message
        self.result.hook_replaced_results += 1
        self.emit("tool_result_replaced", tool_call_id=call_id, content=replaced)
        return {**message, "content": replaced}

    def post_tool_check(self) -> None:
        engine = self.engine
        last = getattr(engine, "last_prompt_tokens", 0)
        if last > 0:
            real = last
        elif last == -1:
            real = 0
        else:
            real = self.rough_request(self.history, with_system=False)
        waiting = self._host >= (0, 22) and bool(getattr(engine, "awaiting_real_usage_after_compression", False))
        if self.target.compression_enabled and not waiting and self._should_compress("post_tool", real):
            self.compress_context(getattr(engine, "last_prompt_tokens", 0))
        elif self.target.compression_enabled and self._host >= (0, 20):
            self.prune_tool_results(real)

    def prune_tool_results(self, real: int) -> None:
        """0.20+: ``prune_tool_results_only``, committed only for a new list and a positive count."""
        prune = getattr(self.engine, "prune_tool_results_only", None)
        if not callable(prune):
            return
        try:
            pruned, count = prune(self.history, current_tokens=real)
        except Exception:  # noqa: BLE001 - the host logs at debug level and goes on
            return
        if count and pruned is not self.history:
            self.history = list(pruned)
            self.result.tool_result_prunes += 1
            self.emit("prune", count=count)

    # -- compaction ----------------------------------------------------------------
    def compress_context(self, approx_tokens: int | None) -> None:
        engine = self.engine
        blocked = getattr(type(engine), "_automatic_compression_blocked", None)
        if callable(blocked) and blocked(engine):
            self.emit("compress_blocked")
            return
        kwargs = compress_kwargs(self._compress_kwargs, approx_tokens)
        before = copy.deepcopy(self.history)
        self.result.compress_calls += 1
        started = time.process_time()
        sim_started = self.clock() if self.clock is not None else 0.0
        compressed = engine.compress(self.history, **kwargs)
        self.result.compaction_cpu_s += time.process_time() - started
        waited = self.clock() - sim_started if self.clock is not None else None
        self._collect_summaries()
        progress = bool(getattr(engine, "_last_compression_made_progress", False))
        fallback = bool(getattr(engine, "_last_summary_fallback_used", False))
        if getattr(engine, "_last_compress_aborted", False):
            self.result.aborted_compressions += 1
            self.emit("compress", outcome="aborted", approx_tokens=approx_tokens)
            return
        if compressed == before:
            if self.history != before:
                self.history[:] = before
            self.result.noop_compressions += 1
            self.emit("compress", outcome="noop", approx_tokens=approx_tokens)
            return
        if not compressed:
            self.emit("compress", outcome="empty", approx_tokens=approx_tokens)
            return
        compressed = list(compressed)
        how = ensure_user_turn(before, compressed, self.target.is_summary_text)
        if how:
            self.emit("user_turn_ensured", how=how)
        self.history = compressed
        after_boundary(
            engine,
            self.target.session_id,
            self.rough_request(compressed),
            progress=progress,
            fallback=fallback,
            feasibility_keyword=self._host >= (0, 20),
        )
        self.result.compactions += 1
        if waited is not None:
            self.result.compaction_waits.append(round(waited, 3))
            use = getattr(_ahead(engine), "last_use", None)
            use = use if isinstance(use, PreparedUse) else PreparedUse()
            self.result.compaction_prepared.append(use.prepared)
            self.result.compaction_served.append(
                {
                    "wait_s": round(waited, 3),
                    "outcome": use.outcome or "no summary call",
                    "why": use.why,
                    "session": self.target.session_id,
                    "nth": self.result.compactions,
                    "turn": self.turn,
                    "request": self.api_calls,
                    "approx_tokens": approx_tokens,
                }
            )
        self._compacted_since_request = True
        self.emit(
            "compress",
            outcome="boundary",
            approx_tokens=approx_tokens,
            messages_after=len(compressed),
            progress=progress,
            fallback=fallback,
        )

    def _collect_summaries(self) -> None:
        """Bill every summary prompt not billed yet (those written ahead, used or wasted, included)."""
        summarizer = self.target.summarizer
        if summarizer is None:
            return
        fresh = summarizer.prompt_tokens[self._summaries_billed :]
        self._summaries_billed += len(fresh)
        for tokens in fresh:
            self.result.bill.add_summary(tokens)
            if self.breakpoints is not None:
                self.result.bill.cost[BREAKPOINTS_MODEL] += WRITE * tokens
            self.result.summary_prompt_tokens.append(tokens)
            self.emit("summary", prompt_tokens=tokens)


def _ahead(engine: Any) -> Any:
    """The engine's summaries prepared ahead (Stowage's session holds them), or None for an engine without."""
    return getattr(getattr(engine, "state", None), "ahead", None)
