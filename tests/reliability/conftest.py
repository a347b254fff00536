"""Figures of the attack suite, printed in the normal test output.

Each reliability test records what it did (cases tried, failures, bytes lost,
secrets leaked ...) through the ``figures`` fixture; a terminal-summary hook
prints them after the run, with or without ``-s``.
"""

from __future__ import annotations

from typing import Any

import pytest

_FIGURES: list[tuple[str, dict[str, Any]]] = []


@pytest.fixture
def figures(request) -> dict[str, Any]:
    """A dict the test fills with its figures; reported even when the test fails."""
    record: dict[str, Any] = {}
    yield record
    if record:
        _FIGURES.append((request.node.nodeid.split("::", 1)[-1], record))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _FIGURES:
        return
    terminalreporter.section("stowage reliability figures")
    for name, record in _FIGURES:
        shown = ", ".join(
            f"{key}={value:,}" if isinstance(value, int) and not isinstance(value, bool) else f"{key}={value}"
            for key, value in record.items()
        )
        terminalreporter.write_line(f"{name}: {shown}")
