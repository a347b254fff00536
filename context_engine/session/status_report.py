"""The session's :class:`SessionStatus`, gathered from its parts (written once, read by every reader).

Each part reports its own status dataclass; :class:`StatusReport` (a base
of ``SessionState``) puts them together with the binding's numbers, and
leaves the result where ``stowage status`` in another process reads it.
"""

from __future__ import annotations

import logging

from ..policy.fixed_part import below_fixed_part
from ..policy.trigger import trigger_status
from ..records.host_facts import HostFacts
from ..records.resumed_status import continued
from ..records.session_status import COMPACTIONS_SHOWN, SessionStatus, SummaryState
from ..records.status_file import write_session_status
from ..store_session.session import RECENT_SPILLS
from .limits import Limits
from .parts import SessionParts
from .request_shaping import REQUEST_LOG

logger = logging.getLogger(__name__)


class StatusReport(SessionParts):
    """What this session did and will do, in the one shape every reader gets."""

    def status(self, limits: Limits, host: HostFacts, engine: str) -> SessionStatus:
        """The session's figures over all its runs (a resumed session's earlier ones too); ``engine`` is the
        engine's registered name."""
        last_prompt = max(self.last_prompt_tokens, 0)  # -1 is the host's "compression just ran"
        window = limits.context_length
        search = self.tool_search.status()
        if host.tool_search_unavailable is not None:
            search.active, search.available, search.reason = False, False, host.tool_search_unavailable
        run = SessionStatus(
            engine=engine,
            session_id=self.session_id,
            last_prompt_tokens=last_prompt,
            threshold_tokens=limits.threshold_tokens,
            context_length=window,
            trigger=trigger_status(limits.threshold_key, limits.threshold_share, limits.threshold_tokens, window),
            usage_percent=min(100, last_prompt / window * 100) if window else 0.0,
            compression_count=self.compression_count,
            tokenizer=self.counter.backend,
            tail_budget_tokens=self.tail_budget_tokens(limits),
            governor=self.governor.status(),
            store=self.store.status(),
            tool_search=search,
            view=self.view.status(),
            ahead=self.ahead.status(limits.settings.compaction.prepare_at),
            compactions=list(self.compaction_log[-COMPACTIONS_SHOWN:]),
            summary=SummaryState(last_error=self.flags.summary_error, fallback_used=self.flags.fallback_used),
            requests=list(self.request_log),
            host=host.support,
            fixed_part=self.fixed_part.figures(),
        )
        return continued(self.earlier, run, max_requests=REQUEST_LOG, max_spills=RECENT_SPILLS)

    def publish_status(self, limits: Limits, host: HostFacts, engine: str) -> None:
        """Leave this session's figures where ``stowage status`` in another process reads them.

        Only once the session did something (``StoreSession.activate``): an agent
        built and dropped (Hermes's dashboard chat at each page load) writes nothing.
        """
        if not self.store.active:
            return
        try:
            status = self.status(limits, host, engine)
        except Exception:  # figures must never cost the session anything
            logger.exception("stowage: could not gather the session status")
            return
        self._warn_below_fixed_part(status, limits.threshold_key)
        write_session_status(self.store.root, self.session_id, status)

    def _warn_below_fixed_part(self, status: SessionStatus, threshold_key: str) -> None:
        """Once per session: a trigger no compaction can get under (the config validates, the request disagrees)."""
        fixed = self.fixed_part
        if fixed.warned:
            return
        warning = below_fixed_part(status.fixed_part, status.threshold_tokens, status.context_length, threshold_key)
        if warning:
            fixed.warned = True
            logger.warning("stowage: %s", warning)
