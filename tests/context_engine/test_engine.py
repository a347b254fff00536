"""StowageEngineCore: the host contract without Hermes."""

from __future__ import annotations

import copy
import json
import random

import pytest

from stowage.context_engine.chat.messages import SUMMARY_MARKER, is_real_user_turn, is_summary, last_index, message_text
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.session.compaction_run import COOLDOWN_REASON
from stowage.context_engine.summary.reply import SummaryFailure
from stowage_dev.transcripts import make_transcript

from .helpers import NEWEST, RecordingModel, add_turn, history, make_engine, tool_turn


def tokens(engine, msgs):
    return engine.state.counter.count_messages(msgs)


def summaries(msgs):
    return [m for m in msgs if is_summary(m)]


def all_text(msgs):
    return "\n".join(message_text(m) for m in msgs)


# -- basic compaction ---------------------------------------------------------------------------


def test_compaction_shrinks_returns_valid_list_and_sets_flags():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    before = copy.deepcopy(msgs)
    out = engine.compress(msgs, current_tokens=tokens(engine, msgs))
    assert msgs == before
    assert out is not msgs
    assert validate_messages(out) == []
    assert tokens(engine, out) < 0.5 * tokens(engine, msgs)
    assert engine.compression_count == 1
    assert engine._last_compression_made_progress is True
    assert engine._last_compress_aborted is False
    assert engine._last_summary_error is None
    assert engine._last_summary_fallback_used is False
    assert len(model.prompts) == 1
    assert model.runtimes[0]["model"] == "test-model" and model.runtimes[0]["provider"] == "custom"
    assert len(summaries(out)) == 1
    # the newest request is kept verbatim as a real user turn
    newest = last_index(out, is_real_user_turn)
    assert message_text(out[newest]) == NEWEST
    log = engine.state.compaction_log[-1]
    assert log.result == "compacted" and log.tokens_after < log.tokens_before
    status = engine.get_status()
    assert status["compression_count"] == 1 and status["engine"] == "stowage"


def test_noop_returns_the_same_list_object():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    out = engine.compress(msgs)
    assert out is msgs
    assert engine.compression_count == 0 and model.prompts == []
    assert engine._last_compression_made_progress is False and engine._last_compress_aborted is False
    assert engine.compress([]) == [] and engine.compression_count == 0


def test_without_system_prompt_and_with_one():
    engine = make_engine()
    out = engine.compress(history(system=False), force=True)
    assert out[0]["role"] == "user" and validate_messages(out) == []
    engine = make_engine()
    msgs = history(system=True)
    out = engine.compress(msgs, force=True)
    assert out[0] == msgs[0] and validate_messages(out) == []
    assert sum(m["role"] == "system" for m in out) == 1


# -- summary failures -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["auth", "quota"])
def test_auth_and_quota_failures_abort_with_messages_unchanged(kind):
    engine = make_engine(model=RecordingModel(SummaryFailure(kind, "HTTP 401/402 from provider")))
    msgs = history()
    out = engine.compress(msgs)
    assert out is msgs
    assert engine._last_compress_aborted is True
    assert engine._last_summary_error.startswith(kind)
    assert engine._last_compression_made_progress is False
    assert engine.compression_count == 0
    assert engine._last_aux_model_failure_model == "test-model"


FALLBACK_FAILURES = {
    "timeout": SummaryFailure("timeout", "read timed out after 120s"),
    "http": SummaryFailure("http", "HTTP 503"),
    "network": SummaryFailure("network", "connection reset"),
    "no_provider": SummaryFailure("no_provider", "No LLM provider configured"),
    "empty": "",
    "whitespace": "  \n ",
    "garbage-html": "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
    "garbage-json": json.dumps({"error": {"message": "overloaded"}}),
    "exception": RuntimeError("unexpected bug in the aux client"),
    "think-only": "<think>I will write it later</think>",
}


