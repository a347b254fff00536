"""``stowage uninstall``: Hermes's config names no Stowage afterwards, and ``purge`` says what it leaves."""

from __future__ import annotations

import pytest
import yaml

from stowage.command import main
from stowage.command.identity import check_identity
from stowage.command.uninstall import config_without_stowage
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import write_session_status

INSTALLED = {
    "model": {"default": "x"},
    "context": {"engine": "stowage"},
    "plugins": {"enabled": ["other", "stowage"], "entries": {"stowage": {"allow_tool_override": False}}},
    "stowage": {"view": {"compact_at": 0.4}},
}


def write(home, config) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def read(home) -> dict:
    return yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))


def test_the_config_loses_every_line_that_names_stowage_and_keeps_the_rest():
    config, changes = config_without_stowage(INSTALLED, purge=False)
    assert config["context"]["engine"] == "compressor" and config["plugins"] == {"enabled": ["other"]}
    assert config["model"] == {"default": "x"} and config["stowage"] == {"view": {"compact_at": 0.4}}
    assert len(changes) == 3 and INSTALLED["context"]["engine"] == "stowage"  # the input is left alone
    purged, _ = config_without_stowage({**INSTALLED, "context": {"engine": "Stowage"}}, purge=True)
    assert "stowage" not in purged and purged["context"]["engine"] == "compressor"
    assert config_without_stowage({"context": {"engine": "compressor"}}, purge=False)[1] == []


def test_uninstall_leaves_a_config_hermes_reads_as_its_compressor(filled, capsys):
    write(filled.home, INSTALLED)
    assert main(["uninstall", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "Hermes now runs its built-in compressor" in out and "remove the code:" in out
    after = read(filled.home)
    assert after["context"]["engine"] == "compressor" and after["plugins"] == {"enabled": ["other"]}
    assert (filled.home / "config.yaml.before-stowage-uninstall").is_file() and filled.root.is_dir()
    ident = check_identity(filled.home, filled.home / "config.yaml", environ={})
    assert "Hermes's built-in compressor" in ident["running"]
    assert main(["uninstall", "--purge", "--yes"]) == 0
    assert not filled.root.exists() and "stowage" not in read(filled.home)
    assert (filled.home / "config.yaml.before-stowage-uninstall.1").is_file()  # the first copy stays


def test_uninstall_asks_and_refuses_without_a_terminal(filled, capsys):
    write(filled.home, INSTALLED)
    assert main(["uninstall", "--purge"]) == 1  # pytest's stdin is not a terminal
    assert "Refusing without --yes" in capsys.readouterr().err
    assert read(filled.home) == INSTALLED and filled.root.is_dir()  # nothing changed


def test_an_unreadable_config_is_left_alone(home, capsys):
    (home / "config.yaml").write_text("context: [unclosed\n", encoding="utf-8")
    assert main(["uninstall", "--yes"]) == 1
    assert "nothing was changed" in capsys.readouterr().err
    assert (home / "config.yaml").read_text(encoding="utf-8") == "context: [unclosed\n"


@pytest.mark.parametrize("argv", [["--older-than", "0", "--yes"], ["--older-than", "0", "--yes", "--force"]])
def test_purge_by_age_says_exactly_what_remains(filled, capsys, argv):
    write_session_status(filled.root, "s-live", SessionStatus(session_id="s-live"))
    assert main(["purge", *argv]) == 0
    out = capsys.readouterr().out
    assert "kept in" in out and "index.sqlite3 (the index" in out and "1 session status file(s)" in out
    assert "`stowage uninstall --purge`" in out
