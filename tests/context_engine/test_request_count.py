"""The request as it will be sent, counted with the tokenizer: what lets a turn go on over the trigger judges.

The pure figure (``policy.request_count``), the ceiling rule (``policy.rules.passes_ceiling``) and the session's
decisions that use it: a dense paste over the ceiling compacts first, a deferral never lets a counted request over
the trigger go, a provider without usage still counts its requests over the trigger.
"""

from __future__ import annotations

import random

from stowage.context_engine.policy.request_count import SentRequest, conversation_of, judged_request
from stowage.context_engine.policy.rules import AWAIT_CEILING, AWAIT_REQUESTS, passes_ceiling

from .helpers import RecordingModel, history, make_engine

CHINESE = (
    "我们今天讨论项目的进展情况。系统需要处理大量的数据和请求。请检查配置文件是否正确。测试结果表明性能有明显提高。"
)


def chinese(chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    sentences = [s + "。" for s in CHINESE.split("。") if s]
    out = ""
    while len(out) < chars:
        out += rng.choice(sentences)
    return out


def count(message) -> int:
    return len(message["content"])


# -- the figure (pure) -----------------------------------------------------------------------------------------------


def test_judged_request_is_the_last_request_plus_the_messages_since():
    sent = SentRequest(tokens=1_000, conversation_messages=2)
    history_now = [{"role": "user", "content": "a" * 10}, {"role": "assistant", "content": "b" * 20}]
    assert judged_request(sent, history_now, count) == 1_000  # nothing new
    grown = history_now + [{"role": "user", "content": "c" * 300}]
    assert judged_request(sent, grown, count) == 1_300
    # the provider's count of the last request, once it came back, is the basis
    assert judged_request(SentRequest(1_000, 2, real=1_200), grown, count) == 1_500


def test_judged_request_without_a_basis_or_history():
    assert judged_request(SentRequest(), [{"role": "user", "content": "x"}], count) is None  # nothing sent yet
    sent = SentRequest(tokens=1_000, conversation_messages=3)
    assert judged_request(sent, None, count) == 1_000  # no live history: the last request is the floor
    shorter = [{"role": "user", "content": "summary"}]
    assert judged_request(sent, shorter, count) is None  # compacted since: no basis


def test_the_system_prompt_is_not_part_of_the_conversation():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, "junk"]
    assert conversation_of(messages) == [{"role": "user", "content": "u"}, "junk"]


def test_passes_ceiling():
    window = 100_000
    assert not passes_ceiling(int(AWAIT_CEILING * window), window)
    assert passes_ceiling(int(AWAIT_CEILING * window) + 1, window)
    assert not passes_ceiling(10**9, 0)  # no window known: nothing to judge


# -- the session's decisions -------------------------------------------------------------------------------------


def shaped(engine, messages) -> None:
    """The host's middleware sends ``messages`` (the request is counted as sent)."""
    engine.shape_request([], [{"role": "system", "content": "You are Hermes."}, *messages])


def over_the_trigger_while_writing(context_length: int = 64_000):
    """A session whose last request (real usage) is just over the trigger, a summary being written."""
    engine = make_engine(
        model=RecordingModel(), context_length=context_length, stowage={"compaction": {"prepare_at": 0.9}}
    )
    engine.host.history_before_requests = True
    msgs = history(turns=10)
    shaped(engine, msgs)
    engine.update_from_response({"prompt_tokens": engine.threshold_tokens + 500})
    engine.state.ahead.writing = lambda: True  # a summary is being written for this compaction
    return engine, msgs


def test_over_the_trigger_a_dense_paste_past_the_ceiling_compacts_first():
    engine, msgs = over_the_trigger_while_writing()
    rough = engine.threshold_tokens + 2_000  # what characters/4 says of the request with the paste
    engine.live_history = lambda: msgs
    assert engine.should_compress_info(rough) == (False, None)  # a summary is being written: the turn goes on
    paste = chinese(int(0.6 * engine.context_length))  # about as many tokens as 0.36 of the window
    pasted = msgs + [{"role": "user", "content": paste}]
    engine.live_history = lambda: pasted
    counted = engine.state.judged_request(pasted)
    assert counted is not None and passes_ceiling(counted, engine.context_length)
    assert engine.should_compress_info(rough) == (True, None)  # counted with the tokenizer: compact first
    engine.live_history = lambda: None  # a host call without the history: the rough figure decides, as before
    assert engine.should_compress_info(rough) == (False, None)


def test_a_deferral_never_lets_a_counted_request_over_the_trigger_go():
    engine = make_engine(stowage={"view": {"enabled": True}})
    threshold = engine.threshold_tokens
    msgs = history(turns=4)
    engine.should_defer_preflight_to_real_usage(threshold - 100)  # the host's rough figure of the last request
    shaped(engine, msgs)
    engine.update_from_response({"prompt_tokens": 5_000})  # which was far leaner as sent
    rough = threshold + 10  # the host's characters/4 figure of the next one, whole history
    small = msgs + [{"role": "user", "content": "ok"}]
    assert engine.state.defer_preflight(rough, threshold, False, small)  # 5,000 + 110: the real count will tell
    pasted = msgs + [{"role": "user", "content": chinese(int(1.5 * threshold))}]
    assert not engine.state.defer_preflight(rough, threshold, False, pasted)  # counted, it is over the trigger
    assert engine.state.defer_preflight(rough, threshold, False, None)  # no history at hand: as before


def test_a_provider_without_usage_still_counts_its_requests_over_the_trigger():
    engine = make_engine(model=RecordingModel(), stowage={"compaction": {"prepare_at": 0.9}})
    engine.host.history_before_requests = True
    msgs = history(turns=30)  # about 70k tokens: over the 48k trigger of the 64k window
    over = engine.state.over_trigger
    for _ in range(AWAIT_REQUESTS + 1):
        shaped(engine, msgs)  # no usage ever comes back: the previous request's own count stands in
    assert engine.state.sent_request.tokens >= engine.threshold_tokens
    assert engine.state.over_trigger is over and over.requests == AWAIT_REQUESTS
    assert over.may_start()
    # the host's {} while it awaits a compaction's verdict: no real count comes, so nothing stays deferred by it
    engine.state.awaiting_real_usage_after_compression = True
    engine.update_from_response({})
    assert not engine.state.awaiting_real_usage_after_compression


def test_a_compaction_starts_the_count_afresh():
    engine = make_engine(model=RecordingModel())
    msgs = history(turns=30)
    shaped(engine, msgs)
    assert engine.state.sent_request.tokens > 0
    engine.compress(msgs, engine.threshold_tokens + 1)
    # until the next request is sent, the next one is the system prompt and tools plus the whole compacted history
    assert engine.state.sent_request == SentRequest.fixed_part_only(engine.state.fixed_part.tokens)
    assert engine.state.judged_request(msgs[:3]) == engine.state.fixed_part.tokens + sum(
        map(engine.state.counter.count_message, msgs[:3])
    )


def test_without_request_middleware_the_providers_count_and_the_history_it_carried_are_the_basis():
    """0.13.0 - 0.16.x send the whole history with no middleware: the usage, with the live history at that
    moment, is what the next request is judged on."""
    engine = make_engine(model=RecordingModel())
    msgs = history(turns=4)
    engine.live_history = lambda: msgs
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.state.sent_request == SentRequest(9_000, len(msgs), real=9_000)
    pasted = msgs + [{"role": "user", "content": chinese(2_000)}]
    grown = engine.state.judged_request(pasted)
    assert grown == 9_000 + engine.state.counter.count_message(pasted[-1])
