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


HOST_MODULES = ("run_agent", "agent.")  # where Hermes's agent loop lives (0.13.0: run_agent; 0.17.0+: agent/)
HISTORY_NAME = "messages"  # the loop's live history, the list compress() receives


def calling_history() -> list[Any] | None:
    """The live history of the Hermes loop that made this call (its ``messages``), or None.

    The host's pressure checks (``should_compress``, the preflight deferral)
    carry only a characters/4 figure of the request it is about to send; the
    loop making the call holds the history itself, which the engine counts
    with the tokenizer.  Only Hermes's own frames are read, nearest first.
    """
    frame: FrameType | None = sys._getframe(1)
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        module = frame.f_globals.get("__name__", "")
        if isinstance(module, str) and (module == HOST_MODULES[0] or module.startswith(HOST_MODULES[1])):
            code = frame.f_code
            if HISTORY_NAME in code.co_varnames or HISTORY_NAME in code.co_cellvars:
                history = frame.f_locals.get(HISTORY_NAME)
                if isinstance(history, list):
                    return history
        frame = frame.f_back
    return None
