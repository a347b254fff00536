"""The newer engine hooks as Hermes 0.20+ calls them, from the documented contracts (stand-ins of the call sites).

0.19.0, the real host of the other tests, calls none of them.  The
stand-ins are written from shared/reference/hermes-upstream.md §1 and kept in
this one module so a future real host can replace them.  ``select_context``:

* called for every provider request, only when the engine's class overrides
  ``select_context``, with copies of the request's messages;
* ``None`` leaves the request unchanged; a non-empty list of message dicts
  replaces this request's messages (the session history is untouched);
  anything else, or an exception, sends the request unchanged.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
from typing import Any

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore

from .helpers import RecordingModel

VIEW = {"view": {"hot_tokens": 1000, "step_tokens": 1000}}


class _AbcStandIn:
    def select_context(self, request_messages, **_):
        return None


def host_select_context(
    engine: Any, request_messages: list[dict[str, Any]], conversation: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """What the newer host does with the hook, per request."""
    override = getattr(type(engine), "select_context", None)
    if override is None or override is _AbcStandIn.select_context:
        return request_messages
    try:
        selected = engine.select_context(
            copy.deepcopy(request_messages),
            conversation_messages=copy.deepcopy(conversation),
            incoming_message=None,
            budget_tokens=engine.threshold_tokens,
        )
    except Exception:  # noqa: BLE001 - the host logs a warning and sends the request unchanged
        return request_messages
    if isinstance(selected, list) and selected and all(isinstance(m, dict) for m in selected):
        return selected
    return request_messages


def session(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "terse"}, {"role": "user", "content": "go"}]
    for n in range(steps):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}\n" * 300})
    return messages


def engine(tmp_path, **view: Any) -> StowageEngineCore:
    eng = StowageEngineCore(load_settings({"stowage": {"view": {**VIEW["view"], **view}}}))
    eng.update_model("m", 128_000)
    eng.on_session_start("s", hermes_home=str(tmp_path))
    return eng


def test_the_hook_sends_the_lean_view_and_leaves_the_history_alone(tmp_path):
    eng = engine(tmp_path)
    history = session(12)
    before = copy.deepcopy(history)
    sent = host_select_context(eng, history, history)
    assert history == before
    assert sum(str(m.get("content")).startswith(VIEW_STUB_PREFIX) for m in sent) >= 4
    assert sent[-1] == history[-1]


def test_after_the_hook_the_middleware_does_not_apply_the_view_twice(tmp_path):
    eng = engine(tmp_path)
    history = session(12)
    selected = host_select_context(eng, history, history)
    # the middleware runs on the request the hook produced: it must pass it through unchanged
    assert eng.shape_request([], selected).messages == selected
    fresh = engine(tmp_path)
    assert json.dumps(fresh.shape_request([], history).messages) == json.dumps(selected)  # same view either way


def test_nothing_to_change_returns_none_and_bad_input_is_not_an_error(tmp_path):
    eng = engine(tmp_path)
    short = session(1)
    assert eng.select_context(short) is None
    assert eng.select_context([]) is None
    assert eng.select_context("not a list") is None  # type: ignore[arg-type]
    assert host_select_context(eng, short, short) == short


def test_with_the_view_off_the_hook_changes_nothing(tmp_path):
    eng = engine(tmp_path, enabled=False)
    history = session(12)
    assert eng.select_context(history, conversation_messages=history, extra_future_kwarg=1) is None


# --------------------------------------------------------------------------
# should_compress_info, the status message, on_turn_complete, model_thresholds,
# clone_for_agent, bypass_cooldown and compress() on a worker thread
# --------------------------------------------------------------------------


def host_compression_gate(engine: Any, prompt_tokens: int) -> tuple[bool, str | None]:
    """Where the host explains a blocked compaction: the reason goes to logs and warnings."""
    info = getattr(engine, "should_compress_info", None)
    if callable(info):
        decision, reason = info(prompt_tokens)
        return bool(decision), reason
    return bool(engine.should_compress(prompt_tokens)), None


def host_status_line(engine: Any, phase: str, **context: Any) -> str | None:
    """Before each automatic compaction: the engine's line, or the default."""
    default = "Compacting context..."
    hook = getattr(engine, "get_automatic_compaction_status_message", None)
    if not getattr(engine, "emit_automatic_compaction_status", False) or not callable(hook):
        return default
    try:
        return hook(phase=phase, default_message=default, **context)
    except Exception:  # noqa: BLE001 - the host falls back to its own line
        return default


