"""The driver against a scripted engine that records the exact call order."""

from __future__ import annotations

from typing import Any

from stowage.command.replay.offline import HostDriver, Observer, ReplayTarget, StandInSummarizer
from stowage.command.replay.offline.billing import RequestBiller, TokenMeter


def words(text: str) -> int:
    return len(text.split())


class Recorder(Observer):
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def event(self, name: str, **data: Any) -> None:
        self.events.append((name, data))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [data for event, data in self.events if event == name]


class FakeEngine:
    """Duck-typed engine; ``answers`` scripts should_compress, ``mode`` scripts compress."""

    def __init__(
        self,
        *,
        threshold: int = 10**9,
        answers: list[bool] | None = None,
        mode: str = "shrink",
        summarizer: StandInSummarizer | None = None,
        record_usage: bool = True,
    ) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.threshold_tokens = threshold
        self.protect_first_n = 1
        self.protect_last_n = 1
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.compression_count = 0
        self.answers = list(answers or [])
        self.mode = mode
        self.summarizer = summarizer
        self.record_usage = record_usage
        self._last_compression_made_progress = False
        self._last_summary_fallback_used = False
        self._last_compress_aborted = False
        self.calls.clear()  # only what the driver does counts

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name
            in (
                "last_prompt_tokens",
                "awaiting_real_usage_after_compression",
                "last_completion_tokens",
                "_verify_compaction_cleared_threshold",
            )
            and "calls" in self.__dict__
        ):
            self.calls.append(("set", (name, value)))
        object.__setattr__(self, name, value)

    def should_defer_preflight_to_real_usage(self, rough: int) -> bool:
        self.calls.append(("defer", rough))
        return False

    def should_compress(self, tokens: int | None = None) -> bool:
        answer = self.answers.pop(0) if self.answers else (tokens or 0) >= self.threshold_tokens
        self.calls.append(("should_compress", (tokens, answer)))
        return answer

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.calls.append(("usage", usage["prompt_tokens"]))
        if self.record_usage:
            object.__setattr__(self, "last_prompt_tokens", usage["prompt_tokens"])

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None) -> list[dict[str, Any]]:
        self.calls.append(("compress", (len(messages), current_tokens)))
        self._last_compression_made_progress = False
        if self.mode == "same":
            return messages
        if self.summarizer is not None:
            self.summarizer("summarize these: " + " ".join(str(m.get("content")) for m in messages))
        self._last_compression_made_progress = True
        self.compression_count += 1
        if self.mode == "drop_users":
            return [{"role": "assistant", "content": "[summary]"}] + [m for m in messages[-2:] if m["role"] != "user"]
        return [{"role": "user", "content": "[CONTEXT COMPACTION] summary"}] + messages[-2:]

    def record_completed_compaction(self, used_fallback: bool = False) -> None:
        self.calls.append(("record_completed_compaction", used_fallback))


def call(i: int) -> dict[str, Any]:
    return {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}


TRANSCRIPT = [
    {"role": "system", "content": "sys prompt"},
    {"role": "user", "content": "first task"},
    {"role": "assistant", "content": "look", "tool_calls": [call(1)]},
    {"role": "tool", "tool_call_id": "c1", "content": "out one " * 50},
    {"role": "assistant", "content": "done"},
    {"role": "user", "content": "second task"},
    {"role": "assistant", "content": "again", "tool_calls": [call(2)]},
    {"role": "tool", "tool_call_id": "c2", "content": "out two"},
    {"role": "assistant", "content": "finished"},
]


def run(engine: Any, **target: Any) -> tuple[Any, Recorder]:
    recorder = Recorder()
    driver = HostDriver(TokenMeter(encode=words), window=target.pop("window", 10_000), observer=recorder)
    result = driver.replay(TRANSCRIPT, ReplayTarget(label="fake", engine=engine, **target))
    return result, recorder


def names(engine: FakeEngine) -> list[str]:
    return [name for name, _ in engine.calls]


