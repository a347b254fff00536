"""Shared building blocks of the Stowage end-to-end tests.

Warm-up turns make real history: each calls the harness probe's
``harness_big_output`` tool (about 4k tokens of output), so Stowage's token
budgets see actual content, not only a faked usage figure.
"""

from __future__ import annotations

from typing import Any

from stowage.context_engine.chat.validate import validate_messages
from stowage.host.host_support import assess, installed_version
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import Scenario

SECRET = "sk-proj-PLANTEDsecret0123456789abcdef"
OUTPUT_CHARS = 16_000

# Small budgets so a handful of warm-up turns is enough to compact; the spill
# threshold is raised so the warm-up outputs stay in the window to be compacted
# (spill has its own tests). A compaction keeps only the hot zone: the default
# 16k-token tail would keep most of these short sessions (its own tests are
# tests/e2e/test_stowage_compaction_tail.py and tests/context_engine/test_engine.py).
COMPACT_CONFIG: dict[str, Any] = {
    "stowage": {
        "view": {"compact_tail_tokens": 0},
        "compaction": {"target_ratio": 0.05, "protect_last_n": 4, "summary_timeout_seconds": 3},
        "spill": {"threshold_tokens": 100_000},
    },
    "auxiliary": {"transient_retries": 0},
    "agent": {"api_max_retries": 1},
}


def stowage_home(make_home, *, route: str = "entrypoint", config: dict[str, Any] | None = None) -> HermesHome:
    merged = _merge(COMPACT_CONFIG, config or {})
    home = make_home(engine="stowage", plugins=["stowage"], config=merged, stowage_route=route)
    home.install_harness_probe()
    return home


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def script_warm_up(fake_llm: FakeLLMServer, turns: int, prefix: str = "WARM") -> None:
    """Each ``<prefix>-i`` turn runs harness_big_output once, then answers."""
    for i in range(turns):
        call_id = f"call_{prefix.lower()}_{i}"
        fake_llm.on(
            Match.user_turn(f"{prefix}-{i} "),
            Reply.tool(ToolCall("harness_big_output", {"chars": OUTPUT_CHARS, "token": f"{prefix}{i}"}, id=call_id)),
        )
        fake_llm.on(Match.after_tool_result(call_id), Reply.say(f"{prefix.lower()} {i} done: output inspected"))


def warm_up(scenario: Scenario, turns: int, prefix: str = "WARM", secret_turn: int | None = 0) -> Scenario:
    for i in range(turns):
        text = f"{prefix}-{i} please inspect the big output"
        if secret_turn == i:
            text += f" (my deploy key is {SECRET})"
        scenario.turn(text)
    return scenario


# the running host's pre_api_request hook brings the live history (0.17+): a summary can be prepared during a turn
MID_TURN = not any("prepared during a turn" in m for m in assess(installed_version()).missing)
BIG_TURN_TOKENS = 112_000  # over 0.85 of the 128k window (policy.rules.AWAIT_CEILING): the compaction runs at once


def script_big_turn(fake_llm: FakeLLMServer, marker: str = "BIG", prompt_tokens: int = BIG_TURN_TOKENS) -> str:
    """The turn whose tool-call response reports usage over the threshold, near the window: it compacts at once.

    Under the ceiling a single step over the trigger lets the turn go on while a summary is written
    (test_host_smoke's jump case passes 100,000 for that).
    """
    call_id = f"call_{marker.lower()}"
    fake_llm.on(
        Match.user_turn(marker),
        Reply.tool(ToolCall("harness_echo", {"text": marker}, id=call_id), usage={"prompt_tokens": prompt_tokens}),
    )
    fake_llm.on(Match.after_tool_result(call_id), Reply.say(f"{marker} finished"))
    return call_id


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") != "system"]


def assert_valid_request(request: Any) -> None:
    """A request the strictest providers accept (system prompt aside)."""
    problems = validate_messages(conversation(request.messages), "strict")
    assert problems == [], problems
    for message in request.messages:
        assert not any(key.startswith("_") for key in message), f"internal key sent to provider: {message.keys()}"
