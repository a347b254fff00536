"""Synthetic sessions shaped by a real engine's lean view, for the view's pin tests (quote pins, edit pins).

Imported by the tests (``from .view_sessions import ...``).
"""

from __future__ import annotations

import json
from typing import Any

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore

VIEW = {"hot_tokens": 1000, "step_tokens": 1000, "pin_turns": 3}


def make(home: Any, **view: Any) -> StowageEngineCore:
    engine = StowageEngineCore(load_settings({"stowage": {"view": {**VIEW, **view}}}))
    engine.update_model("m", 128_000)
    engine.on_session_start("s1", hermes_home=str(home))
    return engine


def output(n: int, chars: int = 2400) -> str:
    """A source listing whose only distinctive names are ``helper_<n>`` and ``src/module_<n>.py``."""
    lines = [f"# src/module_{n}.py", f"def helper_{n}(value):"]
    lines += [f"    total = total + {i}  # line {i} of the listing" for i in range(chars // 44)]
    return "\n".join(lines)


def session(steps: int, quotes: dict[int, int], edits: dict[int, int] | None = None) -> list[dict[str, Any]]:
    """``steps`` tool rounds; round ``k`` in ``quotes`` runs a command naming ``helper_<quotes[k]>``.

    Other rounds read ``src/module_<k>.py``; a round in ``edits`` edits ``src/module_<edits[k]>.py`` instead.
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Fix the parser."},
    ]
    for k in range(steps):
        if k in quotes:
            command = f"grep -n helper_{quotes[k]} tests"
        elif edits and k in edits:
            command = f"sed -i 's/total/sum/' src/module_{edits[k]}.py"
        else:
            command = f"cat src/module_{k}.py"
        messages.append(
            {
                "role": "assistant",
                "content": f"step {k}",
                "tool_calls": [
                    {
                        "id": f"c{k}",
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": output(k)})
    return messages


def shape(engine: StowageEngineCore, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return engine.shape_request([], messages).messages


def output_index(messages: list[dict[str, Any]], k: int) -> int:
    return next(i for i, m in enumerate(messages) if m.get("tool_call_id") == f"c{k}")