def test_no_compaction_order_per_turn_and_per_call() -> None:
    engine = FakeEngine()
    result, recorder = run(engine)
    first_request, second_request, third_request, fourth_request = (e["tokens"] for e in recorder.named("request"))
    kinds = [(name, args) for name, args in engine.calls]
    assert [name for name, _ in kinds] == [
        # turn 1: no preflight (2 messages or fewer, under threshold); no pre-API check (one message)
        "usage",
        "should_compress",  # post-tool check after the tool batch, on the real count
        "defer",
        "should_compress",
        "usage",  # call 2: pre-API check, then usage
        # turn 2: preflight (more than first + last + 1 messages): estimate -> defer -> raise last -> should_compress
        "defer",
        "set",
        "should_compress",
        "defer",
        "should_compress",
        "usage",  # call 3
        "should_compress",  # post-tool
        "defer",
        "should_compress",
        "usage",
    ]  # call 4
    assert kinds[0] == ("usage", first_request)
    assert kinds[1] == ("should_compress", (first_request, False))
    assert [args for name, args in kinds if name == "usage"] == [
        first_request,
        second_request,
        third_request,
        fourth_request,
    ]
    preflight = recorder.named("preflight")[0]["tokens"]
    assert kinds[6] == ("set", ("last_prompt_tokens", preflight))  # raised to the rough estimate
    assert preflight > second_request  # the estimate counts chars/4 of str(message): rougher than words
    assert [e["where"] for e in recorder.named("should_compress")] == [
        "post_tool",
        "pre_api",
        "preflight",
        "pre_api",
        "post_tool",
        "pre_api",
    ]
    assert result.bill.requests == 4 and result.user_turns == 2 and result.compactions == 0


def test_post_tool_uses_real_usage_and_compaction_writes_the_host_sentinels() -> None:
    summarizer = StandInSummarizer(words)
    engine = FakeEngine(answers=[True], summarizer=summarizer)  # the first check (post-tool) says yes
    result, recorder = run(engine, summarizer=summarizer)
    first_request = recorder.named("request")[0]["tokens"]
    assert engine.calls[:3] == [
        ("usage", first_request),
        ("should_compress", (first_request, True)),
        ("compress", (3, first_request)),
    ]  # approx = last_prompt_tokens
    assert engine.calls[3:7] == [
        ("set", ("last_prompt_tokens", -1)),
        ("set", ("last_completion_tokens", 0)),
        ("set", ("awaiting_real_usage_after_compression", True)),
        ("record_completed_compaction", False),
    ]
    assert result.compactions == 1 and result.bill.summary_calls == 1
    assert result.bill.summary_tokens == words(
        "summarize these: first task look " + "out one " * 50
    )  # the stand-in saw that prompt
    assert result.summary_prompt_tokens == [result.bill.summary_tokens]
    assert result.bill.billed_tokens == result.bill.prompt_tokens + result.bill.summary_tokens


def test_sentinel_maps_to_zero_and_zero_to_the_rough_estimate_after_tools() -> None:
    # an engine that never records usage: last_prompt_tokens stays 0 (-> rough estimate), then -1 after a compaction
    engine = FakeEngine(answers=[True], record_usage=False)
    _, recorder = run(engine)
    post_tool = [e for e in recorder.named("should_compress") if e["where"] == "post_tool"]
    rough = post_tool[0]["tokens"]
    assert rough > 0 and rough != recorder.named("request")[0]["tokens"]  # the rough estimate of history + tools
    assert post_tool[1]["tokens"] == 0 and post_tool[1]["last_prompt_tokens"] == -1  # the sentinel maps to 0


def test_unchanged_result_makes_no_boundary() -> None:
    engine = FakeEngine(answers=[True, False, False], mode="same")
    result, recorder = run(engine)
    assert result.compactions == 0 and result.noop_compressions == 1
    assert ("set", ("last_prompt_tokens", -1)) not in engine.calls
    assert "record_completed_compaction" not in names(engine)
    assert recorder.named("compress")[0]["outcome"] == "noop"


def test_at_most_three_pre_api_compactions_per_turn() -> None:
    engine = FakeEngine(threshold=0)  # should_compress always says yes
    result, recorder = run(engine)
    events = [
        (name, data.get("where"))
        for name, data in recorder.events
        if name in ("should_compress", "request", "turn_start")
    ]
    turn = [("turn_start", None)]
    pre_api_three = [("should_compress", "pre_api")] * 3 + [("request", None)]  # then the request goes out anyway
    per_turn = (
        turn
        + [("should_compress", "preflight")]
        + pre_api_three
        + [("should_compress", "post_tool"), ("request", None)]
    )  # the cap is per turn: no 4th check
    assert events == per_turn + per_turn[:2] + [("should_compress", "preflight")] + per_turn[2:]
    assert result.bill.requests == 4


def test_middleware_runs_before_billing_and_usage_reports_the_sent_request() -> None:
    seen: list[dict[str, Any]] = []

    def keep_last_two(request: dict[str, Any], **context: Any) -> dict[str, Any]:
        assert context["session_id"] == "s1" and "original_request" in context
        seen.append(request)
        return {"request": {**request, "messages": request["messages"][-2:]}}

    def ignored(request: dict[str, Any], **_: Any) -> None:
        return None

    engine = FakeEngine()
    result, recorder = run(engine, middlewares=[keep_last_two, ignored], session_id="s1")
    sent = [e["request"] for e in recorder.named("request")]
    assert all(len(r["messages"]) <= 2 for r in sent)
    check = RequestBiller(TokenMeter(encode=words))
    expected = [check.bill(r).tokens for r in sent]
    assert [e["tokens"] for e in recorder.named("request")] == expected
    assert [args for name, args in engine.calls if name == "usage"] == expected
    assert result.middleware_changed == 4 and len(seen) == 4


