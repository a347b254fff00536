"""One engine object shared between agents (Hermes before 0.18.0): owner, guests, routing.

Hosts 0.13.0 to 0.17.0 hand the registered engine object itself to every
agent: the main agent, the background skill-review agent, subagents, gateway
sessions.  The first session to start on it owns it; another session
starting while the owner's is live (and not a compaction continuing it) gets
a *guest* engine of its own (a copy: its own session state, see
``session.state``).  The owner's session, store and counters never move.

The host's engine calls carry no agent and no reliable session id: the
host's background review agent takes its parent's session id after it is
built (0.13.0 ``run_agent.py``, 0.17.0 ``agent/background_review.py``), so its
``on_session_end`` (and a compaction continuing from it) names the *main*
session.  So the calling agent tells them apart: the host adapter names it
(``identify``: Hermes's ``AIAgent`` on the call stack, ``host/calling_agent.py``)
and host calls of an agent with a guest reach that guest (``dispatch.host_call``'s routing).
Threads cannot: a ``delegate_task`` subagent is built on its parent's turn
thread (the very thread the parent started on, in ``hermes chat -q``) and
runs on a worker thread.  Agents are held weakly.  Where no agent can be
named, the thread decides: calls on a thread where a guest started reach that
guest, the owner's own thread starting a new session is the owner moving on,
and the thread is remembered per thread (``threading.local``), never by its
ident, which a later thread may reuse.  On 0.18.0+
every engine is a copy of its own (``agent_copy``) and none of this applies.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable, Generic, TypeVar

logger = logging.getLogger(__name__)

E = TypeVar("E")


class SharedEngine(Generic[E]):
    """The sharing state of one engine object; never copied (a copy gets a new one)."""

    def __init__(self, *, agent_copy: bool = False, identify: Callable[[], Any] | None = None) -> None:
        self.agent_copy = agent_copy  # a copy belongs to one agent: no guests
        self.identify: Callable[[], Any] = identify or _nobody  # the calling agent, None when unknown
        self._lock = threading.Lock()
        self._guests: dict[str, E] = {}  # session id -> live guest engine
        self._here = threading.local()  # .session: the id of the guest started on this thread
        # agent -> its guest, kept after the guest ended: a late call of that agent reaches it, never the owner
        self._agents: weakref.WeakKeyDictionary[Any, E] = weakref.WeakKeyDictionary()
        self._owner_live = False
        self._owner_thread: int | None = None
        self._owner_agent: weakref.ReferenceType[Any] | None = None

    @property
    def has_guests(self) -> bool:
        return bool(self._guests)

    def live_guest_agents(self) -> list[tuple[Any, str]]:
        """(agent, session id) of each live guest the host adapter named an agent for."""
        with self._lock:
            live = {id(g): sid for sid, g in self._guests.items()}
            return [(agent, live[id(guest)]) for agent, guest in list(self._agents.items()) if id(guest) in live]

    def guest_for_start(
        self, owner_session: str | None, session_id: str, continuing: bool, make_guest: Callable[[], E]
    ) -> E | None:
        """The guest engine a starting session gets, or None when the owner itself takes the session.
        ``continuing``: the session continues another (a compaction's new id, or the host names the old one)."""
        if self.agent_copy or not session_id:
            return None
        agent = self.identify()
        with self._lock:
            guest = self._guests.get(session_id)
            if guest is None and continuing:
                # a compaction continuing a session: the guest's of this agent or thread (whose host-side id may be
                # the parent's), else the owner's
                guest = self._guest_of(agent)
                if guest is not None:
                    self._guests[session_id] = guest
            if guest is None:
                if not self._owner_live or owner_session in (None, session_id) or continuing or self._is_owner(agent):
                    if agent is not None:
                        self._agents.pop(agent, None)  # the owner's own agent: its calls are the owner's
                    return None
                guest = make_guest()
                self._guests[session_id] = guest
                logger.info("stowage: this Hermes shares one engine between agents; session state kept apart per agent")
            if agent is not None:
                self._agents[agent] = guest
            else:
                self._here.session = session_id
            return guest

    def owner_started(self) -> None:
        agent = self.identify()
        self._owner_live = True
        self._owner_thread = threading.get_ident()
        self._owner_agent = weakref.ref(agent) if agent is not None else None

    def owner_ended(self) -> None:
        self._owner_live = False

    def end_guest(self, session_id: str) -> E | None:
        """The guest ending, forgotten: the guest of ``session_id``, else the calling agent's (or this thread's):
        a child agent ending under its parent's id ends itself, never the parent, however often it does; None
        when neither is one."""
        agent = self.identify()
        with self._lock:
            guest = self._guests.get(session_id) or self._guest_of(agent)
            if guest is not None:
                self._guests = {sid: g for sid, g in self._guests.items() if g is not guest}
                self._here.session = None
        return guest

    def engine_here(self, owner: E) -> E:
        """The engine of the agent calling now: its guest (by agent, else by thread), else the owner."""
        if not self._guests and not self._agents:
            return owner
        agent = self.identify()
        with self._lock:
            guest = self._guest_of(agent)
        return owner if guest is None else guest

    def _guest_of(self, agent: Any) -> E | None:
        """The calling agent's guest when the host names it (an agent not known is the owner, or has none), else
        the live guest started on the calling thread."""
        if agent is not None:
            return self._agents.get(agent)
        return self._guests.get(getattr(self._here, "session", None) or "")

    def _is_owner(self, agent: Any) -> bool:
        """A session starting here is the owner's own (it moves on): the owner's agent, or an agent in place of
        one that is gone; without agents, the thread the owner started on."""
        owner = self._owner_agent
        if agent is None or owner is None:
            return self._owner_thread == threading.get_ident()
        return owner() in (None, agent)


def _nobody() -> None:
    """No agent can be named: agents are told apart by thread."""
    return None
