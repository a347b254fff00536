"""The core tools tool search never defers come from the host's public toolset table (``get_toolset('hermes-cli')``),
not its private ``_HERMES_CORE_TOOLS`` (``tests/hosts/test_host_contract.py`` holds the two equal on every host of
the matrix); where that table cannot be read, the contract's own copy stands in, said once."""

from __future__ import annotations

import logging

import pytest

from stowage.context_engine.host_adapter.host_contract import HERMES_CORE_TOOLS
from stowage.host import tool_search_glue

toolsets = pytest.importorskip("toolsets")


def test_without_the_hosts_table_the_contracts_copy_stands_in_with_one_note(monkeypatch, caplog):
    def broken(name):
        raise KeyError(name)

    monkeypatch.setattr(toolsets, "get_toolset", broken)
    monkeypatch.setattr(tool_search_glue, "_core_note", [])
    with caplog.at_level(logging.WARNING):
        assert tool_search_glue.core_tool_names() == HERMES_CORE_TOOLS
        assert tool_search_glue.core_tool_names() == HERMES_CORE_TOOLS
    notes = [r.getMessage() for r in caplog.records if "hermes-cli" in r.getMessage()]
    assert len(notes) == 1 and "KeyError" in notes[0], notes


def test_the_contracts_copy_is_this_hosts_core_where_the_host_is_0_19_0():
    from stowage.host.host_support import installed_version

    if installed_version() != "0.19.0":
        pytest.skip("the copy is 0.19.0's")
    assert frozenset(toolsets._HERMES_CORE_TOOLS) == HERMES_CORE_TOOLS