def test_tool_result_hooks_first_string_wins_and_turn_end_hooks_fire() -> None:
    turns: list[str] = []

    def skip(**_: Any) -> None:
        return None

    def shorten(tool_name: str, args: Any, result: Any, **_: Any) -> str:
        assert tool_name == "bash" and args == {"command": "ls"}
        return "short"

    def never(**_: Any) -> str:
        raise AssertionError("only the first string return counts")

    engine = FakeEngine()
    result, recorder = run(
        engine,
        tool_result_hooks=[skip, shorten, never],
        turn_end_hooks=[lambda session_id, **_: turns.append(session_id)],
        session_id="s2",
    )
    assert result.hook_replaced_results == 2
    assert turns == ["s2", "s2"]
    last_request = recorder.named("request")[-1]["request"]
    assert [m["content"] for m in last_request["messages"] if m["role"] == "tool"] == ["short", "short"]


def test_a_real_user_turn_is_ensured_after_compaction() -> None:
    engine = FakeEngine(answers=[False, True], mode="drop_users")
    _, recorder = run(engine)
    assert recorder.named("user_turn_ensured")
    request = recorder.named("request")[1]["request"]
    assert any(m["role"] == "user" and m["content"] == "first task" for m in request["messages"])


def test_engine_without_record_completed_compaction_gets_the_verify_flag() -> None:
    class Older(FakeEngine):
        record_completed_compaction = None  # type: ignore[assignment]

    engine = Older(answers=[False, True])
    run(engine)
    assert ("set", ("_verify_compaction_cleared_threshold", True)) in engine.calls


def test_preflight_rechecks_after_each_pass_and_stops_without_progress() -> None:
    # user turns only: no API call, so every check is a preflight check
    long_session = [{"role": "system", "content": "s"}] + [
        {"role": "user", "content": f"u{i} " * 200} for i in range(4)
    ]

    def preflights(engine: FakeEngine) -> list[tuple[str, Any]]:
        recorder = Recorder()
        HostDriver(TokenMeter(encode=words), window=10**6, observer=recorder).replay(
            long_session, ReplayTarget(label="fake", engine=engine)
        )
        return [
            (name, data.get("where") or data.get("outcome"))
            for name, data in recorder.events
            if name == "compress" or (name == "should_compress" and data["where"] == "preflight")
        ]

    # a compaction that helps: one pass, then the re-estimate is under the threshold
    shrinking = FakeEngine(threshold=400)
    assert preflights(shrinking)[:3] == [
        ("should_compress", "preflight"),
        ("compress", "boundary"),
        ("should_compress", "preflight"),
    ]
    # a compaction that changes nothing: one pass, no re-check (no progress)
    stuck = FakeEngine(threshold=400, mode="same")
    assert preflights(stuck)[:3] == [
        ("should_compress", "preflight"),
        ("compress", "noop"),
        ("should_compress", "preflight"),
    ]


def test_cache_breaks_are_told_apart_from_compactions() -> None:
    calls = {"n": 0}

    def rewrite_first_user_on_third_call(request: dict[str, Any], **_: Any) -> dict[str, Any] | None:
        calls["n"] += 1
        if calls["n"] < 3:
            return None
        messages = [{**m, "content": "stub"} if m["role"] == "tool" else m for m in request["messages"]]
        return {"request": {**request, "messages": messages}}

    result, _ = run(FakeEngine(), middlewares=[rewrite_first_user_on_third_call])
    assert result.cache_breaks_other == 1 and result.rewritten_tokens_other > 0
    assert result.cache_breaks_after_compaction == 0
    compacted, _ = run(FakeEngine(answers=[True]))
    assert compacted.cache_breaks_after_compaction == 1 and compacted.cache_breaks_other == 0


def test_post_tool_check_runs_once_after_the_whole_batch() -> None:
    engine = FakeEngine()
    recorder = Recorder()
    transcript = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call(1), call(2)]},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "tool", "tool_call_id": "stray", "content": "no call asked for this"},
        {"role": "assistant", "content": "done"},
    ]
    HostDriver(TokenMeter(encode=words), observer=recorder).replay(transcript, ReplayTarget(label="f", engine=engine))
    names_ = [(name, data.get("where")) for name, data in recorder.events if name in ("request", "should_compress")]
    assert names_ == [
        ("request", None),
        ("should_compress", "post_tool"),
        ("should_compress", "pre_api"),
        ("request", None),
    ]
