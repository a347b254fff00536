"""Fixtures every test folder may use (a folder's own fixtures are in its ``conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hermes home, also exported as ``HERMES_HOME``."""
    path = tmp_path / "hermes"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    return path
