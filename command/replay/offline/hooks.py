"""The host's plugin call sites the replay plays: ``llm_request`` middleware and ``transform_tool_result``.

As Hermes 0.19.0 calls them: each middleware sees the current request (a
new message list whose message dicts are shared, so a middleware must not
mutate them in place) with the host's context keywords, a ``{"request":
{...}}`` return replaces the request and anything else keeps it, an
exception is counted and skipped; the first tool-result hook returning a
``str`` replaces the result, and a failing hook is skipped (fail-open).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence


def apply_llm_request_middleware(
    middlewares: Sequence[Callable[..., Any]], request: dict[str, Any], **context: Any
) -> tuple[dict[str, Any], bool, int]:
    """(the request as sent, whether any middleware replaced it, how many raised)."""
    original = {**request, "messages": list(request["messages"])}
    current = request
    changed = False
    errors = 0
    for middleware in middlewares:
        try:
            result = middleware(
                request={**current, "messages": list(current.get("messages") or [])},
                original_request=original,
                **context,
            )
        except Exception:  # noqa: BLE001 - the host logs and goes on with the current request
            errors += 1
            continue
        if isinstance(result, dict) and isinstance(result.get("request"), dict):
            current = result["request"]
            changed = True
    return current, changed, errors


def transform_tool_result(hooks: Sequence[Callable[..., Any]], **call: Any) -> str | None:
    """The replacement text of the first hook that returns one, else None (the result stays)."""
    for hook in hooks:
        try:
            replaced = hook(**call, duration_ms=0, status="ok", error_type=None, error_message=None)
        except Exception:  # noqa: BLE001 - fail-open, like the host
            continue
        if isinstance(replaced, str):
            return replaced
    return None
