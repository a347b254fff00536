"""No request past the window because of Stowage, and one summary call per window (issue 40, items 2 and 4).

The scripted provider counts every prompt with the tokenizer, reports that
count as its usage (or no usage at all) and refuses a prompt over its window
with the HTTP 400 real providers give.  Over the trigger the turn may go on
while a summary is written, but only while the request as it will be sent,
counted with the tokenizer, stays under the ceiling (0.85 of the window): a
Chinese paste (characters/4 undercounts it about 2.5-fold here) compacts
first, and a provider that never reports usage still compacts at the trigger.
A hung summary model with a preparation in flight gets exactly one call.

Before the fix (9579bc0) these failed on 0.19.0 (4 of 4) and 0.22.2 (3 of 4: its own estimate counts a Chinese
character as one token, so it compacted that paste itself); on 0.13.0 all four passed already: without request
middleware there is no lean view and no summary started during a turn, so it compacts at the trigger.
"""

from __future__ import annotations

import base64
import random
from typing import Any

import pytest

from stowage.context_engine.chat.tokenizer_loader import load_encoding
from stowage.context_engine.config.schema import KEYS_BY_PATH
from stowage.context_engine.policy.rules import AWAIT_CEILING
from stowage_dev.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply, ToolCall
from stowage_dev.runner import DriverResult, Scenario, run_scenario

from .stowage_session import assert_valid_request, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

WINDOW = 65_536  # the smallest window Hermes runs with: small pastes fill it
TRIGGER = int(WINDOW * KEYS_BY_PATH["view.compact_at"].default)
CEILING = int(WINDOW * AWAIT_CEILING)
SUMMARY = "## Goal\nKeep going (SUMMARY-FITS).\n\n## Progress\n### Done\n- read the notes\n\n## Next Steps\n- go on"
WORDS = (
    "the quick brown fox jumps over a lazy dog while seven engineers review logs tests builds and deploys "
    "carefully before the release window closes on friday afternoon"
).split()
# common Chinese sentences: o200k counts about 0.6 tokens a character, characters/4 about 0.25
CHINESE = [
    s + "。"
    for s in (
        "我们今天讨论项目的进展情况。系统需要处理大量的数据和请求。请检查配置文件是否正确。这个问题已经在上一个版本中修复了。"
        "用户希望在界面上看到更多的信息。测试结果表明性能有明显提高。下一步我们将优化数据库查询。会议记录已经发送给所有成员。"
        "服务器在夜间自动备份日志。新的功能将在下个月发布。"
    ).split("。")
    if s
]


def _encoding() -> Any:
    encoding = load_encoding("o200k_base").encoding
    assert encoding is not None, "the test sizes its texts with tiktoken"
    return encoding


def text_of(tokens: int, pieces: list[str], joiner: str, seed: int) -> str:
    """A text of about ``tokens`` tokens (o200k), from ``pieces`` in a seeded random order."""
    encoding, rng = _encoding(), random.Random(seed)
    out: list[str] = []
    while True:
        chunk = joiner.join(rng.choice(pieces) for _ in range(200))
        out.append(chunk)
        if len(encoding.encode_ordinary(joiner.join(out))) >= tokens:
            return joiner.join(out)


def english(tokens: int, seed: int) -> str:
    return text_of(tokens, WORDS, " ", seed)


def chinese(tokens: int, seed: int) -> str:
    return text_of(tokens, CHINESE, "", seed)


def base64_blob(tokens: int, seed: int) -> str:
    """Base64 of random bytes: o200k counts about 0.68 tokens a character, every host's estimate 0.25."""
    rng = random.Random(seed)
    blob = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(int(tokens * 1.1)))).decode()
    encoding = _encoding()
    while len(encoding.encode_ordinary(blob)) > tokens:
        blob = blob[: int(len(blob) * 0.97)]
    return blob


PASTES = {"chinese": chinese, "base64": base64_blob}


def counting_provider(fake_llm: FakeLLMServer, *, reports_usage: bool = True) -> None:
    """The scripted server as a provider with a WINDOW-token window that counts with the tokenizer."""
    fake_llm.context_length = WINDOW
    fake_llm.window = WINDOW
    fake_llm.reports_usage = reports_usage


