"""Figures of the attack suite, printed in the normal test output.

Each reliability test records what it did (cases tried, failures, bytes lost,
secrets leaked ...) through the ``figures`` fixture; the record travels in the
test's report (``user_properties``, key ``"figures"``), so it reaches the
process that prints the summary also when pytest-xdist runs the test in a
worker. ``tests/conftest.py`` collects the records and prints them after the
run, with or without ``-s`` (its hooks must sit there: an xdist controller
loads only the top conftest).
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def figures(request) -> dict[str, Any]:
    """A dict the test fills with its figures; reported even when the test fails."""
    record: dict[str, Any] = {}
    yield record
    if record:
        request.node.user_properties.append(("figures", record))
