"""``run.py setup`` without npm: a message, no exit; the MCP tests then skip saying why."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_setup_skips_npm_with_a_message(monkeypatch, capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("stowage_run_py", ROOT / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    monkeypatch.setattr(run.shutil, "which", lambda name: None)
    monkeypatch.setattr(run, "NPM_DIR", tmp_path / "npm")
    run._npm_install()  # no SystemExit
    out = capsys.readouterr().out
    assert "npm not found: skipping the MCP reference servers" in out and "tests are skipped" in out
    assert not run.npm_installed() and not (tmp_path / "npm").exists()
