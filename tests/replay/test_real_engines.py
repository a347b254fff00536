"""A real trajectory through both real engines: the built-in from hermes-agent 0.19.0 and Stowage.

Invariants only (no timing): every billed request is exactly what the last
middleware returned (or the driver's request when none changed it), its
count is the count of that request, Stowage's compactions are the engine's
own count, no request is over the window, and the rough estimates match the
host's own functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stowage.command.replay.offline import (
    HostDriver,
    Observer,
    StandInSummarizer,
    TokenMeter,
    chain_sessions,
    read_transcripts,
)
from stowage.command.replay.offline.billing import RequestBiller
from stowage.command.replay.offline.rough import RoughEstimator

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "agent-trajectories.jsonl.gz"
WINDOW = 64_000  # the host's minimum: both engines compact on three trajectories, whatever Stowage's budget


@pytest.fixture()
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture(scope="module")
def session() -> Any:
    if not DATA.is_file():
        pytest.skip(f"trajectory data not found at {DATA}")
    # three trajectories: long enough for compactions at a 64k window
    return next(chain_sessions(read_transcripts(DATA, limit=3), chain=3))


class Requests(Observer):
    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], int]] = []
        self.compressions: list[str] = []

    def event(self, name: str, **data: Any) -> None:
        if name == "request":
            self.sent.append((data["request"], data["tokens"]))
        elif name == "compress":
            self.compressions.append(data["outcome"])


def recording(middleware: Any, returned: list[Any]) -> Any:
    def wrapper(**kwargs: Any) -> Any:
        result = middleware(**kwargs)
        returned.append(
            result["request"] if isinstance(result, dict) and isinstance(result.get("request"), dict) else None
        )
        return result

    return wrapper


def test_both_real_engines_replay_a_real_session(session: Any, hermes_home: Path) -> None:
    from stowage.command.replay.hermes_engines import FALLBACK_TOOLS, StowageHost, builtin_target

    meter = TokenMeter()
    tools = FALLBACK_TOOLS
    results = {}
    for label in ("built-in", "stowage"):
        observer = Requests()
        driver = HostDriver(meter, window=WINDOW, observer=observer)
        summarizer = StandInSummarizer(meter.count_text)
        if label == "built-in":
            default = builtin_target(summarizer, "defaults")  # the host's defaults at a 128k window
            assert default.engine.threshold_tokens == 96_000  # 0.50 raised to 0.75 below a 512K window
            assert (default.engine.protect_first_n, default.engine.protect_last_n) == (3, 20)
            default.close()
            target = builtin_target(summarizer, session.id, tools=tools, window=WINDOW)
        else:
            host = StowageHost({}, home=hermes_home, tools=tools, window=WINDOW)
            target = host.target(summarizer, session.id)
            assert target.middlewares, "Stowage registers llm_request middleware"
        returned: list[Any] = []
        target.middlewares = tuple(recording(m, returned) for m in target.middlewares)
        count_before = int(getattr(target.engine, "compression_count", 0))
        result = driver.replay(session.messages, target)  # closes the target
        results[label] = result

        assert result.bill.requests == len(observer.sent) > 0
        assert result.over_window_requests == 0
        assert all(tokens <= WINDOW for _, tokens in observer.sent)
        assert result.compactions == observer.compressions.count("boundary")
        assert result.compactions == result.engine_compression_count - count_before
        assert result.bill.summary_calls == len(result.summary_prompt_tokens)
        assert result.bill.billed_tokens == result.bill.prompt_tokens + result.bill.summary_tokens
        # every billed request is what the middleware chain returned, counted as sent
        check = RequestBiller(meter)
        per_call = len(target.middlewares)
        for index, (request, tokens) in enumerate(observer.sent):
            if per_call:
                outputs = [r for r in returned[index * per_call : (index + 1) * per_call] if r is not None]
                if outputs:
                    assert request is outputs[-1]
            assert check.bill(request).tokens == tokens
        if label == "stowage":
            assert result.middleware_errors == 0
    assert results["stowage"].compactions > 0 and results["built-in"].compactions > 0
    assert results["stowage"].bill.requests == results["built-in"].bill.requests  # same transcript, same calls


def test_rough_estimates_match_the_host(session: Any) -> None:
    from agent.model_metadata import (
        _estimate_tools_tokens_rough,
        estimate_messages_tokens_rough,
        estimate_request_tokens_rough,
    )

    from stowage.command.replay.hermes_engines import FALLBACK_TOOLS

    messages = [m for m in session.messages if m["role"] != "system"][:200]
    rough = RoughEstimator()
    assert rough.messages(messages) == estimate_messages_tokens_rough(messages)
    assert rough.tools(FALLBACK_TOOLS) == _estimate_tools_tokens_rough(FALLBACK_TOOLS)
    system = session.messages[0]["content"]
    assert rough.request(messages, system_prompt=system, tools=FALLBACK_TOOLS) == estimate_request_tokens_rough(
        messages, system_prompt=system, tools=FALLBACK_TOOLS
    )
