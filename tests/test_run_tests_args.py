"""``run.py test``'s own options and the parallel run: what reaches pytest."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.delenv("STOWAGE_TEST_WORKERS", raising=False)
    spec = importlib.util.spec_from_file_location("stowage_run_py", ROOT / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_whole_suite_goes_to_every_cpu_a_file_per_worker(run) -> None:
    assert run.pytest_args(["-q"]) == ["-q", "-n", "auto", "--dist", "loadfile"]


def test_fast_leaves_out_the_real_host_tests_and_a_later_marker_wins(run) -> None:
    assert run.pytest_args(["--fast", "-q"]) == ["-m", "not e2e", "-q", "-n", "auto", "--dist", "loadfile"]
    assert run.pytest_args(["--fast", "-m", "reliability"])[:4] == ["-m", "not e2e", "-m", "reliability"]


def test_named_tests_run_in_this_process(run) -> None:
    assert run.pytest_args(["tests/test_hosts_table.py", "-x"]) == ["tests/test_hosts_table.py", "-x"]
    assert run.pytest_args(["tests/test_hosts_table.py::test_an_expected_failure_is_its_own_cell"]) == [
        "tests/test_hosts_table.py::test_an_expected_failure_is_its_own_cell"
    ]


def test_the_command_line_or_the_environment_chooses_the_workers(run, monkeypatch) -> None:
    assert run.pytest_args(["-n", "3"]) == ["-n", "3"]
    assert run.pytest_args(["-p", "no:xdist"]) == ["-p", "no:xdist"]
    monkeypatch.setenv("STOWAGE_TEST_WORKERS", "0")
    assert run.pytest_args(["-q"]) == ["-q"]
    monkeypatch.setenv("STOWAGE_TEST_WORKERS", "4")
    assert run.pytest_args([]) == ["-n", "4", "--dist", "loadfile"]


def test_no_smoke_leaves_out_each_smoke_file_the_host_matrix_ran(run) -> None:
    args = run.pytest_args(["--no-smoke", "--no-check", "-q"])
    assert "--no-smoke" not in args and "--no-check" not in args
    ignored = [arg.removeprefix("--ignore=") for arg in args if arg.startswith("--ignore=")]
    assert ignored == list(run.SMOKE) and all((ROOT / path).is_file() for path in ignored)
    assert args[-4:] == ["-n", "auto", "--dist", "loadfile"]