@pytest.mark.parametrize("name", list(FALLBACK_FAILURES))
def test_other_failures_give_fallback_summary(name):
    model = RecordingModel(FALLBACK_FAILURES[name])
    engine = make_engine(model=model)
    msgs = history()
    out = engine.compress(msgs)
    assert out is not msgs and validate_messages(out) == []
    assert engine._last_compress_aborted is False
    assert engine._last_compression_made_progress is True
    assert engine._last_summary_fallback_used is True
    assert engine._last_summary_error
    assert engine.compression_count == 1
    summary = message_text(summaries(out)[0])
    assert "without the summary model" in summary
    assert "> " + NEWEST in summary  # the newest request quoted verbatim
    assert tokens(engine, out) < tokens(engine, msgs)


@pytest.mark.parametrize(
    "failure",
    [SummaryFailure("timeout", "slow"), SummaryFailure("http", "500"), "", "<html>error</html>", ValueError("boom")],
)
def test_abort_on_summary_failure_aborts_on_any_failure(failure):
    engine = make_engine(model=RecordingModel(failure), stowage={"compaction": {"abort_on_summary_failure": True}})
    msgs = history()
    out = engine.compress(msgs)
    assert out is msgs and engine._last_compress_aborted is True and engine._last_summary_error
    assert engine.compression_count == 0


def test_abort_on_summary_failure_inherited_from_compression():
    engine = make_engine(
        model=RecordingModel(SummaryFailure("timeout", "slow")), compression={"abort_on_summary_failure": True}
    )
    msgs = history()
    assert engine.compress(msgs) is msgs and engine._last_compress_aborted


def test_no_summary_model_attached_uses_fallback():
    engine = StowageEngineCore()
    engine.update_model(model="m", context_length=64_000)
    out = engine.compress(history())
    assert engine._last_summary_fallback_used and "no_provider" in engine._last_summary_error
    assert validate_messages(out) == []


def test_cooldown_after_failure_skips_model_until_forced():
    model = RecordingModel(SummaryFailure("timeout", "slow"))
    engine = make_engine(model=model)
    rng = random.Random(3)
    msgs = engine.compress(history())
    assert len(model.prompts) == 1 and engine._last_summary_fallback_used
    assert engine.state.governor.cooldown_remaining() > 0
    # next turn: automatic compaction runs but does not call the model
    engine.end_turn()
    msgs = add_turn(msgs, rng, calls=12)
    out = engine.compress(msgs)
    assert out is not msgs and len(model.prompts) == 1
    assert engine._last_summary_fallback_used and engine._last_summary_error == COOLDOWN_REASON
    # /compress (force) clears the cooldown and calls the model, which now works
    msgs = add_turn(out, rng, calls=12)
    out = engine.compress(msgs, force=True)
    assert len(model.prompts) == 2
    assert not engine._last_summary_fallback_used and engine._last_summary_error is None
    assert engine.state.governor.cooldown_remaining() == 0
    assert validate_messages(out) == []


def test_runtime_change_clears_cooldown():
    engine = make_engine(model=RecordingModel(SummaryFailure("timeout", "slow")))
    engine.compress(history())
    assert engine.state.governor.cooldown_remaining() > 0
    engine.update_model(model="test-model", context_length=64_000, provider="custom", base_url="http://127.0.0.1:1")
    assert engine.state.governor.cooldown_remaining() > 0  # same runtime
    engine.update_model(model="other-model", context_length=64_000, provider="custom")
    assert engine.state.governor.cooldown_remaining() == 0


# -- should_compress and usage --------------------------------------------------------------------


def test_should_compress_decides_on_argument():
    # summaries prepared ahead off: the plain trigger (over it, the turn may go on while one is written:
    # tests/context_engine/test_ahead_during_turn.py)
    engine = make_engine(stowage={"compaction": {"prepare_at": 0}})
    assert engine.threshold_tokens == 48_000
    engine.last_prompt_tokens = 100_000  # stale real value
    assert engine.should_compress(11_753) is False
    assert engine.should_compress(48_000) is True
    assert engine.should_compress(None) is True  # no argument: the last real count
    engine.last_prompt_tokens = -1
    assert engine.should_compress() is False
    for value in (-1, 0, None, "junk"):
        engine.last_prompt_tokens = 0
        assert engine.should_compress(value) is False


def test_should_compress_without_model_info_is_false():
    engine = StowageEngineCore()
    assert engine.should_compress(10**9) is False


