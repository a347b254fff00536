"""bench_economy's curve: a --point changes several settings at once; --suite's table names each dataset."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench_module(name: str) -> ModuleType:
    """A bench module loaded by path (bench/ is no package, and tests never edit sys.path); its sibling imports
    find the siblings loaded before it in sys.modules."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and the siblings look a module up by name
    spec.loader.exec_module(module)
    return module


for _sibling in ("economy_signals", "economy_data", "economy_report", "economy_hosts"):
    if _sibling not in sys.modules:
        _bench_module(_sibling)
bench_economy = sys.modules.get("bench_economy") or _bench_module("bench_economy")
economy_report = sys.modules["economy_report"]


def test_a_point_changes_several_settings_on_top_of_the_overrides() -> None:
    point = bench_economy.parse_point("view.working_set=true,view.hot_tokens=2000")
    assert point == ("view.working_set=true,view.hot_tokens=2000", {"view.working_set": True, "view.hot_tokens": 2000})
    curve = [("view.hot_tokens", 3000), point]
    configs = bench_economy.configurations({"view.min_chars": 400}, curve)
    assert [label for label, _ in configs] == [
        bench_economy.BUILTIN,
        bench_economy.STOWAGE,
        "view.hot_tokens=3000",
        "view.working_set=true,view.hot_tokens=2000",
    ]
    assert configs[3][1] == {"view.min_chars": 400, "view.working_set": True, "view.hot_tokens": 2000}
    assert configs[2][1] == {"view.min_chars": 400, "view.hot_tokens": 3000}


def test_the_suite_runs_half_a_first_then_the_held_out_sets() -> None:
    titles = [title for title, _ in economy_report.SUITE]
    assert titles[0].startswith("half A") and "half B" in titles[1] and "404" in titles[2]
    assert economy_report.SUITE[2][1] == ["--dataset", "swe404"]