def host_turn_complete(engine: Any, messages: list[dict[str, Any]], n: int, **extra: Any) -> None:
    engine.on_turn_complete(
        messages,
        {"prompt_tokens": 100},
        turn_id=f"t{n}",
        task_id="task",
        api_call_count=1,
        interrupted=False,
        failed=False,
        turn_exit_reason="completed",
        **extra,
    )


def host_clone(engine: Any) -> Any:
    clone = getattr(engine, "clone_for_agent", None)
    try:
        return clone() if callable(clone) else copy.deepcopy(engine)
    except Exception:  # noqa: BLE001 - the host warns and falls back to a deep copy
        return copy.deepcopy(engine)


def host_compress_on_worker(
    engine: Any, messages: list[dict[str, Any]], *, overflow: bool = False, **kwargs: Any
) -> list[dict[str, Any]]:
    """``context_timeout_seconds > 0``: a pooled worker thread, on a private deep snapshot."""
    if overflow and "bypass_cooldown" in inspect.signature(engine.compress).parameters:
        kwargs["bypass_cooldown"] = True
    snapshot = copy.deepcopy(messages)
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(engine.compress(snapshot, **kwargs)))
    worker.start()
    worker.join()
    return box[0]


def compacting_engine(tmp_path, **stowage: Any) -> StowageEngineCore:
    eng = StowageEngineCore(
        load_settings({"stowage": {"view": {"enabled": False}, **stowage}}), summary_model=RecordingModel()
    )
    eng.update_model("m", 64_000)
    eng.on_session_start("s", hermes_home=str(tmp_path))
    return eng


def long_history(turns: int = 6) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "terse"}]
    for t in range(turns):
        messages.append({"role": "user", "content": f"task {t}: look at the logs"})
        messages += session(3)[2:]
        messages.append({"role": "assistant", "content": f"done with {t}"})
    messages.append({"role": "user", "content": "next"})
    return messages


def test_should_compress_info_gives_the_reasons(tmp_path):
    eng = compacting_engine(tmp_path, compaction={"prepare_at": 0})  # the plain trigger: no summary awaited over it
    # below the threshold the host contract is (False, None): a reason there is shown as a warning every turn
    assert host_compression_gate(eng, 10) == (False, None)
    assert host_compression_gate(eng, eng.threshold_tokens + 1) == (True, None)
    host_turn_complete(eng, [], 1)  # the turn clock is the host's now
    eng.compress(long_history())
    assert host_compression_gate(eng, eng.threshold_tokens + 1) == (False, "once_per_turn")
    for _ in range(eng.settings.compaction.max_ineffective + 1):
        eng.state.governor._count_ineffective()
    host_turn_complete(eng, [], 2)
    ok, reason = host_compression_gate(eng, eng.threshold_tokens + 1)
    assert not ok and reason.startswith("backoff:")
    assert eng.should_compress(eng.threshold_tokens + 1) is False


def test_the_status_line_says_what_stowage_will_do(tmp_path):
    eng = compacting_engine(tmp_path)
    context = {
        "approx_tokens": 60_000,
        "threshold_tokens": eng.threshold_tokens,
        "context_length": 64_000,
        "model": "m",
        "attempt": 1,
        "max_attempts": 3,
        "a_future_key": True,
    }
    line = host_status_line(eng, "pre_api", **context)
    assert "summarizing older turns with m" in line and "60,000" in line
    eng.state.governor.record_summary_failure()
    assert "fallback summary" in host_status_line(eng, "compress", **context)
    host_turn_complete(eng, [], 1)
    eng.compress(long_history())
    assert "nothing to do" in host_status_line(eng, "preflight", **context)


def test_on_turn_complete_is_the_turn_clock_and_the_plugin_hook_steps_aside(tmp_path):
    eng = compacting_engine(tmp_path)
    eng.end_turn_from_plugin_hook()  # an older host: the plugin hook is the clock
    assert eng.state.governor.turn == 1
    host_turn_complete(eng, [], 1, a_future_kwarg="ignored")
    eng.end_turn_from_plugin_hook()  # same turn, reported by both: counted once
    assert eng.state.governor.turn == 2
    host_turn_complete(eng, [], 2)
    assert eng.state.governor.turn == 3