def test_update_from_response_keeps_sentinel_on_empty_usage():
    engine = make_engine()
    engine.last_prompt_tokens = -1
    engine.awaiting_real_usage_after_compression = True
    engine.update_from_response({})
    engine.update_from_response(None)
    engine.update_from_response({"prompt_tokens": 0, "completion_tokens": 5})
    # the host passes {} when a response had no usage (0.19.0 conversation_loop, 0.22.2 turn_usage): no verdict
    # is coming, so the deferral it arms is not latched for good (issue 40: a provider without usage)
    assert engine.last_prompt_tokens == -1 and not engine.awaiting_real_usage_after_compression
    engine.awaiting_real_usage_after_compression = True
    assert engine.get_status()["last_prompt_tokens"] == 0
    engine.update_from_response(
        {"prompt_tokens": 30_000, "completion_tokens": 500, "total_tokens": 30_500, "cache_read_tokens": 10}
    )
    assert (engine.last_prompt_tokens, engine.last_completion_tokens, engine.last_total_tokens) == (30_000, 500, 30_500)
    assert engine.last_real_prompt_tokens == 30_000 and not engine.awaiting_real_usage_after_compression
    engine.update_from_response({"prompt_tokens": "40000", "completion_tokens": None})
    assert engine.last_prompt_tokens == 40_000 and engine.last_total_tokens == 40_000


def test_effectiveness_verdict_and_backoff():
    engine = make_engine(stowage={"compaction": {"max_ineffective": 2, "backoff_turns": 2}})
    rng = random.Random(5)
    msgs = history()
    engine.end_turn()  # the per-turn hook is installed
    for streak in (1, 2):
        msgs = engine.compress(msgs)
        assert engine._last_compression_made_progress
        engine.last_prompt_tokens = -1  # what the host does after a boundary
        engine.record_completed_compaction()
        engine.update_from_response({"prompt_tokens": 50_000})  # still over the 48k threshold
        assert engine.state.governor.ineffective_streak == streak
        engine.end_turn()
        msgs = add_turn(msgs, rng, calls=10)
    assert engine.should_compress(60_000) is False  # backing off
    assert "backing off" in engine.get_status()["governor"]["backoff"]
    engine.end_turn()
    engine.end_turn()
    assert engine.should_compress(60_000) is True
    # an effective compaction resets the streak
    engine.compress(msgs)
    engine.update_from_response({"prompt_tokens": 20_000})
    assert engine.state.governor.ineffective_streak == 0


def test_verdict_waits_for_first_real_count():
    engine = make_engine()
    engine.compress(history())
    engine.update_from_response({})
    assert engine.state.governor.verify_pending
    engine.update_from_response({"prompt_tokens": 10_000})
    assert not engine.state.governor.verify_pending and engine.state.governor.ineffective_streak == 0


# -- one compaction per turn --------------------------------------------------------------------------


def test_one_automatic_compaction_per_turn():
    model = RecordingModel()
    engine = make_engine(model=model)
    rng = random.Random(9)
    first = engine.compress(history())
    assert engine.compression_count == 1
    grown = first + add_turn([], rng, calls=14)[1:-1]  # more tool work in the same user turn
    again = engine.compress(grown)
    assert again is grown and engine.compression_count == 1 and len(model.prompts) == 1
    # an overflowing context still compacts
    overflow = engine.compress(grown, current_tokens=engine.context_length)
    assert overflow is not grown and engine.compression_count == 2
    # so does /compress
    forced = engine.compress(overflow + add_turn([], rng, calls=14)[1:-1], force=True)
    assert engine.compression_count == 3 and validate_messages(forced) == []


def test_end_turn_allows_compaction_again_and_should_compress_respects_turn():
    engine = make_engine()
    rng = random.Random(10)
    engine.end_turn()
    msgs = engine.compress(history())
    assert engine.should_compress(60_000) is False  # hook-driven: already compacted this turn
    msgs = msgs + add_turn([], rng, calls=14)[1:-1]
    assert engine.compress(msgs) is msgs
    engine.end_turn()
    assert engine.should_compress(60_000) is True
    out = engine.compress(msgs)
    assert out is not msgs and engine.compression_count == 2