def window_home(make_home, **stowage: Any) -> Any:
    config = {"model": {"context_length": WINDOW}, "stowage": {"compaction": {"summary_timeout_seconds": 60}}}
    for section, values in stowage.items():
        config["stowage"].setdefault(section, {}).update(values)
    return stowage_home(make_home, config=config)


def main_sizes(fake_llm: FakeLLMServer) -> list[int]:
    return [r.prompt_tokens or 0 for r in fake_llm.main_requests()]


def assert_fits(fake_llm: FakeLLMServer, result: DriverResult, turns: dict[str, str], label: str) -> None:
    """No request refused or over the ceiling, every turn answered as scripted; the figures printed."""
    sizes = main_sizes(fake_llm)
    refused = fake_llm.refused_requests()
    print(
        f"{label}: largest request {max(sizes):,} tokens (window {WINDOW:,}, ceiling {CEILING:,}, trigger "
        f"{TRIGGER:,}); {len(refused)} refused; summary calls {len(fake_llm.summary_requests())}; "
        f"compactions {result.final_engine.get('status', {}).get('compression_count')}"
    )
    assert refused == [], [r.prompt_tokens for r in refused]
    assert max(sizes) <= CEILING, sizes
    for step, answer in turns.items():
        assert result.step(step)["final_response"] == answer, result.step(step)
    for request in fake_llm.main_requests():
        assert_valid_request(request)


def compacted(request: RecordedRequest) -> bool:
    return "SUMMARY-FITS" in request.text or "STOWAGE CONTEXT SUMMARY" in request.text


# -- a Chinese paste while a summary is being written ---------------------------------------------------------------
FILL_TOKENS = 4_000
# Hermes's system prompt and tools are 13k to 15k tokens: after the compaction the paste fits under the ceiling, and
# under 0.22.2's own estimate (one token a Chinese character, 1.6 times o200k), which fails a turn closed over the
# window; before it, the request passes the ceiling (base64: the window)
PASTE_TOKENS = {"chinese": 20_000, "base64": 24_000}
PASTE_FILLS, PASTE_FILL_TOKENS = 10, 3_000  # the compaction keeps the first turns (protect_first_n) and the last
SUMMARY_DELAY = 12.0


@pytest.mark.parametrize("kind", sorted(PASTES))
def test_a_dense_paste_while_a_summary_is_written_compacts_first(fake_llm: FakeLLMServer, make_home, kind) -> None:
    """Over the trigger with a summary being written, a Chinese document (or base64) pushes the request past the
    window.

    Characters/4 judged it under the ceiling and let it go (the provider refused it); counted with the
    tokenizer, the request compacts first and the paste is sent whole after the summary.
    """
    counting_provider(fake_llm)
    # prepared at a turn end from 0.6 of the trigger: the summary is being written when the paste comes
    home = window_home(make_home, compaction={"prepare_at": 0.6})
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY, delay=SUMMARY_DELAY), times=None)
    scenario = Scenario()
    turns = {}
    for i in range(PASTE_FILLS):
        fake_llm.on(Match.user_turn(f"FILL-{i} "), Reply.say(f"noted {i}"))
        scenario.turn(f"FILL-{i} notes for later: {english(PASTE_FILL_TOKENS, seed=i)}", id=f"fill{i}")
        turns[f"fill{i}"] = f"noted {i}"
    fake_llm.on(Match.user_turn("PASTE "), Reply.say("paste read"), times=None)
    scenario.turn(f"PASTE this document please: {PASTES[kind](PASTE_TOKENS[kind], seed=99)}", id="paste")
    scenario.turn("after the paste", id="after")
    turns.update(paste="paste read", after="OK (default reply)")

    result = run_scenario(home, scenario, check=True, timeout=600)

    assert_fits(fake_llm, result, turns, f"{kind} paste")
    paste_requests = [r for r in fake_llm.main_requests() if "PASTE this document" in r.text]
    assert paste_requests and all(compacted(r) for r in paste_requests)  # the compaction came first
    pasted = [r for r in paste_requests if "PASTE this document" in r.last_user_text]
    assert pasted and len(_encoding().encode_ordinary(pasted[0].last_user_text)) >= PASTE_TOKENS[kind] * 0.97  # whole


# -- a provider that never reports usage ----------------------------------------------------------------------------
NO_USAGE_FILLS = 14