def test_model_thresholds_are_honoured_in_update_model(tmp_path):
    eng = compacting_engine(tmp_path)
    eng.model_thresholds = {"gpt-4": 0.5, "gpt-4o": 0.6, "acme:gpt-4o": 32_000, "weird": "x"}
    eng.update_model("gpt-4o-mini", 100_000, provider="openai")
    assert eng.threshold_tokens == 60_000  # the longest match wins
    eng.update_model("gpt-4o-mini", 100_000, provider="acme")
    assert eng.threshold_tokens == 32_000  # provider:substr, a token count
    eng.update_model("weird-model", 100_000)
    assert eng.threshold_tokens == int(100_000 * eng.threshold_percent)  # a bad value is ignored
    eng.update_model("other", 100_000)
    assert eng.threshold_tokens == int(100_000 * eng.threshold_percent)


def test_clone_for_agent_gives_an_independent_engine(tmp_path):
    eng = compacting_engine(tmp_path)
    clone = host_clone(eng)
    assert clone is not eng and clone.state.governor is not eng.state.governor and clone.settings is eng.settings
    clone.on_session_start("other", hermes_home=str(tmp_path))
    assert eng.session_id == "s"


def test_compress_on_a_worker_thread_with_bypass_cooldown(tmp_path):
    eng = compacting_engine(tmp_path)
    eng.state.governor.record_summary_failure()  # cooling down: an ordinary compaction would not call the model
    history = long_history()
    before = copy.deepcopy(history)
    out = host_compress_on_worker(eng, history, overflow=True, current_tokens=70_000)
    assert history == before
    assert out != history and eng.summary_model.prompts  # the model was asked despite the cooldown
    assert not eng._last_summary_fallback_used


def test_compress_is_serialised_across_threads(tmp_path):
    eng = compacting_engine(tmp_path)
    results: list[Any] = []
    workers = [
        threading.Thread(target=lambda: results.append(eng.compress(long_history(), force=True))) for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 3 and eng.compression_count == 3
    assert len(eng.state.compaction_log) == 3


def test_unknown_extra_kwargs_are_ignored(tmp_path):
    eng = compacting_engine(tmp_path)
    assert eng.compress(long_history(), force=True, some_future_flag=True) is not None
    assert eng.should_compress_info(10, future=1)[0] is False
    eng.update_model("m", 64_000, max_tokens=4096, future="x")


# --------------------------------------------------------------------------
# the turn's preflight (0.20.1 agent/turn_context.py) counts the whole history
# --------------------------------------------------------------------------


def host_turn_preflight(engine: Any, whole_history_rough: int) -> bool:
    """0.20.1 at turn start: the whole history's rough estimate, deferred or else asked of should_compress."""
    if engine.should_defer_preflight_to_real_usage(whole_history_rough):
        return False
    return bool(engine.should_compress(whole_history_rough))


def host_pre_api_gate(engine: Any, history: list[dict[str, Any]], selected_rough: int) -> bool:
    """0.20.1 per request (conversation_loop.py): select_context, then the selected request's estimate."""
    host_select_context(engine, history, history)
    if engine.should_defer_preflight_to_real_usage(selected_rough):
        return False
    return bool(engine.should_compress(selected_rough))


def test_the_turn_preflight_over_the_whole_history_follows_what_is_sent(tmp_path):
    # issue 31: a compaction fired at the preflight's 48k while the request sent was about 33k
    eng = engine(tmp_path)
    history = session(40)
    host_select_context(eng, history, history)
    saved = eng.state.view.stats.last_request.saved_tokens
    assert saved > 1000
    host_turn_complete(eng, history, 1)
    budget = eng.threshold_tokens
    # next turn: the whole history is over the trigger only by what select_context leaves out
    assert host_turn_preflight(eng, budget + saved - 1) is False
    # ... and a whole history over it by more than that is compacted at the preflight
    assert host_turn_preflight(eng, budget + saved + 1) is True
    # in the turn, the pre-API gate's figure is the selected request's: nothing subtracted again
    assert host_pre_api_gate(eng, history, budget + 1) is True
    assert host_pre_api_gate(eng, history, budget - 1) is False


def test_without_a_turn_end_every_figure_after_select_context_is_the_selected_requests(tmp_path):
    eng = engine(tmp_path)
    history = session(40)
    host_select_context(eng, history, history)
    saved = eng.state.view.stats.last_request.saved_tokens
    assert not eng.should_defer_preflight_to_real_usage(eng.threshold_tokens + saved - 1)
    eng.on_session_start("s2", hermes_home=str(tmp_path))  # a new conversation: its first figure is a preflight's
    assert eng.state.turn_selected is False
