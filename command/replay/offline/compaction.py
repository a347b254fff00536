"""The host's side of a compaction (Hermes 0.19.0 ``agent/conversation_compression.py``), as pure steps.

The host loop (:mod:`.driver`) calls ``compress`` and counts; these say what
the host passes, how it keeps a human turn in the compacted history, and
what it writes on the engine after a boundary.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, Callable, Mapping

from .wire import text_of

SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY", "[PRIOR CONTEXT")
NO_USER_MARKER = (
    "Continue from the compressed conversation context above. "
    "This marker exists because no human user turn was available."
)


def supported_kwargs(method: Any) -> set[str]:
    """The keywords of ``compress`` the host passes (all of them to a ``**kwargs`` signature)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return set()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return {"current_tokens", "focus_topic", "force", "memory_context"}
    return {p.name for p in parameters}


def compress_kwargs(supported: set[str], approx_tokens: int | None) -> dict[str, Any]:
    """What an automatic compaction passes: the rough token figure, no focus topic, not forced."""
    kwargs: dict[str, Any] = {}
    if "current_tokens" in supported:
        kwargs["current_tokens"] = approx_tokens
    if "focus_topic" in supported:
        kwargs["focus_topic"] = None
    if "force" in supported:
        kwargs["force"] = False
    return kwargs


def is_real_user(message: Any, is_summary_text: Callable[[str], bool] | None = None) -> bool:
    """A human turn: a user message with text that is neither a summary nor a synthetic snapshot."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    if message.get("_todo_snapshot_synthetic"):
        return False
    text = text_of(message).strip()
    if not text:
        return False
    if is_summary_text is not None:
        return not is_summary_text(text)
    return not text.startswith(SUMMARY_PREFIXES)


def ensure_user_turn(
    original: list[dict[str, Any]],
    compressed: list[dict[str, Any]],
    is_summary_text: Callable[[str], bool] | None = None,
) -> str | None:
    """``_ensure_compressed_has_user_turn``: keep a human turn in ``compressed`` (edited in place).

    Returns how (``marker``, ``inserted``, ``appended``, ``merged``), or None when one was there."""
    if any(is_real_user(m, is_summary_text) for m in compressed):
        return None
    anchor = next((copy.deepcopy(m) for m in reversed(original) if is_real_user(m, is_summary_text)), None)
    if anchor is None:
        compressed.append({"role": "user", "content": NO_USER_MARKER})
        return "marker"
    for index, message in enumerate(compressed):
        if message.get("role") == "assistant" and (index == 0 or compressed[index - 1].get("role") != "user"):
            compressed.insert(index, anchor)
            return "inserted"
    if not compressed or compressed[-1].get("role") != "user":
        compressed.append(anchor)
        return "appended"
    last = compressed[-1]
    compressed[-1] = {**last, "content": f"{text_of(anchor)}\n\n{text_of(last)}"}
    return "merged"


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.20.1"`` -> ``(0, 20, 1)`` (non-digits ignored), to compare host versions."""
    parts = []
    for part in version.split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def after_boundary(
    engine: Any,
    session_id: str,
    rough_tokens: int,
    *,
    progress: bool,
    fallback: bool,
    feasibility_keyword: bool = False,
) -> None:
    """The host's writes after a compaction made a boundary (same session id, continued in place);
    0.20+ hosts pass ``feasibility_skip=False`` to ``record_completed_compaction``."""
    start = getattr(engine, "on_session_start", None)
    if callable(start):
        try:
            start(
                session_id,
                boundary_reason="compression",
                old_session_id=session_id,
                platform="cli",
                conversation_id=None,
            )
        except Exception:  # noqa: BLE001 - the host logs at debug level and goes on
            pass
    engine.last_compression_rough_tokens = rough_tokens
    engine.last_prompt_tokens = -1
    engine.last_completion_tokens = 0
    engine.awaiting_real_usage_after_compression = True
    if progress:
        record = getattr(type(engine), "record_completed_compaction", None)
        if callable(record) and feasibility_keyword:
            record(engine, used_fallback=fallback, feasibility_skip=False)
        elif callable(record):
            record(engine, used_fallback=fallback)
        else:
            engine._verify_compaction_cleared_threshold = True
