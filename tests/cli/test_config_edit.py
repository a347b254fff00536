"""``config_edit.edit_out_stowage``: the pure span edit behind ``stowage uninstall`` (the shapes of real configs
are in tests/reliability/test_uninstall_own_files.py)."""

from __future__ import annotations

import pytest
import yaml

from stowage.command.config_edit import ConfigEditError, edit_out_stowage


@pytest.mark.parametrize(
    "before,after",
    [
        ("plugins:\n  disabled: [a, stowage]\n", "plugins:\n  disabled: [a]\n"),
        ("plugins:\n  enabled: stowage\n", "plugins:\n  enabled: []\n"),
        ("plugins:\n  enabled:\n  - stowage\n  - stowage\nx: 1\n", "plugins:\n  enabled: []\nx: 1\n"),
        ("plugins: {entries: {a: 1, stowage: {x: 1}}}\n", "plugins: {entries: {a: 1}}\n"),
        ("\ufeff# bom\ncontext: {engine: 'Stowage'}\n", "\ufeff# bom\ncontext: {engine: compressor}\n"),
    ],
)
def test_each_span_is_cut_and_nothing_else(before, after):
    edited, changes = edit_out_stowage(before, purge=False)
    assert edited == after and changes
    assert yaml.safe_load(edited) == yaml.safe_load(after)


def test_a_config_without_stowage_is_returned_as_is():
    for text in ("", "# only a comment\n", "model: x\n", "- a list\n"):
        assert edit_out_stowage(text, purge=True) == (text, [])


def test_a_nested_list_naming_stowage_is_not_stowages_item():
    edited, _ = edit_out_stowage("plugins:\n  enabled:\n  - - stowage\n  - stowage\n  - b\n", purge=False)
    assert edited == "plugins:\n  enabled:\n  - - stowage\n  - b\n"


def test_a_key_written_where_a_line_cut_would_take_more_is_refused_not_rewritten():
    with pytest.raises(ConfigEditError, match="stowage: block"):
        edit_out_stowage("? stowage\n: {a: 1}\nmodel: x\n", purge=True)


def test_a_file_that_does_not_parse_is_refused():
    with pytest.raises(ConfigEditError, match="does not parse"):
        edit_out_stowage("context: [unclosed\n", purge=False)


LIFTED = (
    ("tool_output.max_bytes", 10_000_000),
    ("tool_output.max_line_length", 10_000_000),
    ("web.extract_char_limit", 500_000),
)


def test_the_caps_stowage_setup_lifted_go_back_to_the_hosts_defaults():
    """Under the built-in compressor a 10,000,000-character output would go whole into the prompt."""
    before = (
        "# my config\n"
        "context:\n  engine: stowage\n"
        "tool_output:\n  max_bytes: 10000000   # stowage setup\n  max_line_length: 10000000\n  max_lines: 2000\n"
        "web:\n  extract_char_limit: 500000\n"
        "terminal: {timeout: 60}\n"
    )
    edited, changes = edit_out_stowage(before, purge=False, lifted=LIFTED)
    assert edited == (
        "# my config\ncontext:\n  engine: compressor\ntool_output:\n  max_lines: 2000\nterminal: {timeout: 60}\n"
    )
    assert "tool_output.max_bytes: back to Hermes's default (was 10,000,000, set by `stowage setup`)" in changes
    assert "web.extract_char_limit: back to Hermes's default (was 500,000, set by `stowage setup`)" in changes


def test_a_cap_the_user_set_to_another_value_stays():
    before = "context: {engine: stowage}\ntool_output:\n  max_bytes: 200000\n"
    edited, changes = edit_out_stowage(before, purge=False, lifted=LIFTED)
    assert edited == "context: {engine: compressor}\ntool_output:\n  max_bytes: 200000\n"
    assert changes == ["context.engine: compressor (Hermes's built-in compressor)"]
