"""Which Hermes agent is calling the engine: the ``AIAgent`` nearest on the call stack.

The host's engine calls carry no agent and no reliable session id, and on
0.13.0-0.17.0 one engine object serves every agent in the process.  Each of
those calls is made from the calling agent's own code: an ``AIAgent`` method
(``self``) or, from 0.17.0, a function of ``agent/`` taking it as ``agent``.
So the nearest such frame names the agent, whatever thread it runs on (a
``delegate_task`` subagent is built on its parent's thread and runs on a
worker).  Nothing found (no Hermes loaded, a call from outside any agent):
None, and the shared engine tells agents apart by thread.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

MAX_FRAMES = 64  # an engine call sits a few frames under its agent's code; a hook call a dozen or so
AGENT_NAMES = ("self", "agent")


def calling_agent() -> Any:
    """The ``run_agent.AIAgent`` whose code made this call, or None."""
    agent_class = getattr(sys.modules.get("run_agent"), "AIAgent", None)
    if not isinstance(agent_class, type):
        return None
    frame: FrameType | None = sys._getframe(1)
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        code = frame.f_code
        if any(name in AGENT_NAMES for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]):
            local = frame.f_locals  # only frames that take an agent-like argument are read
            for name in AGENT_NAMES:
                if isinstance(local.get(name), agent_class):
                    return local[name]
        frame = frame.f_back
    return None
