"""The engines a ``stowage replay`` runs: Hermes's built-in compressor and Stowage (plus sweep settings).

Built by ``stowage.command.replay.hermes_engines`` (the replay's Hermes glue, the one module of it
that knows the host), imported lazily: the rest of ``stowage.command`` never needs hermes-agent.
Each engine runs against a temporary ``HERMES_HOME`` and store, removed at
the end.  The observer keeps a down-sampled request-size series per session
for the plots.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...context_engine.policy.trigger import governing
from ..env import CliError
from .offline.target import Observer
from .options import BUILTIN, STOWAGE, ReplayOptions, sweep_configs
from .rebuild import StoreFiles, original_handle
from .sources import RecordedSession

SERIES_POINTS = 300  # at most this many points per engine per session in the plots


class Series(Observer):
    """Observer collecting request sizes and compaction markers (request index) for the plots,
    and the handle of each tool output a hook replaced (None where the replacement names none)."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.compactions: list[int] = []
        self.replaced_handles: list[str | None] = []

    def event(self, name: str, **data: Any) -> None:
        if name == "request":
            self.tokens.append(int(data.get("tokens") or 0))
        elif name == "compress" and data.get("outcome") == "boundary":
            self.compactions.append(len(self.tokens))
        elif name == "tool_result_replaced":
            content = data.get("content")
            found = original_handle(content if isinstance(content, str) else "")
            self.replaced_handles.append(found[1] if found else None)


def downsample(values: list[int], points: int = SERIES_POINTS) -> list[list[int]]:
    """``[[request index, tokens], ...]``, at most ``points`` (the maximum of each bucket, so peaks stay)."""
    if len(values) <= points:
        return [[i, v] for i, v in enumerate(values)]
    out = []
    size = len(values) / points
    for bucket in range(points):
        start, end = int(bucket * size), max(int((bucket + 1) * size), int(bucket * size) + 1)
        index = max(range(start, min(end, len(values))), key=values.__getitem__)
        out.append([index, values[index]])
    return out


class Engines:
    """The built-in compressor and Stowage (plus sweep settings) against a temporary HERMES_HOME."""

    def __init__(self, options: ReplayOptions, home: Path | None = None) -> None:
        try:
            from . import hermes_engines as replay_host
            from .offline import HostDriver, StandInSummarizer, TokenMeter
        except ImportError as exc:  # pragma: no cover - the package always ships the glue
            raise CliError(f"stowage replay cannot load its engines ({exc})", 1, "no_host") from exc
        self.host_module = replay_host
        self.StandInSummarizer = StandInSummarizer
        self.options = options
        self.previous_home = os.environ.get("HERMES_HOME")
        self.home = replay_host.prepare_hermes_home(home)  # sets HERMES_HOME: before anything imports Hermes
        try:
            import agent.context_compressor  # noqa: F401 - the built-in engine
        except ImportError as exc:
            self.close()
            raise CliError(
                "stowage replay needs hermes-agent installed in this Python environment (it replays "
                "through Hermes's built-in compressor)",
                1,
                "no_host",
            ) from exc
        self.window = options.window
        self.tools, self.tools_source = replay_host.hermes_tool_schemas()
        self.meter = TokenMeter()
        self.price = options.price
        self.driver_cls = HostDriver
        configs: list[tuple[str, dict[str, Any]]] = [(STOWAGE, dict(options.settings))]
        if options.sweep:
            configs += sweep_configs(dict(options.settings))
        self.hosts: dict[str, Any] = {}
        try:
            for number, (label, settings) in enumerate(configs):
                self.hosts[label] = replay_host.StowageHost(
                    settings, home=self.home / f"stowage-{number}", window=self.window, tools=self.tools, label=label
                )
        except ValueError as exc:  # StowageConfigError: a bad --set
            self.close()
            raise CliError(f"bad Stowage setting: {exc}", 2, "usage") from exc
        self.configs = configs
        main = self.hosts[STOWAGE].singleton
        self.effective = _settings_of(main)
        self.builtin_settings = dict(replay_host.BUILTIN_DEFAULTS)

    def replay(self, session: RecordedSession) -> dict[str, Any]:
        rows: dict[str, Any] = {}
        series: dict[str, Any] = {}
        for label in [BUILTIN, *self.hosts]:
            summarizer = self.StandInSummarizer(self.meter.count_text)
            observer = Series()
            if label == BUILTIN:
                target = self.host_module.builtin_target(summarizer, session.id, window=self.window, tools=self.tools)
            else:
                target = self.hosts[label].target(summarizer, session.id)
            driver = self.driver_cls(self.meter, window=self.window, price_models=(self.price,), observer=observer)
            result = driver.replay(session.messages, target)  # closes the target
            row = result.as_dict()
            row["cost"] = row["cost"][self.price.name]
            row["spilled_outputs"] = row["hook_replaced_results"]
            row["recoverable_outputs"] = self._recoverable(label, observer.replaced_handles) if label != BUILTIN else 0
            rows[label] = row
            if label in (BUILTIN, STOWAGE):
                series[label] = {
                    "tokens": downsample(observer.tokens),
                    "compactions": observer.compactions,
                    "requests": len(observer.tokens),
                }
        self.meter.clear()  # streaming: nothing of this session stays cached
        return {"rows": rows, "series": series}

    def _recoverable(self, label: str, handles: list[str | None]) -> int:
        """Spilled outputs (each one, as ``spilled_outputs`` counts them) whose whole text the temporary store holds.

        Counted per output, not per blob: the store keeps one blob for outputs with the same text (a file read
        twice), and a count of blobs then disagreed with the spilled outputs it was set against.
        """
        files = StoreFiles(self.hosts[label].home / "stowage")
        readable: dict[str, bool] = {}
        for handle in handles:
            if handle is not None and handle not in readable:
                readable[handle] = files.read(handle) is not None
        return sum(1 for handle in handles if handle is not None and readable[handle])

    def close(self) -> None:
        self.host_module.cleanup_home(self.home)
        if self.previous_home is None:
            os.environ.pop("HERMES_HOME", None)
        else:
            os.environ["HERMES_HOME"] = self.previous_home


def _settings_of(engine: Any) -> dict[str, Any]:
    settings = getattr(engine, "settings", None)
    snapshot = settings.as_dict() if settings is not None and hasattr(settings, "as_dict") else {}
    flat = {
        f"{section}.{key}": value
        for section, values in snapshot.items()
        if isinstance(values, dict)
        for key, value in values.items()
        if section in ("view", "compaction", "spill")
    }
    return governing(flat)  # only the keys that apply: view.compact_at or compaction.threshold, never both