def test_new_user_message_starts_a_new_turn_without_hook():
    engine = make_engine()
    rng = random.Random(11)
    out = engine.compress(history())
    msgs = add_turn(out, rng, calls=14)
    assert engine.compress(msgs) is not msgs and engine.compression_count == 2


# -- iterative summaries ---------------------------------------------------------------------------------


def test_second_compaction_updates_previous_summary():
    first_body = "## Goal\nFIRST-SUMMARY-TEXT: fix the parser.\n\n## Progress\n### Done\n- step one"
    model = RecordingModel(first_body, "## Goal\nSECOND-SUMMARY-TEXT\n\n## Progress\n### Done\n- step two")
    engine = make_engine(model=model)
    rng = random.Random(12)
    out = engine.compress(history())
    assert "FIRST-SUMMARY-TEXT" in all_text(out)
    assert "PREVIOUS SUMMARY" not in model.prompts[0]
    msgs = out
    for _ in range(6):
        msgs = add_turn(msgs, rng, calls=6)
    engine.end_turn()
    out2 = engine.compress(msgs)
    assert len(model.prompts) == 2
    prompt = model.prompts[1]
    assert "PREVIOUS SUMMARY" in prompt and "NEW TURNS TO INCORPORATE" in prompt
    previous = prompt.split("<previous_summary>")[1].split("</previous_summary>")[0]
    assert "FIRST-SUMMARY-TEXT" in previous
    assert "Newest User Request" not in previous  # the grounding is not fed back
    # the first summary is replaced, not nested or kept next to the new one
    assert len(summaries(out2)) == 1
    text = all_text(out2)
    assert text.count(SUMMARY_MARKER) == 1
    assert "SECOND-SUMMARY-TEXT" in text and "FIRST-SUMMARY-TEXT" not in text
    assert validate_messages(out2) == []
    # the history the host keeps and sends carries no internal key (0.13.0 sends them to the provider as they are)
    assert not [k for m in out + out2 for k in m if k.startswith("_")]


def test_many_consecutive_compactions_keep_one_summary_and_newest_request():
    engine = make_engine()
    rng = random.Random(13)
    msgs = history()
    for round_number in range(6):
        request = f"Request number {round_number}: update module {round_number}."
        msgs = add_turn(msgs, rng, calls=10, text=request)
        engine.end_turn()
        out = engine.compress(msgs, force=round_number % 2 == 1)
        assert validate_messages(out) == []
        assert engine._last_compression_made_progress, round_number
        assert len(summaries(out)) == 1 and all_text(out).count(SUMMARY_MARKER) == 1
        newest = last_index(out, is_real_user_turn)
        assert message_text(out[newest]) == request
        assert tokens(engine, out) < engine.threshold_tokens
        msgs = out
    assert engine.compression_count == 6


def test_input_with_consecutive_summary_messages():
    from stowage.context_engine.summary.reply import wrap

    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = [
        {"role": "user", "content": wrap("## Goal\nOLDEST-SUMMARY")},
        {"role": "assistant", "content": wrap("## Goal\nOLDER-SUMMARY")},
    ] + history()
    out = engine.compress(msgs)
    assert validate_messages(out) == []
    assert len(summaries(out)) == 1
    assert "OLDER-SUMMARY" in model.prompts[0].split("<previous_summary>")[1]
    assert "OLDEST-SUMMARY" in model.prompts[0], "an older summary in the window must not be dropped"


def test_newest_request_stays_a_real_user_turn_across_compactions_in_one_long_turn():
    """A long agentic turn: the user asks once, the agent keeps calling tools, compaction runs repeatedly."""
    engine = make_engine()
    rng = random.Random(14)
    msgs = make_transcript(6, seed=14) + [{"role": "user", "content": NEWEST}]
    msgs = msgs + add_turn([], rng, calls=20)[1:-1]
    for _round in range(4):
        out = engine.compress(msgs, force=True)
        assert validate_messages(out) == []
        assert engine._last_compression_made_progress
        newest = last_index(out, is_real_user_turn)
        assert newest >= 0 and message_text(out[newest]) == NEWEST
        assert tokens(engine, out) < engine.threshold_tokens
        msgs = out + add_turn([], rng, calls=20)[1:-1]


