"""Hosts before 0.17.0 have no middleware API: tool search says so and offers no bridges."""

from __future__ import annotations

import stowage
from stowage.tool_search import BRIDGE_NAMES

from .plugin_context import RecordingCtx


def test_no_bridges_and_a_clear_status_without_middleware(home):
    ctx = RecordingCtx(middleware=False)
    stowage.register(ctx)
    engine = ctx.engines[0]
    names = {s["name"] for s in engine.get_tool_schemas()}
    assert not names & set(BRIDGE_NAMES)
    status = engine.get_status()["tool_search"]
    assert status["available"] is False and "needs 0.17.0" in status["reason"]
    assert not engine.host.unavailable_logged
    engine.on_session_start("s1", hermes_home=str(home))  # said again once the host's log is set up
    assert engine.host.unavailable_logged


def test_bridges_are_offered_where_the_host_has_middleware(home):
    ctx = RecordingCtx()
    stowage.register(ctx)
    names = {s["name"] for s in ctx.engines[0].get_tool_schemas()}
    assert set(BRIDGE_NAMES) <= names
    assert ctx.middleware == ["llm_request", "llm_execution"]


def test_hooks_called_with_unknown_extra_kwargs_keep_working(home):
    ctx = RecordingCtx()
    stowage.register(ctx)
    engine = ctx.engines[0]
    engine.update_model("m", 128_000, provider="p", max_tokens=4096, a_future_flag=True)
    engine.on_session_start("s1", hermes_home=str(home), a_future_flag=True)
    engine.update_from_response({"prompt_tokens": 10})
    assert engine.should_compress(10, a_future_flag=True) is False
    assert engine.handle_tool_call("stowage_grep", {"pattern": "x"}, a_future_flag=True)
    engine.on_turn_complete([], None, turn_id="t1", a_future_flag=True)
    engine.on_session_reset(a_future_flag=True)
    engine.on_session_end("s1", [], a_future_flag=True)
    assert engine.get_status()["engine"] == "stowage"
