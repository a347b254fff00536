"""Fixtures: fresh copies of the hand-written catalog of ``catalogs.py``."""

from __future__ import annotations

import pytest

from stowage.tool_search import Catalog

from .catalogs import SCHEMAS


@pytest.fixture
def schemas() -> list[dict]:
    return [dict(s) for s in SCHEMAS]


@pytest.fixture
def catalog(schemas) -> Catalog:
    return Catalog.from_schemas(schemas)
