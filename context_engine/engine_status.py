"""The engine's :class:`SessionStatus`, gathered from its rooms (written once, read by every reader)."""

from __future__ import annotations

import logging

from .engine_parts import EngineParts
from .fixed_part import below_fixed_part
from .session_status import COMPACTIONS_SHOWN, SessionStatus, SummaryState
from .status_file import write_session_status
from .trigger import trigger_status

logger = logging.getLogger(__name__)


def status_of(engine: EngineParts) -> SessionStatus:
    last_prompt = max(engine.last_prompt_tokens, 0)  # -1 is the host's "compression just ran"
    search = engine.tool_search.status()
    if engine.host.tool_search_unavailable is not None:
        search.active, search.available, search.reason = False, False, engine.host.tool_search_unavailable
    flags = engine.state.flags
    return SessionStatus(
        engine=engine.name,
        session_id=engine.session_id,
        last_prompt_tokens=last_prompt,
        threshold_tokens=engine.threshold_tokens,
        context_length=engine.context_length,
        trigger=trigger_status(
            engine.threshold_key, engine.threshold_share, engine.threshold_tokens, engine.context_length
        ),
        usage_percent=min(100, last_prompt / engine.context_length * 100) if engine.context_length else 0.0,
        compression_count=engine.compression_count,
        tokenizer=engine.counter.backend,
        tail_budget_tokens=engine.tail_budget_tokens,
        governor=engine.governor.status(),
        store=engine.store_session.status(),
        tool_search=search,
        view=engine.view.status(),
        ahead=engine.ahead.status(engine.settings.compaction.prepare_at),
        compactions=list(engine.compaction_log[-COMPACTIONS_SHOWN:]),
        summary=SummaryState(last_error=flags.summary_error, fallback_used=flags.fallback_used),
        requests=list(engine.request_log),
        host=engine.host.support,
        fixed_part=engine.state.fixed_part.figures() if engine.state.fixed_part.tokens else {},
    )


def publish_status(engine: EngineParts) -> None:
    """Leave this session's figures where ``stowage status`` in another process reads them."""
    try:
        status = status_of(engine)
    except Exception:  # figures must never cost the session anything
        logger.exception("stowage: could not gather the session status")
        return
    _warn_below_fixed_part(engine, status)
    write_session_status(engine.store_session.root, engine.session_id, status)


def _warn_below_fixed_part(engine: EngineParts, status: SessionStatus) -> None:
    """Once per session: a trigger no compaction can get under (the config validates, the request disagrees)."""
    fixed = engine.state.fixed_part
    if fixed.warned:
        return
    warning = below_fixed_part(status.fixed_part, status.threshold_tokens, status.context_length, engine.threshold_key)
    if warning:
        fixed.warned = True
        logger.warning("stowage: %s", warning)
