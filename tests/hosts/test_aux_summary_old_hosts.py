"""The summary call on hosts without ``aux_interrupt_protection`` (before 0.18.0).

Only the interrupt guard degrades; the summary request is still made.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from stowage.host import aux_summary


class _Reply:
    def __init__(self, text: str) -> None:
        self.choices = [types.SimpleNamespace(message=types.SimpleNamespace(content=text))]


def fake_aux_module(monkeypatch: pytest.MonkeyPatch, *, guard: Any = None) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    module = types.ModuleType("agent.auxiliary_client")

    def call_llm(**kwargs: Any) -> _Reply:
        calls.append(kwargs)
        return _Reply("## Goal\nsummary")

    module.call_llm = call_llm  # type: ignore[attr-defined]
    if guard is not None:
        module.aux_interrupt_protection = guard  # type: ignore[attr-defined]
    package = sys.modules.get("agent") or types.ModuleType("agent")
    monkeypatch.setitem(sys.modules, "agent", package)
    monkeypatch.setattr(package, "auxiliary_client", module, raising=False)
    monkeypatch.setitem(sys.modules, "agent.auxiliary_client", module)
    return calls


def test_a_host_without_the_interrupt_guard_still_summarizes(monkeypatch):
    calls = fake_aux_module(monkeypatch)
    assert aux_summary.summarize_with_aux("prompt", {"model": "m"}) == "## Goal\nsummary"
    assert calls and calls[0]["task"] == "compression"


def test_a_broken_guard_does_not_cost_the_summary(monkeypatch):
    def guard() -> Any:
        raise RuntimeError("boom")

    calls = fake_aux_module(monkeypatch, guard=guard)
    assert aux_summary.summarize_with_aux("prompt", {}) == "## Goal\nsummary"
    assert len(calls) == 1


def test_the_guard_is_used_where_the_host_has_it(monkeypatch):
    entered: list[bool] = []

    class Guard:
        def __enter__(self) -> None:
            entered.append(True)

        def __exit__(self, *exc: Any) -> None:
            return None

    fake_aux_module(monkeypatch, guard=Guard)
    aux_summary.summarize_with_aux("prompt", {})
    assert entered == [True]


def test_a_host_without_the_auxiliary_client_gives_a_clear_failure(monkeypatch):
    from stowage.context_engine.summary.reply import SummaryFailure

    package = sys.modules.get("agent") or types.ModuleType("agent")
    monkeypatch.setitem(sys.modules, "agent", package)
    monkeypatch.setitem(sys.modules, "agent.auxiliary_client", None)  # the import fails
    monkeypatch.delattr(package, "auxiliary_client", raising=False)
    with pytest.raises(SummaryFailure) as failure:
        aux_summary.summarize_with_aux("prompt", {})
    assert failure.value.kind == "no_provider" and "auxiliary client unavailable" in str(failure.value)


def test_the_engine_passes_the_compactions_deadline_to_the_host_and_not_in_the_runtime(monkeypatch):
    from stowage.host.hermes_engine import summarize

    calls = fake_aux_module(monkeypatch)
    summarize("prompt", {"model": "m"}, timeout=1.5)
    summarize("prompt", {"model": "m"}, timeout=None)
    assert calls[0]["timeout"] == 1.5 and "timeout" not in calls[1]  # None keeps Hermes's own
    assert all(call["main_runtime"] == {"model": "m"} for call in calls)
