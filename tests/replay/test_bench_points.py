"""bench_economy's curve: a --point changes several settings at once; --suite's table names each dataset."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_economy
import economy_report


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
