"""What a ``stowage replay`` run is asked to do: sources, window, price model, settings, the sweep grid.

Shared by the command (:mod:`.command`), the run (:mod:`.run`) and the report
(:mod:`.report`), so none of them imports another for a constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...context_engine.config.schema import KEYS_BY_PATH
from ..env import CliError
from .offline.billing import PriceModel

BUILTIN, STOWAGE = "built-in", "stowage"
PRICE_PRESETS: dict[str, PriceModel] = {
    "anthropic": PriceModel("anthropic", 0.1, 1.25),  # explicit cache: reads 0.1x, writes 1.25x
    "openai": PriceModel("openai", 0.5, 1.0),  # automatic cache: reads 0.5x, writes at the input price
    "deepseek": PriceModel("deepseek", 0.1, 1.0),  # automatic cache, reads 0.1x
    "no-cache": PriceModel("no-cache", 1.0, 1.0),  # every input token at full price
}
DEFAULT_PRESET = "anthropic"
SWEEP_GRID: dict[str, tuple[Any, ...]] = {
    "view.compact_at": (0.25, 0.37, 0.5),
    "view.hot_tokens": (2000, 4000, 8000),
    "view.step_tokens": (2000, 4000, 8000),
}


@dataclass
class ReplayOptions:
    hermes_home: Path | None = None
    store_root: Path | None = None  # the user's Stowage store: originals of recorded previews and stubs
    source_file: Path | None = None
    session: str | None = None
    since: str | None = None
    limit: int | None = None
    chain: int = 1
    window: int = 128_000
    price: PriceModel = field(default_factory=lambda: PRICE_PRESETS[DEFAULT_PRESET])
    settings: dict[str, Any] = field(default_factory=dict)
    sweep: bool = False
    html: Path | None = None
    progress: bool = True
    jobs: int = 1


def price_model(preset: str | None, cache_read: float | None, cache_write: float | None) -> PriceModel:
    """A named preset, or custom read/write multipliers (a preset's missing one is kept)."""
    name = preset or DEFAULT_PRESET
    if name not in PRICE_PRESETS:
        raise CliError(f"unknown price preset {name!r} (one of: {', '.join(PRICE_PRESETS)})", 2, "usage")
    base = PRICE_PRESETS[name]
    if cache_read is None and cache_write is None:
        return base
    read = base.read if cache_read is None else cache_read
    write = base.write if cache_write is None else cache_write
    if read < 0 or write < 0:
        raise CliError("--cache-read and --cache-write must not be negative", 2, "usage")
    return PriceModel(f"custom (read {read:g}x, write {write:g}x)", read, write)


def sweep_configs(base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One axis at a time around the shipped defaults, then compact_at x hot_tokens (the pair that matters most)."""
    seen: set[tuple[Any, ...]] = set()
    configs: list[tuple[str, dict[str, Any]]] = []
    keys = list(SWEEP_GRID)
    shipped = tuple(KEYS_BY_PATH[key].default for key in keys)
    for compact_at in SWEEP_GRID[keys[0]]:
        for hot in SWEEP_GRID[keys[1]]:
            for step in SWEEP_GRID[keys[2]]:
                defaults_on = sum(v == d for v, d in zip((compact_at, hot, step), shipped, strict=True))
                if defaults_on < 1 or (step != shipped[2] and defaults_on < 2):
                    continue
                point = (compact_at, hot, step)
                if point in seen:
                    continue
                seen.add(point)
                settings = {**base, keys[0]: compact_at, keys[1]: hot, keys[2]: step}
                configs.append((f"sweep compact_at={compact_at:g} hot={hot} step={step}", settings))
    return configs
