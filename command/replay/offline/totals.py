"""Totals over replayed sessions, per engine configuration, and ratios to a baseline.

Session rows are :meth:`SessionResult.as_dict` dictionaries (plus any extra
numeric keys listed in :data:`SUM_KEYS`); totals are plain dictionaries, so a
report (the bench, ``stowage replay``) can print or serialize them as they are.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .billing import PRICE_MODELS, PriceModel

SUM_KEYS = (
    "requests",
    "prompt_tokens",
    "cached_tokens",
    "summary_calls",
    "summary_input_tokens",
    "billed_tokens",
    "over_window_requests",
    "user_turns",
    "compactions",
    "compress_calls",
    "noop_compressions",
    "aborted_compressions",
    "compaction_cpu_s",
    "middleware_changed",
    "middleware_errors",
    "hook_replaced_results",
    "cache_breaks_after_compaction",
    "cache_breaks_other",
    "rewritten_tokens_other",
    "wall_s",
    "summaries_prepared",
    "summaries_prepared_used",
    "summaries_prepared_wasted",
    "summaries_prepared_wasted_tokens",
)
LIST_KEYS = (
    "compaction_waits",
    "compaction_prepared",
    "compaction_served",
    "summaries_wasted_reasons",
)  # per compaction (timed replays): concatenated
RATIO_KEYS = (
    "billed_tokens",
    "prompt_tokens",
    "summary_calls",
    "compactions",
    "compaction_cpu_s",
    "peak_request_tokens",
    "requests",
    "summary_input_tokens",
)


def empty_total(price_models: Sequence[PriceModel] = PRICE_MODELS) -> dict[str, Any]:
    return {
        **{key: 0 for key in SUM_KEYS},
        **{key: [] for key in LIST_KEYS},
        "cost": {m.name: 0.0 for m in price_models},
        "peak_request_tokens": 0,
        "sessions": 0,
    }


def add_session(totals: dict[str, dict[str, Any]], rows: Mapping[str, Mapping[str, Any]]) -> None:
    """Add one session's rows (configuration label -> row) to the running totals."""
    for label, row in rows.items():
        total = totals.setdefault(label, empty_total())
        for key in SUM_KEYS:
            total[key] += row.get(key, 0) or 0
        for key in LIST_KEYS:
            total.setdefault(key, []).extend(row.get(key) or [])
        for name, value in row["cost"].items():
            total["cost"][name] = total["cost"].get(name, 0.0) + value
        total["peak_request_tokens"] = max(total["peak_request_tokens"], row["peak_request_tokens"])
        total["sessions"] += 1


def ratio(value: float, base: float) -> float | None:
    return value / base if base else None


def with_ratios(totals: Mapping[str, Mapping[str, Any]], baseline: str) -> dict[str, dict[str, Any]]:
    """Each total with ``ratio_to_baseline``: its figures divided by the baseline's (None where that is 0)."""
    base = totals[baseline]
    out = {}
    for label, total in totals.items():
        ratios = {key: ratio(total[key], base[key]) for key in RATIO_KEYS}
        for name in total["cost"]:
            ratios[f"cost_{name}"] = ratio(total["cost"][name], base["cost"].get(name, 0.0))
        out[label] = {**total, "ratio_to_baseline": ratios}
    return out
