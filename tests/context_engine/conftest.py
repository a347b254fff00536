"""Shared fixtures for the context_engine unit tests.

The tests run with ``--import-mode=importlib``, so helpers are handed out as
fixtures rather than imported from a sibling module.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from stowage.context_engine.config import load_settings
from stowage.context_engine.engine import StowageEngineCore

GOOD_SUMMARY = (
    "## Goal\nFix the failing parser tests.\n\n## Progress\n### Done\n- ran pytest\n"
    "### In Progress\n- none\n### Blocked\n- none\n\n## Next Steps\n- continue"
)


class RecordingModel:
    """A fake summary model that records its prompts and replays scripted replies.

    Each scripted item is either a string (returned) or an exception (raised);
    when the script runs out, ``default`` is returned.
    """

    def __init__(self, *script: Any, default: str = GOOD_SUMMARY) -> None:
        self.script = list(script)
        self.default = default
        self.prompts: list[str] = []
        self.runtimes: list[dict[str, Any]] = []

    def __call__(self, prompt: str, runtime: dict[str, Any]) -> str:
        self.prompts.append(prompt)
        self.runtimes.append(runtime)
        if self.script:
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item
        return self.default


def tool_call(cid: str, name: str = "terminal", args: Any = None) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args if args is not None else {"command": "ls"})
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_turn(
    cids: list[str], outputs: list[str], name: str = "terminal", args: Any = None, content: str | None = None
) -> list[dict[str, Any]]:
    """An assistant message with (parallel) calls followed by their results."""
    calls = [tool_call(c, name, args) for c in cids]
    msgs: list[dict[str, Any]] = [{"role": "assistant", "content": content, "tool_calls": calls}]
    msgs += [{"role": "tool", "tool_call_id": c, "name": name, "content": o} for c, o in zip(cids, outputs)]
    return msgs


@pytest.fixture
def recording_model() -> type[RecordingModel]:
    return RecordingModel


@pytest.fixture
def make_engine() -> Callable[..., StowageEngineCore]:
    """An engine with a small context window so test transcripts overflow it.

    The lean view is off unless the test configures ``view``: these tests
    measure compaction against ``compaction.threshold``, which is the working
    budget only with the view off (tests/context_engine/test_view_*.py cover the view).
    """

    def factory(
        *, model: Any = None, context_length: int = 64_000, stowage: dict | None = None, compression: dict | None = None
    ) -> StowageEngineCore:
        config: dict[str, Any] = {"stowage": {"view": {"enabled": False}}}
        if stowage:
            config["stowage"] = {**config["stowage"], **stowage}
        if compression:
            config["compression"] = compression
        engine = StowageEngineCore(
            load_settings(config), summary_model=model if model is not None else RecordingModel()
        )
        engine.update_model(
            model="test-model", context_length=context_length, provider="custom", base_url="http://127.0.0.1:1"
        )
        return engine

    return factory


@pytest.fixture
def helpers():
    class H:
        call = staticmethod(tool_call)
        turn = staticmethod(tool_turn)
        GOOD_SUMMARY = GOOD_SUMMARY

    return H
