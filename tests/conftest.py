"""Fixtures every test folder may use (a folder's own fixtures are in its ``conftest.py``), and the hooks that
print the attack suite's figures (``tests/reliability/conftest.py``).

The hooks live here because this is the conftest an xdist controller loads: the tests run in workers and only
their reports, with each test's ``("figures", record)`` user property, reach the process that prints the summary.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

_FIGURES: dict[str, dict[str, Any]] = {}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hermes home, also exported as ``HERMES_HOME``."""
    path = tmp_path / "hermes"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    return path


def pytest_configure(config: pytest.Config) -> None:
    """Give Ctrl-C back when the run was started as a background job of a script (``cmd &``), which ignores SIGINT:
    the ignored signal would pass to every child, and the Ctrl-C test's replay could not be interrupted."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the figures a test recorded (its teardown report carries them, from this process or a worker)."""
    if report.when != "teardown":
        return
    for key, record in report.user_properties:
        if key == "figures":
            _FIGURES[report.nodeid.split("::", 1)[-1]] = record


def pytest_terminal_summary(terminalreporter) -> None:
    if not _FIGURES:
        return
    terminalreporter.section("stowage reliability figures")
    for name, record in _FIGURES.items():
        shown = ", ".join(
            f"{key}={value:,}" if isinstance(value, int) and not isinstance(value, bool) else f"{key}={value}"
            for key, value in record.items()
        )
        terminalreporter.write_line(f"{name}: {shown}")
