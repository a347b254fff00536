"""``select_context`` as Hermes 0.20+ calls it, from the documented contract (a stand-in of the call site).

0.19.0, the real host of the other tests, never calls it.  The stand-in is
written from shared/reference/hermes-upstream.md §1 and kept in this one
module so a future real host can replace it:

* called for every provider request, only when the engine's class overrides
  ``select_context``, with copies of the request's messages;
* ``None`` leaves the request unchanged; a non-empty list of message dicts
  replaces this request's messages (the session history is untouched);
  anything else, or an exception, sends the request unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from stowage.context_engine.config import load_settings
from stowage.context_engine.engine import StowageEngineCore
from stowage.context_engine.view.render import VIEW_STUB_PREFIX

VIEW = {"view": {"hot_tokens": 1000, "step_tokens": 1000}}


class _AbcStandIn:
    def select_context(self, request_messages, **_):  # noqa: ANN001, ANN201 - the ABC's default
        return None


def host_select_context(engine: Any, request_messages: list[dict[str, Any]],
                        conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the newer host does with the hook, per request."""
    override = getattr(type(engine), "select_context", None)
    if override is None or override is _AbcStandIn.select_context:
        return request_messages
    try:
        selected = engine.select_context(copy.deepcopy(request_messages),
                                         conversation_messages=copy.deepcopy(conversation),
                                         incoming_message=None, budget_tokens=engine.threshold_tokens)
    except Exception:  # noqa: BLE001 - the host logs a warning and sends the request unchanged
        return request_messages
    if isinstance(selected, list) and selected and all(isinstance(m, dict) for m in selected):
        return selected
    return request_messages


def session(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "terse"}, {"role": "user", "content": "go"}]
    for n in range(steps):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]})
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
