"""Plain helpers of the context_engine unit tests: a scripted summary model and transcript builders.

Imported by the tests (``from .helpers import ...``); fixtures that build on them live in ``conftest.py``.
"""

from __future__ import annotations

import json
import random
from typing import Any

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage_dev.transcripts import make_transcript, tool_output

NEWEST = "Please finally rename parse_header() to parse_head() everywhere and rerun the suite."
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
        self.timeouts: list[float | None] = []  # the timeout each call was given (None: the host's own)

    def __call__(self, prompt: str, runtime: dict[str, Any], timeout: float | None = None) -> str:
        self.prompts.append(prompt)
        self.runtimes.append(runtime)
        self.timeouts.append(timeout)
        if self.script:
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item
        return self.default


def make_engine(
    *, model: Any = None, context_length: int = 64_000, stowage: dict | None = None, compression: dict | None = None
) -> StowageEngineCore:
    """An engine with a small context window so test transcripts overflow it.

    The lean view is off unless the test configures ``view``: these tests
    measure compaction against ``compaction.threshold``, which is the working
    budget only with the view off (tests/context_engine/test_view_*.py cover the view).
    """
    config: dict[str, Any] = {"stowage": {"view": {"enabled": False}}}
    if stowage:
        config["stowage"] = {**config["stowage"], **stowage}
    if compression:
        config["compression"] = compression
    engine = StowageEngineCore(load_settings(config), summary_model=model if model is not None else RecordingModel())
    engine.update_model(
        model="test-model", context_length=context_length, provider="custom", base_url="http://127.0.0.1:1"
    )
    return engine


def tool_call(cid: str, name: str = "terminal", args: Any = None) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args if args is not None else {"command": "ls"})
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_turn(
    cids: list[str], outputs: list[str], name: str = "terminal", args: Any = None, content: str | None = None
) -> list[dict[str, Any]]:
    """An assistant message with (parallel) calls followed by their results."""
    calls = [tool_call(c, name, args) for c in cids]
    msgs: list[dict[str, Any]] = [{"role": "assistant", "content": content, "tool_calls": calls}]
    msgs += [
        {"role": "tool", "tool_call_id": c, "name": name, "content": o} for c, o in zip(cids, outputs, strict=False)
    ]
    return msgs


def history(turns: int = 30, seed: int = 1, system: bool = False) -> list[dict]:
    """A synthetic coding session ending with the user's ``NEWEST`` request: about 70k tokens for 30 turns, over
    the 48k threshold of ``make_engine``'s 64k window."""
    msgs = make_transcript(turns, seed=seed, system=system)
    return msgs + [{"role": "user", "content": NEWEST}, {"role": "assistant", "content": "On it."}]


def add_turn(
    msgs: list[dict],
    rng: random.Random,
    *,
    calls: int = 4,
    chars: int = 6000,
    text: str | None = None,
    prefix: str = "x",
) -> list[dict]:
    """``msgs`` plus one user turn of ``calls`` terminal calls with ``chars``-character outputs and a closing answer."""
    msgs = list(msgs)
    msgs.append({"role": "user", "content": text or f"Another request {rng.random():.6f}"})
    for i in range(calls):
        cid = f"{prefix}{rng.randrange(10**9)}"
        msgs.append(
            {"role": "assistant", "content": None, "tool_calls": [tool_call(cid, args={"command": f"make step{i}"})]}
        )
        msgs.append({"role": "tool", "tool_call_id": cid, "content": tool_output(rng, "terminal", chars)})
    msgs.append({"role": "assistant", "content": "Done with that."})
    return msgs
