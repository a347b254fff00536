"""Throw-away plugin used to prove the e2e harness (never shipped).

Tools (toolset ``harness_probe``):

* ``harness_echo(text)`` returns ``{"echo": text}``;
* ``harness_big_output(chars=20000, token="")`` returns ``chars`` characters
  of numbered lines, deterministic, ending with ``END-<token>``;
* ``HARNESS_PROBE_DUMMY_TOOLS=N`` in the environment adds ``N`` inert tools
  ``harness_dummy_<i>`` (to inflate the tool list).

``HARNESS_PROBE_ENGINE=1`` also registers a pass-through context engine
named ``harness_dummy`` (select it with ``context.engine: harness_dummy``);
it never changes messages and records its calls as ``engine.<method>``
events.  Opt-in because the host keeps only the first registered engine.

Every hook call is appended as a JSON line to
``$HERMES_HOME/harness_probe_events.jsonl`` (hook name plus a few scalar
arguments), so a test can see which hooks the host fired.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

TOOLSET = "harness_probe"
_HOOKS = (
    "pre_llm_call",
    "post_tool_call",
    "transform_tool_result",
    "on_session_start",
    "on_session_end",
    "on_session_reset",  # also fired by the dashboard gateway once an agent is built
)
_SCALAR_KEYS = ("tool_name", "tool_call_id", "session_id", "platform", "is_first_turn", "status")


def _events_path() -> Path:
    return Path(os.environ.get("HERMES_HOME", ".")) / "harness_probe_events.jsonl"


def _record(hook: str, kwargs: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
    event: dict[str, Any] = {"hook": hook, **(extra or {})}
    for key in _SCALAR_KEYS:
        if key in kwargs:
            event[key] = kwargs[key]
    if isinstance(kwargs.get("result"), str):
        event["result_len"] = len(kwargs["result"])
    with _events_path().open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(event, default=repr) + "\n")


def _hook(name: str):  # noqa: ANN202 - host callback
    def callback(**kwargs: Any) -> None:
        _record(name, kwargs)
        return None

    return callback


def big_output(chars: int = 20000, token: str = "") -> str:
    """Deterministic numbered lines, exactly *chars* long, ending with END-<token>."""
    tail = f"END-{token}"
    lines: list[str] = []
    size, n = 0, 0
    while size < chars:
        line = f"line {n:06d}: the quick brown fox jumps over the lazy dog\n"
        lines.append(line)
        size += len(line)
        n += 1
    body = "".join(lines)[: max(0, chars - len(tail))]
    return body + tail


def _echo(args: dict[str, Any], **_: Any) -> str:
    return json.dumps({"echo": args.get("text", "")})


def _big(args: dict[str, Any], **_: Any) -> str:
    return big_output(int(args.get("chars", 20000)), str(args.get("token", "")))


def _dummy(args: dict[str, Any], **_: Any) -> str:
    return json.dumps({"ok": True})


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


def _make_engine():  # noqa: ANN202 - imports the host lazily
    from agent.context_engine import ContextEngine

    class HarnessDummyEngine(ContextEngine):
        """Pass-through engine: decides on ``prompt_tokens``, compresses nothing."""

        @property
        def name(self) -> str:
            return "harness_dummy"

        def update_from_response(self, usage: dict[str, Any]) -> None:
            _record("engine.update_from_response", {}, {"prompt_tokens": usage.get("prompt_tokens")})
            self.last_prompt_tokens = int(usage.get("prompt_tokens") or 0)

        def should_compress(self, prompt_tokens: int | None = None) -> bool:
            return bool(prompt_tokens and self.threshold_tokens and prompt_tokens >= self.threshold_tokens)

        def compress(self, messages, current_tokens=None, focus_topic=None, force=False):  # noqa: ANN001, ANN201
            _record("engine.compress", {}, {"focus_topic": focus_topic, "messages": len(messages), "force": force})
            return messages

        def on_session_start(self, session_id: str, **kwargs: Any) -> None:
            _record("engine.on_session_start", {"session_id": session_id})

        def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
            _record("engine.on_session_end", {"session_id": session_id})

    return HarnessDummyEngine()


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    if os.environ.get("HARNESS_PROBE_ENGINE") == "1":
        ctx.register_context_engine(_make_engine())
    ctx.register_tool(
        "harness_echo",
        TOOLSET,
        _schema("harness_echo", "Echo the given text back as JSON.", {"text": {"type": "string"}}, ["text"]),
        _echo,
    )
    ctx.register_tool(
        "harness_big_output",
        TOOLSET,
        _schema(
            "harness_big_output",
            "Return a large deterministic text output (for context-pressure tests).",
            {"chars": {"type": "integer"}, "token": {"type": "string"}},
            [],
        ),
        _big,
    )
    for i in range(int(os.environ.get("HARNESS_PROBE_DUMMY_TOOLS", "0") or 0)):
        name = f"harness_dummy_{i}"
        ctx.register_tool(
            name,
            TOOLSET,
            _schema(name, f"Inert dummy tool number {i} of the harness probe plugin.", {"x": {"type": "string"}}, []),
            _dummy,
        )
    for hook in _HOOKS:
        ctx.register_hook(hook, _hook(hook))
