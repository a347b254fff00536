"""Totals over sessions and ratios to the baseline."""

from __future__ import annotations

import pytest

from stowage.command.replay.offline.totals import SUM_KEYS, add_session, with_ratios


def row(billed: int, summaries: int, peak: int, cost: float) -> dict:
    return {
        **{key: 0 for key in SUM_KEYS},
        "billed_tokens": billed,
        "summary_calls": summaries,
        "peak_request_tokens": peak,
        "cost": {"m": cost},
    }


def test_sums_maxima_and_ratios() -> None:
    totals: dict = {}
    add_session(totals, {"base": row(100, 2, 50, 10.0), "new": row(50, 1, 40, 4.0)})
    add_session(totals, {"base": row(300, 2, 70, 30.0), "new": row(150, 4, 30, 16.0)})
    out = with_ratios(totals, "base")
    assert out["base"]["billed_tokens"] == 400 and out["base"]["sessions"] == 2
    assert out["new"]["peak_request_tokens"] == 40
    r = out["new"]["ratio_to_baseline"]
    assert r["billed_tokens"] == pytest.approx(0.5)
    assert r["summary_calls"] == pytest.approx(1.25)
    assert r["cost_m"] == pytest.approx(0.5)
    assert r["compactions"] is None  # the baseline made none: no ratio
