"""The simulated clock of a timed replay: what a compaction's wait is, without waiting."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from stowage.command.replay.offline import HostDriver, ReplayTarget, StandInSummarizer
from stowage.command.replay.offline.billing import TokenMeter
from stowage.command.replay.offline.clock import Latency, SimClock, Timing, parse_latency
from stowage.context_engine.records.part_status import PreparedUse
from stowage.context_engine.records.session_status import AheadStatus


def words(text: str) -> int:
    return len(text.split())


TRANSCRIPT = [
    {"role": "system", "content": "sys prompt"},
    {"role": "user", "content": "first task"},
    {
        "role": "assistant",
        "content": "look",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "out one " * 50},
    {"role": "assistant", "content": "done"},
]


class FakeEngine:
    """Compacts at the first post-tool check (``answers``), calling ``summarizer`` unless it has none."""

    def __init__(self, *, answers: list[bool], summarizer: StandInSummarizer | None = None) -> None:
        self.answers = list(answers)
        self.summarizer = summarizer
        self.threshold_tokens = 10**9
        self.protect_first_n = self.protect_last_n = 1
        self.last_prompt_tokens = self.last_completion_tokens = self.compression_count = 0
        self._last_compression_made_progress = self._last_summary_fallback_used = False
        self._last_compress_aborted = False

    def should_compress(self, tokens: int | None = None) -> bool:
        return self.answers.pop(0) if self.answers else False

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = usage["prompt_tokens"]

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None) -> list[dict[str, Any]]:
        if self.summarizer is not None:
            self.summarizer("summarize these: " + " ".join(str(m.get("content")) for m in messages))
        self._last_compression_made_progress = True
        self.compression_count += 1
        return [{"role": "user", "content": "[CONTEXT COMPACTION] summary"}] + messages[-2:]


def test_latency_specs_parse_and_grow_with_the_prompt() -> None:
    assert parse_latency("10") == Latency(10.0)
    growing = parse_latency("2+0.025/1k")
    assert growing == Latency(2.0, 0.025)
    assert growing(40_000) == pytest.approx(3.0)  # 2 s + 40 x 25 ms
    assert Latency(10.0)(123_456) == 10.0
    assert "25 ms per 1k" in growing.describe()
    for bad in ("", "ten", "2+", "2+0.1", "-3"):
        with pytest.raises(ValueError, match="expected SECONDS"):
            parse_latency(bad)


def test_a_background_call_takes_its_own_time_and_the_turn_waits_only_for_the_rest() -> None:
    clock = SimClock()
    clock.advance(5)
    finished: list[float] = []

    def background() -> None:  # a summary prepared ahead: starts at the turn's time, takes 10 s of its own
        clock.advance(10)
        finished.append(clock())

    worker = threading.Thread(target=background)
    worker.start()
    worker.join()
    assert finished == [15.0] and clock() == 5.0  # the turn did not move
    clock.advance(2)  # one main request later
    clock.advance_to(finished[0])  # the compaction takes the reply: waits for what is left
    assert clock() == 15.0
    clock.advance_to(3.0)  # never backwards
    assert clock() == 15.0


class _AheadStub:
    """The part of an engine's ahead summaries the driver reads (settle, status, last_use)."""

    def __init__(self) -> None:
        self.last_use: PreparedUse | None = None

    def settle(self) -> None:
        pass

    def status(self) -> AheadStatus:
        return AheadStatus(prepared=1, used=1, wasted_tokens=0)


def timed_run(engine: Any, summarizer: StandInSummarizer, timing: Timing) -> Any:
    driver = HostDriver(TokenMeter(encode=words), window=10_000, timing=timing)
    return driver.replay(TRANSCRIPT, ReplayTarget(label="fake", engine=engine, summarizer=summarizer))


def test_a_compaction_calling_the_model_blocks_the_turn_for_the_model_latency() -> None:
    summarizer = StandInSummarizer(words)
    engine = FakeEngine(answers=[True], summarizer=summarizer)  # compacts after the first tool batch
    result = timed_run(engine, summarizer, Timing(parse_latency("2+1/1k"), main_s=1.0))
    (prompt_tokens,) = result.summary_prompt_tokens
    assert result.compaction_waits == [pytest.approx(2.0 + prompt_tokens / 1000)]
    assert result.compaction_prepared == [False]


def test_a_summary_written_ahead_costs_the_turn_nothing_and_is_counted_as_prepared() -> None:
    summarizer = StandInSummarizer(words)
    engine = FakeEngine(answers=[True])  # its compress() uses a reply written before: no call on the turn
    engine.state = SimpleNamespace(ahead=_AheadStub())
    original = engine.compress

    def compress(messages: list[dict[str, Any]], current_tokens: int | None = None) -> list[dict[str, Any]]:
        engine.state.ahead.last_use = PreparedUse(outcome="used", prepared=True)
        return original(messages, current_tokens)

    engine.compress = compress
    result = timed_run(engine, summarizer, Timing(Latency(10.0), main_s=2.0))
    assert result.compaction_waits == [0.0] and result.compaction_prepared == [True]
    (served,) = result.compaction_served  # the diagnostics row (bench_economy --diagnose)
    assert served["outcome"] == "used" and served["wait_s"] == 0.0 and served["nth"] == 1
    assert result.as_dict()["compaction_waits"] == [0.0]


def test_an_untimed_replay_measures_no_wait() -> None:
    summarizer = StandInSummarizer(words)
    engine = FakeEngine(answers=[True], summarizer=summarizer)
    result = HostDriver(TokenMeter(encode=words), window=10_000).replay(
        TRANSCRIPT, ReplayTarget(label="fake", engine=engine, summarizer=summarizer)
    )
    assert result.compactions == 1 and result.compaction_waits == [] and result.compaction_prepared == []
