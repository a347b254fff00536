"""The attack suite's figures reach the summary also when pytest-xdist runs the tests in workers.

A throw-away suite with this folder's two conftests and one test that records figures, run in a
subprocess, serially and with two workers: both print the figures section with the record.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SUITE = """
def test_records(figures):
    figures["cases"] = 1234
    figures["leaked"] = 0
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist.plugin", "-n", "2"]], ids=["serial", "xdist"])
def test_the_figures_are_printed_after_the_run(tmp_path: Path, workers: list[str]) -> None:
    pytest.importorskip("xdist")
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "reliability").mkdir()
    shutil.copy(TESTS / "reliability" / "conftest.py", tmp_path / "reliability" / "conftest.py")
    (tmp_path / "reliability" / "test_suite.py").write_text(SUITE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, "reliability"],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # only xdist, named above: a quicker start
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stowage reliability figures" in done.stdout
    assert "test_records: cases=1,234, leaked=0" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("1 passed")
