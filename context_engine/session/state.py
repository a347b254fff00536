"""One agent's session state: its parts and figures, and everything the session does with them.

:class:`SessionState` is the session: the engine (``engine.py``) only adapts
the host's calls to it, handing over a :class:`.limits.Limits` snapshot (the
model binding's numbers) and the :class:`..records.host_facts.HostFacts` where a
call needs them.  Its behaviour comes from one base per job, each in its own
module over the shared :class:`.parts.SessionParts` (the parts,
the figures, what a copy for another agent gets):

* :class:`.compaction_run.CompactionRun`: the decision, one compaction, the dry run, the status line;
* :class:`.preparation.Preparation`: the next summary, started ahead;
* :class:`.request_shaping.RequestShaping`: each provider request as sent;
* :class:`.status_report.StatusReport`: the session's status, and its file.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..records.host_facts import HostFacts
from .compaction_run import CompactionRun
from .limits import Limits
from .parts import CompactionFlags
from .preparation import Preparation
from .request_shaping import RequestShaping
from .status_report import StatusReport

__all__ = ["CompactionFlags", "InSession", "SessionState"]


class SessionState(CompactionRun, Preparation, RequestShaping, StatusReport):
    """The session an engine serves (a copy for another agent starts a fresh one)."""

    def end_turn(self, limits: Limits, host: HostFacts, engine: str) -> None:
        """The turn clock ticks: the governor's next turn, the status published."""
        self.governor.end_turn()
        self.publish_status(limits, host, engine)

    def end(self, limits: Limits, host: HostFacts, engine: str) -> None:
        """The session ends: no verdict pending, no summary prepared ahead, status published, the store told."""
        self.governor.verify_pending = False
        self.ahead.discard("session ended")
        self.publish_status(limits, host, engine)
        self.store.end(self.session_id or "")


T = TypeVar("T")


class InSession(Generic[T]):
    """A host-read engine attribute kept in its :class:`SessionState` (a path ``flags.aborted``: in its flags).

    The host reads and writes these figures on the engine object (the
    contract's attribute members); keeping them in the state is what makes a
    copy start with fresh ones.  The session's parts have one name only, on
    the state (``engine.state.governor``).
    """

    def __init__(self, path: str = "") -> None:
        self.path = path

    def __set_name__(self, owner: type, name: str) -> None:
        self.path = self.path or name

    def __get__(self, engine: Any, owner: Any = None) -> T:
        if engine is None:
            return self  # type: ignore[return-value]  # class access (the host's hasattr probes)
        holder, _, name = self.path.rpartition(".")
        return getattr(engine.state.flags if holder else engine.state, name)

    def __set__(self, engine: Any, value: T) -> None:
        holder, _, name = self.path.rpartition(".")
        setattr(engine.state.flags if holder else engine.state, name, value)
