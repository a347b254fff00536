"""Realistic agent transcripts for tests and benchmarks.

A transcript is a list of OpenAI-style message dicts as Hermes keeps them
(no system prompt on automatic compaction paths): user turns, assistant
turns with (parallel) tool calls, tool results of varied size and shape
(logs, JSON, file reads, errors), occasional images and multi-part content.
Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from typing import Any

Message = dict[str, Any]

_TOOLS = ("terminal", "read_file", "web_search", "search_files", "patch", "mcp__github__list_issues")
_WORDS = (
    "the",
    "module",
    "returns",
    "value",
    "config",
    "error",
    "handler",
    "request",
    "cache",
    "token",
    "file",
    "build",
    "test",
    "user",
    "session",
    "retry",
    "index",
    "parser",
    "timeout",
    "result",
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def tool_output(rng: random.Random, tool: str, size_chars: int) -> str:
    """A tool output of roughly ``size_chars`` characters, shaped by tool."""
    if tool == "terminal":
        lines = [f"[{i:05d}] {_sentence(rng, 8)}" for i in range(max(1, size_chars // 60))]
        if rng.random() < 0.4:
            lines.insert(rng.randrange(len(lines)), "ERROR: test_parser failed: AssertionError: expected 3, got 4")
        return json.dumps({"output": "\n".join(lines), "exit_code": rng.choice([0, 0, 1])})
    if tool in ("web_search", "mcp__github__list_issues"):
        items = [
            {"id": i, "title": _sentence(rng, 6), "body": _sentence(rng, 20)} for i in range(max(1, size_chars // 180))
        ]
        return json.dumps({"results": items})
    if tool == "read_file":
        return "\n".join(
            f"{i + 1:5d}|    def fn_{i}(self): return {rng.randint(0, 99)}  # {_sentence(rng, 5)}"
            for i in range(max(1, size_chars // 70))
        )
    return "\n".join(_sentence(rng, 10) for _ in range(max(1, size_chars // 70)))


def _arguments(rng: random.Random, tool: str, turn: int) -> dict[str, Any]:
    if tool == "terminal":
        return {"command": f"pytest -q tests/test_mod{turn}.py -k case_{rng.randint(0, 9)}"}
    if tool == "read_file":
        return {"path": f"src/pkg/mod{turn}.py", "offset": 1, "limit": 400}
    if tool == "patch":
        return {"path": f"src/pkg/mod{turn}.py", "old": _sentence(rng, 20), "new": _sentence(rng, 30) * 3}
    return {"query": _sentence(rng, 5)}


def make_transcript(
    turns: int, *, seed: int = 0, output_chars: int = 3000, parallel: int = 2, images: bool = True, system: bool = False
) -> list[Message]:
    """``turns`` user turns, each with tool work and a final answer."""
    rng = random.Random(seed)
    messages: list[Message] = []
    if system:
        messages.append({"role": "system", "content": "You are a helpful coding agent."})
    call_number = 0
    for turn in range(turns):
        text = f"Turn {turn}: please fix the failing test in src/pkg/mod{turn}.py and report back."
        if images and rng.random() < 0.1:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": text},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 40}},
                    ],
                }
            )
        else:
            messages.append({"role": "user", "content": text})
        for _step in range(rng.randint(1, 3)):
            calls = []
            for _ in range(rng.randint(1, parallel)):
                tool = rng.choice(_TOOLS)
                call_number += 1
                calls.append(
                    {
                        "id": f"call_{call_number}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(_arguments(rng, tool, turn))},
                    }
                )
            messages.append(
                {"role": "assistant", "content": _sentence(rng, 6) if rng.random() < 0.3 else None, "tool_calls": calls}
            )
            for call in calls:
                size = int(output_chars * rng.uniform(0.2, 2.0))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "name": call["function"]["name"],
                        "content": tool_output(rng, call["function"]["name"], size),
                    }
                )
        messages.append({"role": "assistant", "content": f"Done with turn {turn}: {_sentence(rng, 12)}"})
    return messages


def transcript_of_tokens(target_tokens: int, *, seed: int = 0) -> list[Message]:
    """A transcript of roughly ``target_tokens`` tokens (4 chars per token)."""
    turns = 1
    while True:
        messages = make_transcript(turns, seed=seed)
        chars = sum(len(json.dumps(m)) for m in messages)
        if chars // 4 >= target_tokens:
            return messages
        turns = max(turns + 1, int(turns * target_tokens * 4 / max(chars, 1)))
