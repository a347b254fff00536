"""``/stowage``: the handler returns the CLI's text and registers with the real host."""

from __future__ import annotations

from pathlib import Path

import pytest

from stowage.command import main
from stowage.host.slash_command import register_slash_command, stowage_command

from .hermes_config import select_stowage, write_config


def slash(filled_or_home, args: str) -> str:
    home = filled_or_home if isinstance(filled_or_home, Path) else filled_or_home.home
    return stowage_command(args, hermes_home=lambda: home)


@pytest.mark.parametrize("args", ["", "status", "  status  "])
def test_status_text_matches_the_cli(filled, capsys, args):
    assert main(["status"]) == 0
    text = slash(filled, args)
    assert text.startswith(capsys.readouterr().out.rstrip("\n") + "\n")
    # then the engine running in this process: none here, and the config selects the built-in compressor
    assert "running engine: NOT stowage" in text and "context.engine is 'compressor'" in text


def test_doctor_and_gc_preview(filled):
    select_stowage(filled.home)
    text = slash(filled, "doctor")
    assert text.startswith("Stowage doctor") and "result: no problems" in text
    assert "hashes not verified" in slash(filled, "doctor --no-verify")
    text = slash(filled, "gc --dry-run")
    assert text.startswith("gc (dry run): would evict 1 blob(s)") and filled.old in text
    assert filled.store.stat(filled.old_sha)  # a preview changes nothing


def test_real_gc_repairs_and_unknown_args_are_refused_with_help(filled):
    assert "only previews gc" in slash(filled, "gc")
    assert filled.store.stat(filled.old_sha)
    text = slash(filled, "doctor --repair")
    assert text.startswith("unknown /stowage arguments") and "/stowage gc --dry-run" in text
    assert "/stowage doctor" in slash(filled, "help")
    assert "cannot parse" in slash(filled, 'status "unclosed')


def test_missing_store_and_errors_come_back_as_text(home):
    assert "not created yet" in slash(home, "")
    assert slash(home, "gc --dry-run").startswith("stowage: no Stowage store at ")
    write_config(home, {"store": {"ttl_hours": "soon"}})
    assert "INVALID" in slash(home, "status")
    text = slash(home, "doctor")
    assert "stowage.store.ttl_hours = 'soon': not a number" in text


def test_unexpected_failures_never_raise(home):
    def broken() -> object:
        raise RuntimeError("boom")

    assert stowage_command("status", hermes_home=broken) == "stowage: unexpected error: RuntimeError: boom"


def test_default_home_is_the_hosts(filled, capsys):
    assert main(["status"]) == 0  # HERMES_HOME points at the filled home
    assert stowage_command("").startswith(capsys.readouterr().out.rstrip("\n") + "\nrunning engine:")


def test_registers_with_the_real_plugin_context(filled, capsys):
    plugins = pytest.importorskip("hermes_cli.plugins")
    manager = plugins.PluginManager()
    ctx = plugins.PluginContext(plugins.PluginManifest(name="stowage"), manager)
    register_slash_command(ctx)
    entry = manager._plugin_commands["stowage"]
    assert entry["handler"] is stowage_command and entry["plugin"] == "stowage"
    assert entry["args_hint"] and entry["description"]
    # the CLI and TUI call handler(raw_args) through resolve_plugin_command_result
    result = plugins.resolve_plugin_command_result(entry["handler"](""))
    assert main(["status"]) == 0
    assert result.startswith(capsys.readouterr().out.rstrip("\n") + "\nrunning engine:")


def test_register_on_a_host_without_slash_commands_is_a_no_op():
    class OldContext:
        pass

    register_slash_command(OldContext())  # must not raise


def test_the_chat_note_fits_100_columns_whatever_the_tool():
    from stowage.host.chat_note import spill_note

    for tool in ("terminal", "mcp_github_search_repositories_and_code_everywhere" * 2, ""):
        note = spill_note(tool, 123_456_789, 98_765_432, "0123456789abcdef")
        assert len(note) <= 100 and "0123456789abcdef" in note and "\n" not in note, note
    assert "stored terminal's 1,234,567 tokens as 0123456789abcdef" in spill_note(
        "terminal", 1, 1_234_567, "0123456789abcdef"
    )