def test_a_provider_without_usage_compacts_at_the_trigger(fake_llm: FakeLLMServer, make_home) -> None:
    """No usage ever comes back: the requests are counted with the tokenizer, and the session compacts near the
    trigger instead of growing past the ceiling (and the window)."""
    counting_provider(fake_llm, reports_usage=False)
    home = window_home(make_home)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY), times=None)
    scenario = Scenario()
    turns = {}
    for i in range(NO_USAGE_FILLS):
        fake_llm.on(Match.user_turn(f"FILL-{i} "), Reply.say(f"noted {i}"))
        scenario.turn(f"FILL-{i} notes for later: {english(FILL_TOKENS, seed=i)}", id=f"fill{i}")
        turns[f"fill{i}"] = f"noted {i}"

    result = run_scenario(home, scenario, check=True, timeout=600)

    assert_fits(fake_llm, result, turns, "no usage")
    requests = fake_llm.main_requests()
    first_over = next(i for i, r in enumerate(requests) if (r.prompt_tokens or 0) >= TRIGGER)
    first_compacted = next(i for i, r in enumerate(requests) if compacted(r))
    print(f"no usage: first request over the trigger #{first_over}, first compacted request #{first_compacted}")
    # as with usage: the requests over the trigger that go on before a summary is started and written
    assert first_compacted <= first_over + 4, (first_over, first_compacted, main_sizes(fake_llm))


# -- a hung summary model with a preparation in flight -------------------------------------------------------------
HUNG_SECONDS = 600.0  # the summary model never answers within the test
DEADLINE = 45  # stowage.compaction.summary_timeout_seconds: the compaction's deadline and the call's timeout


def test_a_hung_summary_model_is_called_once(fake_llm: FakeLLMServer, make_home) -> None:
    """A preparation is in flight when the compaction comes, for a window the new turn has outgrown: the
    compaction waits for that call within its deadline and writes the fallback summary, never calling again."""
    home = stowage_home(make_home, config={"stowage": {"compaction": {"summary_timeout_seconds": DEADLINE}}})
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY, delay=HUNG_SECONDS), times=None)
    script_warm_up(fake_llm, 4)
    # the last warm-up turn reports a request in the band where a summary is prepared at its end
    band = int(128_000 * KEYS_BY_PATH["view.compact_at"].default * 0.93)
    fake_llm.on(Match.user_turn("NEAR "), Reply.say("near", usage={"prompt_tokens": band}))
    # the next turn outgrows the prepared window (a long message, older than the compacting turn's own), and the
    # one after reports a request over the ceiling: it compacts at once, for another window than the one in flight
    fake_llm.on(Match.user_turn("LONG "), Reply.say("long noted"))
    fake_llm.on(
        Match.user_turn("JUMP "),
        Reply.tool(ToolCall("harness_echo", {"text": "jump"}, id="call_jump"), usage={"prompt_tokens": 112_000}),
    )
    fake_llm.on(Match.after_tool_result("call_jump"), Reply.say("jump finished"))
    scenario = warm_up(Scenario(), 4).turn("NEAR the trigger", id="near")
    scenario.turn(f"LONG notes to keep: {english(15_000, seed=5)}", id="long")
    scenario.turn("JUMP now", id="jump").turn("after", id="after")

    result = run_scenario(home, scenario, check=True, timeout=600)

    # Hermes's call_llm answers a timed-out call by trying its fallback provider (here the same server) with the
    # same prompt: the host's policy, not a second call of Stowage's; Stowage's calls are the distinct prompts
    calls = fake_llm.summary_requests()
    prompts = {r.text for r in calls}
    status = result.step("after")["engine"]["status"]
    compactions = [c for c in status["compactions"] if c["result"] in ("compacted", "fallback")]
    print(
        f"hung summary model: {len(prompts)} summary call(s) ({len(calls)} on the wire); compactions "
        + ", ".join(f"{c['result']} ({c['summary_source']}, compress() {c['wait_s']} s)" for c in compactions)
        + f"; ahead {status['ahead']}"
    )
    assert len(prompts) == 1, [c.index for c in calls]
    assert compactions and compactions[0]["result"] == "fallback", compactions
    assert compactions[0]["wait_s"] <= DEADLINE + 5  # one timeout, not two
    assert result.step("jump")["final_response"] == "jump finished"
    assert result.step("after")["final_response"] == "OK (default reply)"
