"""The summary call through Hermes's auxiliary client.

Going through ``agent.auxiliary_client.call_llm(task="compression", ...)``
means the user's ``auxiliary.compression.*`` config (provider, model,
base_url, timeout, extra_body) applies exactly as for the built-in
compressor.  Every failure is turned into a :class:`SummaryFailure` whose
kind decides what compaction does: auth and quota abort and keep the
messages; everything else falls back to the deterministic summary.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from ..context_engine.host_adapter.summary_call import SummaryFailure, shown

logger = logging.getLogger(__name__)

_QUOTA_MARKERS = ("insufficient_quota", "quota", "billing", "credit", "payment required", "exceeded your current")
_AUTH_MARKERS = (
    "invalid api key",
    "incorrect api key",
    "unauthorized",
    "authentication",
    "permission denied",
    "forbidden",
    "no api key",
    "api key not",
)


def summarize_with_aux(prompt: str, runtime: dict[str, Any], *, timeout: float | None = None) -> str:
    """Send ``prompt`` as one user message to the compression model.

    ``timeout=None`` leaves the deadline to Hermes (``auxiliary.compression.
    timeout`` with its 300 s floor for compression); a number is passed
    explicitly, which Hermes always honours.
    """
    try:
        from agent import auxiliary_client

        call_llm = auxiliary_client.call_llm
    except (ImportError, AttributeError) as exc:
        raise SummaryFailure("no_provider", f"Hermes auxiliary client unavailable: {exc}") from exc
    try:
        with _interrupt_protection(auxiliary_client):
            kwargs: dict[str, Any] = {"timeout": float(timeout)} if timeout else {}
            response = call_llm(
                task="compression", main_runtime=dict(runtime), messages=[{"role": "user", "content": prompt}], **kwargs
            )
    except SummaryFailure:
        raise
    except Exception as exc:  # classified below
        raise classify(exc) from exc
    return _content_of(response)


def _interrupt_protection(module: Any) -> Any:
    """The host's guard against a user interrupt killing the summary call.

    ``aux_interrupt_protection`` appeared in hermes-agent 0.18.0; older hosts
    make the same call without it (an interrupt there cancels the summary,
    which then falls back like any other failure).  Only the guard degrades,
    never the summary.
    """
    guard = getattr(module, "aux_interrupt_protection", None)
    if callable(guard):
        try:
            return guard()
        except Exception:  # a broken guard must not cost the summary
            logger.debug("aux_interrupt_protection unusable; summarizing without it", exc_info=True)
    return contextlib.nullcontext()


def _content_of(response: Any) -> str:
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, TypeError) as exc:
        raise SummaryFailure("garbage", f"summary response has no message: {exc}") from exc
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if content is None:
        return ""
    return content if isinstance(content, str) else str(content)


def classify(exc: BaseException) -> SummaryFailure:
    """Map an exception from ``call_llm`` to a failure kind."""
    text = shown(str(exc))  # masked before the cut below: a key cut in half passes every rule
    lowered = text.lower()
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    name = type(exc).__name__
    short = f"{name}: {text[:300]}" if text else name
    if isinstance(exc, RuntimeError) and "no llm provider configured" in lowered:
        return SummaryFailure("no_provider", "no auxiliary LLM provider configured for compression")
    if status in (401, 403) or any(m in lowered for m in _AUTH_MARKERS) and status in (None, 400, 401, 403):
        return SummaryFailure("auth", f"the summary model rejected the credentials ({short})")
    if status == 402 or any(m in lowered for m in _QUOTA_MARKERS) and status in (None, 400, 402, 403, 429):
        return SummaryFailure("quota", f"the summary model's quota or billing is exhausted ({short})")
    if "timeout" in name.lower() or "timed out" in lowered or status in (408, 504):
        return SummaryFailure("timeout", f"the summary model timed out ({short})")
    if isinstance(exc, json.JSONDecodeError) or "expecting value" in lowered:
        return SummaryFailure("garbage", f"the summary model returned a malformed response ({short})")
    if any(k in name for k in ("Connection", "Network", "Protocol")) or "connection" in lowered:
        return SummaryFailure("network", f"cannot reach the summary model ({short})")
    if status:
        return SummaryFailure("http", f"the summary model answered HTTP {status} ({short})")
    return SummaryFailure("error", short)