def test_single_request_session_keeps_compacting():
    """One user message, then hundreds of tool calls: the work after the request is summarized."""
    engine = make_engine()
    rng = random.Random(15)
    msgs = [{"role": "user", "content": NEWEST}] + add_turn([], rng, calls=25)[1:-1]
    for round_number in range(4):
        out = engine.compress(msgs, force=True)
        assert validate_messages(out) == []
        assert out[0] == {"role": "user", "content": NEWEST}
        assert tokens(engine, out) < engine.threshold_tokens / 2
        if round_number:  # the first pass gets under budget by pruning alone
            assert len(summaries(out)) == 1, "the tool work after the request must be summarized"
            assert all_text(out).count(SUMMARY_MARKER) == 1
            assert len(out) < len(msgs) * 0.6, (len(out), len(msgs))
        msgs = out + add_turn([], rng, calls=25)[1:-1]
    assert engine.compression_count == 4


# -- focus, memory, status, copies ------------------------------------------------------------------------


def test_focus_topic_and_memory_context_reach_the_prompt():
    model = RecordingModel()
    engine = make_engine(model=model)
    engine.compress(
        history(), focus_topic="database migrations", force=True, memory_context="User prefers PostgreSQL 16."
    )
    prompt = model.prompts[0]
    assert 'FOCUS TOPIC: "database migrations"' in prompt
    assert "User prefers PostgreSQL 16." in prompt
    assert engine.state.compaction_log[-1].focus_topic == "database migrations"
    assert engine.state.compaction_log[-1].forced is True


def test_prompt_is_redacted():
    model = RecordingModel()
    engine = make_engine(model=model)
    msgs = history()
    msgs[0] = {"role": "user", "content": "Use OPENAI_API_KEY=sk-proj-0123456789abcdefghijKLMN to test"}
    engine.compress(msgs)
    assert "sk-proj-0123456789abcdefghijKLMN" not in model.prompts[0]


def test_deepcopy_gives_independent_engine():
    """A copy (another agent's engine) shares the settings and model binding and starts its own session."""
    model = RecordingModel()
    engine = make_engine(model=model)
    engine.compress(history())
    clone = copy.deepcopy(engine)
    assert clone.summary_model is engine.summary_model and clone.settings is engine.settings
    assert clone.state.governor is not engine.state.governor and clone.state.counter is not engine.state.counter
    assert clone.threshold_tokens == engine.threshold_tokens and clone.runtime == engine.runtime
    assert clone.compression_count == 0 and not clone.state.compaction_log  # the other agent's session is not copied
    clone.compress(add_turn(history(), random.Random(1), calls=10), force=True)
    assert clone.compression_count == 1 and engine.compression_count == 1
    clone.end_turn()
    assert clone.state.governor.turn != engine.state.governor.turn
    assert len(engine.state.compaction_log) == 1 and len(clone.state.compaction_log) == 1
    fresh = copy.deepcopy(make_engine())
    assert fresh.compress(history()) is not None and fresh.compression_count == 1


def test_session_boundaries():
    engine = make_engine()
    engine.on_session_start("s1", platform="cli")
    engine.compress(history())
    engine.on_session_start("s1", boundary_reason="compression", old_session_id="s1")
    assert engine.compression_count == 1 and engine.state.governor.compacted_this_turn()
    engine.on_session_start("s2")
    assert not engine.state.governor.compacted_this_turn()
    engine.last_prompt_tokens = 5
    engine.on_session_reset()
    assert engine.compression_count == 0 and engine.last_prompt_tokens == 0
    engine.on_session_end("s2", [])


