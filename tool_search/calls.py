"""A ``stowage_tool_call`` with ``calls: [...]``, run for one session.

A single bridged call is rewritten by the host glue into a direct call of the
tool before the host executes it. A batch cannot be: one tool call in the
model's answer cannot become several without inventing call ids the model
never made. So a batch reaches the engine as a ``stowage_tool_call`` and each
entry is run here, one after the other, through the session's dispatcher
(in Hermes, ``model_tools.handle_function_call``: ``pre_tool_call`` hooks and
block/approve directives, the tool, ``post_tool_call`` and
``transform_tool_result``, i.e. Stowage's spill, all with the real tool name).
Each entry is scoped exactly like a single call: a name outside the session's
catalog is refused and never runs; the other entries still do.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .batch import BatchError, call_slots, run_calls
from .bridges import BridgeError


def call_batch(
    session: Any, args: Mapping[str, Any], dispatch: Callable[[str, dict[str, Any]], str] | None
) -> dict[str, Any]:
    """Answer of a batched call: per entry, its tool's result or its error."""
    if getattr(session, "service", None) is None:
        return {"error": "no tools are deferred in this session; call tools directly by name"}
    try:
        slots = call_slots(args)
    except BatchError as exc:
        return {"error": str(exc)}
    assert slots is not None

    def resolve(entry: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        return session.resolve_call({"name": entry.get("name"), "arguments": entry.get("arguments")})

    def run(tool: str, arguments: dict[str, Any]) -> str:
        session.calls += 1
        return dispatch(tool, arguments)  # type: ignore[misc]

    return run_calls(slots, resolve, run if dispatch is not None else None, BridgeError)
