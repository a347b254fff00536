"""``stowage setup`` in-process: the lines it would run, and a clear error when Hermes's command is not found.

Running the lines through the real ``hermes config set`` is the README block's e2e
(``tests/e2e/test_host_whole_outputs.py``).
"""

from __future__ import annotations

import json

import yaml

from stowage.command import main, setup
from stowage_dev.hermes_home import lifted_caps


def _write(home, config: dict) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def test_dry_run_prints_each_config_set_line_and_changes_nothing(home, capsys):
    _write(home, {"context": {"engine": "stowage"}, "tool_output": {"max_bytes": 20_000_000}})
    before = (home / "config.yaml").read_text()

    assert main(["setup", "--dry-run"]) == 0
    out = capsys.readouterr().out

    assert "hermes config set tool_output.max_line_length 10000000" in out
    assert "hermes config set file_read_max_chars 10000000" in out
    assert "hermes config set web.extract_char_limit 500000" in out  # this venv's 0.19.0 reads it
    assert "tool_output.max_bytes" not in out  # already above what keeps outputs whole: left alone
    assert "execute_code" in out  # the caps no setting lifts are named
    assert (home / "config.yaml").read_text() == before
    assert not (home / "plugins").exists()  # a dry run links no dashboard tab either


def test_nothing_to_run_when_every_cap_is_lifted(home, capsys):
    _write(home, {"context": {"engine": "stowage"}, **lifted_caps()})
    assert main(["--json", "setup", "--dry-run"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["commands"] == [] and data["cli"] == "hermes"


def test_without_hermes_on_path_it_fails_with_the_lines_to_run(home, capsys, monkeypatch):
    _write(home, {"context": {"engine": "stowage"}})
    before = (home / "config.yaml").read_text()
    monkeypatch.setattr(setup, "_cli_path", lambda cli: None)

    assert main(["setup"]) == 1
    err = capsys.readouterr().err

    assert "`hermes` is not on PATH" in err and "hermes config set tool_output.max_bytes 10000000" in err
    assert "Traceback" not in err
    assert (home / "config.yaml").read_text() == before


def test_an_unreadable_config_is_an_error_that_changes_nothing(home, capsys):
    (home / "config.yaml").write_text("context: [unclosed\n", encoding="utf-8")
    assert main(["setup"]) == 1
    assert "nothing was changed" in capsys.readouterr().err
