"""The host adapter names the agent calling the engine from the call stack (host/calling_agent.py).

Hermes makes each engine call from its agent's own code: an ``AIAgent`` method
(``self``) or, from 0.17.0, a function of ``agent/`` taking it as ``agent``.
The nearest one is the caller, whatever thread runs it and whatever other agent
sits further up (a subagent is built inside its parent's tool call).
"""

from __future__ import annotations

import threading
from typing import Any

from run_agent import AIAgent

from stowage.host.calling_agent import calling_agent


def bare_agent() -> AIAgent:
    return object.__new__(AIAgent)  # an instance without the host's start-up: only its identity matters here


def engine_call() -> Any:
    return calling_agent()


def agent_function(agent: Any) -> Any:  # the 0.17.0+ shape: agent/conversation_loop.py and friends
    return engine_call()


def method_like(self: Any) -> Any:  # the 0.13.0 shape: an AIAgent method
    return engine_call()


def test_the_nearest_agent_on_the_stack_is_the_caller() -> None:
    parent, child = bare_agent(), bare_agent()

    def delegate(self: Any) -> Any:  # the parent's tool call builds the child, whose __init__ calls the engine
        return method_like(child)

    assert agent_function(parent) is parent
    assert method_like(child) is child
    assert delegate(parent) is child


def test_no_agent_names_nobody() -> None:
    assert engine_call() is None
    assert method_like("not an agent") is None
    assert agent_function(None) is None


def test_the_agent_is_found_on_any_thread() -> None:
    child, box = bare_agent(), []
    worker = threading.Thread(target=lambda: box.append(agent_function(child)))
    worker.start()
    worker.join()
    assert box == [child]