def test_has_content_to_compress():
    engine = make_engine()
    assert engine.has_content_to_compress([]) is False
    assert engine.has_content_to_compress(None) is False
    assert engine.has_content_to_compress([{"role": "user", "content": "hi"}]) is False
    assert (
        engine.has_content_to_compress(
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
            ]
        )
        is False
    )
    assert (
        engine.has_content_to_compress(
            [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
        )
        is True
    )
    assert engine.has_content_to_compress(history()) is True


def test_update_model_sets_threshold_and_status():
    engine = make_engine(stowage={"compaction": {"threshold": 0.5}})
    engine.update_model(model="big", context_length=200_000, api_key=lambda: "token")
    assert engine.threshold_tokens == 100_000 and engine.context_length == 200_000
    assert engine.state.tail_budget_tokens(engine.limits) == 20_000
    engine.last_prompt_tokens = -1
    status = engine.get_status()
    assert status["last_prompt_tokens"] == 0 and status["threshold_tokens"] == 100_000
    assert status["tokenizer"].startswith("tiktoken:")


def test_preflight_defers_to_real_usage_right_after_a_compaction():
    engine = StowageEngineCore(summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 128_000)
    assert engine.should_defer_preflight_to_real_usage(200_000) is False
    engine.awaiting_real_usage_after_compression = True  # what the host sets after a boundary
    engine.last_prompt_tokens = -1
    assert engine.should_defer_preflight_to_real_usage(200_000) is True
    engine.update_from_response({"prompt_tokens": 30_000, "completion_tokens": 10, "total_tokens": 30_010})
    assert engine.should_defer_preflight_to_real_usage(200_000) is False
    assert engine.last_real_prompt_tokens == 30_000


def test_the_summary_call_gets_the_compactions_deadline():
    msgs = [{"role": "user", "content": "start"}]
    for i in range(12):
        msgs += tool_turn([f"c{i}"], [f"output {i} " * 300])
    msgs += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "next"}]
    timed, unconfigured = RecordingModel(), RecordingModel()
    make_engine(model=timed, stowage={"compaction": {"summary_timeout_seconds": 45}}).compress(msgs, force=True)
    make_engine(model=unconfigured).compress(msgs, force=True)
    assert len(timed.prompts) == 1 and 0 < (timed.timeouts[0] or 0) <= 45  # what is left of 45 s
    assert len(unconfigured.prompts) == 1 and unconfigured.timeouts == [None]  # Hermes's own
    assert "timeout" not in timed.runtimes[0]  # a parameter of the call, not a key of the host's runtime


def test_compaction_sizes_are_both_on_the_hosts_basis():
    """Before and after count the same things: what the host measured (system prompt and tools) carries over."""
    engine = make_engine(model=RecordingModel())
    msgs = history()
    overhead = 15_000  # system prompt and tool schemas the host counts and the messages do not hold
    current = sum(map(engine.state.counter.estimate_message, msgs)) + overhead
    out = engine.compress(msgs, current_tokens=current)
    log = engine.state.compaction_log[-1]
    estimate = engine.state.counter.estimate_message  # calibrated by the compaction: the same scale for both lists
    assert log.tokens_before == current
    assert log.tokens_after == sum(map(estimate, out)) + current - sum(map(estimate, msgs))
    assert overhead < log.tokens_after < log.tokens_before


def test_with_the_view_on_a_compaction_keeps_view_compact_tail_tokens_and_never_less_than_the_hot_zone():
    def tail(context_length: int = 200_000, **view: object) -> int:
        engine = make_engine(context_length=context_length, stowage={"view": {"enabled": True, **view}})
        return engine.state.tail_budget_tokens(engine.limits)

    assert tail() == 16_000  # the default, at 0.37 of a 200k window
    assert tail(hot_tokens=3000, compact_tail_tokens=0) == 3000
    assert tail(hot_tokens=3000, compact_tail_tokens=9000) == 9000
    assert tail(hot_tokens=3000, compact_tail_tokens=2000) == 3000  # never below the hot zone: sent verbatim anyway
    # a small window keeps at most 40% of its trigger, so a compaction still has something to summarize
    assert tail(context_length=32_000) == int(32_000 * 0.37 * 0.4)
    # what the compaction keeps grows with it
    shorter = make_engine(stowage={"view": {"enabled": True, "hot_tokens": 3000, "compact_tail_tokens": 0}})
    longer = make_engine(stowage={"view": {"enabled": True, "hot_tokens": 3000, "compact_tail_tokens": 8000}})
    assert longer.state.tail_budget_tokens(longer.limits) == 8000
    kept = [len(engine.compress(history(), current_tokens=60_000)) for engine in (shorter, longer)]
    assert kept[0] < kept[1], kept
