"""The host matrix table that ``run.py hosts`` prints after the smokes.

CI once ran all six host smokes green and then failed on this table: it loaded
``host/host_support.py`` by file path, which the relative imports of the house
layout no longer allow.  Built here the way ``run.py hosts`` builds it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _run_py() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stowage_run_py", ROOT / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_reads_each_hosts_features_from_the_installed_package() -> None:
    run = _run_py()
    passed = {"test_tool_search_where_the_host_has_middleware": "passed"}
    table = run._table(sys.executable, [("0.13.0", dict(passed)), ("0.22.2", dict(passed))])
    row = next(line for line in table.splitlines() if line.startswith("| tool search |"))
    assert row == "| tool search | off, said in status and log (needs 0.17.0) | yes |"


def test_a_failed_case_of_a_parametrized_test_fails_its_cell() -> None:
    run = _run_py()
    outcomes = {"test_spill[a]": "passed", "test_spill[b]": "FAILED", "test_other": "skipped"}
    assert run._outcome(outcomes, "test_spill") == "FAILED"
    assert run._outcome(outcomes, "test_other") == "skipped"
    assert run._outcome(outcomes, "test_missing") == "not run"


def test_an_expected_failure_is_its_own_cell() -> None:
    run = _run_py()
    outcomes = {
        "test_hermes_plugins_install_from_a_clean_clone": "xfailed",
        "test_x[a]": "passed",
        "test_x[b]": "xfailed",
    }
    assert run._outcome(outcomes, "test_x") == "expected failure"
    table = run._table(sys.executable, [("0.22.2", outcomes)])
    row = next(line for line in table.splitlines() if line.startswith("| `hermes plugins install"))
    assert "blocked offline: the installer downloads CPython 3.14 (scan passes)" in row
