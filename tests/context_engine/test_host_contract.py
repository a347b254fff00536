"""The typed host contract (context_engine/host_adapter/host_contract.py) matches the engine and itself."""

from __future__ import annotations

import inspect

from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.host_adapter.host_contract import LEFT_TO_THE_HOST, MEMBERS, HostEngine, member_names


def _protocol_members() -> set[str]:
    names = set(getattr(HostEngine, "__annotations__", {}))
    names |= {
        n for n, v in vars(HostEngine).items() if not n.startswith("__") and (callable(v) or isinstance(v, property))
    }
    return names - {"_is_protocol", "_is_runtime_protocol"}


def test_the_protocol_and_the_member_table_list_the_same_members():
    assert len(member_names()) == len(set(member_names()))
    assert _protocol_members() == set(member_names())


def test_the_engine_has_every_member_and_every_method_takes_unknown_keywords():
    engine = StowageEngineCore()
    engine.update_model("m", 100_000)
    assert isinstance(engine, HostEngine)
    for name in member_names("method"):
        parameters = inspect.signature(getattr(engine, name)).parameters.values()
        assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters), name
    for member in MEMBERS:
        if member.kind != "method":
            assert hasattr(engine, member.name), member.name


def test_a_future_keyword_is_ignored_by_every_method_the_host_calls():
    engine = StowageEngineCore()
    engine.update_model("m", 100_000, future=1)
    engine.on_session_start("s", future=1)
    engine.update_from_response({"prompt_tokens": 10}, future=1)
    assert engine.should_compress(10, future=1) is False
    assert engine.should_compress_info(10, future=1) == (False, None)
    assert engine.should_defer_preflight_to_real_usage(10, future=1) is False
    assert engine.has_content_to_compress([], future=1) is False
    messages = [{"role": "user", "content": "hi"}]
    assert engine.compress(messages, future=1) is messages
    engine.record_completed_compaction(used_fallback=False, feasibility_skip=True)
    selected = engine.select_context(messages, future=1)
    assert selected is None or (isinstance(selected, list) and selected)
    engine.on_turn_complete(messages, None, future=1)
    assert isinstance(engine.get_automatic_compaction_status_message(phase="idle", future=1), str)
    assert isinstance(engine.get_status(future=1), dict) and isinstance(engine.get_tool_schemas(future=1), list)
    assert "error" in engine.handle_tool_call("stowage_fetch", {}, messages=messages, future=1)
    assert engine.clone_for_agent(future=1) is not engine
    engine.on_session_reset(future=1)
    engine.on_session_end("s", [], future=1)


def test_what_the_contract_leaves_to_the_host_the_engine_does_not_define():
    for member in LEFT_TO_THE_HOST:
        assert member.name not in member_names()
        assert not hasattr(StowageEngineCore, member.name), member.name
