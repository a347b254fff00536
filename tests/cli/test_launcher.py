"""``python3 <plugin folder>/launcher.py doctor``: the command that answers without the plugin loaded.

On the plugin-folder routes no console script exists and ``hermes stowage``
resolves only while Hermes loads the plugin, so the launcher is what the
README names for a disabled or broken plugin.  A user types ``python3``,
which may lack Stowage's requirements: the launcher then runs itself again
with the Python of the ``hermes`` on PATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

LAUNCHER = Path(__file__).resolve().parents[2] / "launcher.py"


def run_launcher(python_args: list[str], home: Path, path: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STOWAGE_LAUNCHER_REEXEC"}
    env.update(PATH=path, HERMES_HOME=str(home))
    return subprocess.run(
        [*python_args, str(LAUNCHER), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def fake_hermes(tmp_path: Path) -> str:
    """A ``hermes`` script on PATH whose interpreter is this venv's Python (which has the requirements)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "hermes"
    script.write_text(f"#!{sys.executable}\nprint('hermes')\n", encoding="utf-8")
    script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"


def test_a_python_without_the_requirements_runs_doctor_in_hermess_python(home: Path, tmp_path: Path) -> None:
    # plugin disabled: Hermes would not load it, so `hermes stowage` would not exist; the launcher still answers
    (home / "config.yaml").write_text(
        yaml.safe_dump({"context": {"engine": "stowage"}, "plugins": {"disabled": ["stowage"]}}), encoding="utf-8"
    )
    bare = [sys.executable, "-S"]  # no site-packages: no PyYAML, as a system python3 may be
    assert subprocess.run([*bare, "-c", "import yaml"], capture_output=True).returncode != 0
    proc = run_launcher(bare, home, fake_hermes(tmp_path), "doctor", "--no-verify")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "plugin-disabled" in proc.stdout and "hermes plugins enable stowage" in proc.stdout, proc.stdout


def test_without_a_hermes_on_path_it_says_what_is_missing(home: Path) -> None:
    proc = run_launcher([sys.executable, "-S"], home, "/nonexistent", "status")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("stowage: cannot run (") and "pip install" in proc.stderr, proc.stderr
