"""``stowage replay``: what Stowage would have done to the user's own recorded sessions.

Each recorded session (``state.db`` or a JSONL file, :mod:`.replay_sources`)
is replayed offline through Hermes's built-in ``ContextCompressor`` and
through Stowage, driven as Hermes 0.19.0 drives an engine
(``context_engine.replay.driver``; the engines are built by
``stowage.replay_host``, the one place that knows the host).  No model is
called: summaries come from the stand-in summarizer, named in every report.

Nothing of the user's is written: the source is read from a private copy,
Stowage runs with a temporary ``HERMES_HOME`` and store, removed at the end.
One session is in memory at a time; its figures are kept (plus a down-sampled
request-size series for the plots).  Ctrl-C stops after the current request
and still writes the report of the sessions done, marked partial.

Unlike the rest of ``stowage.cli`` this command needs hermes-agent installed
(it imports the host's compressor, lazily, only here).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, TextIO

from ..context_engine.replay.billing import PriceModel
from ..context_engine.replay.driver import Observer
from ..context_engine.trigger import governing
from .env import CliError
from .replay_sources import RecordedSession, SkippedSession, SourceError, jsonl_sessions, open_state_db, parse_since

BUILTIN, STOWAGE = "built-in", "stowage"
PRICE_PRESETS: dict[str, PriceModel] = {
    "anthropic": PriceModel("anthropic", 0.1, 1.25),   # explicit cache: reads 0.1x, writes 1.25x
    "openai": PriceModel("openai", 0.5, 1.0),          # automatic cache: reads 0.5x, writes at the input price
    "deepseek": PriceModel("deepseek", 0.1, 1.0),      # automatic cache, reads 0.1x
    "no-cache": PriceModel("no-cache", 1.0, 1.0),      # every input token at full price
}
DEFAULT_PRESET = "anthropic"
SWEEP_GRID: dict[str, tuple[Any, ...]] = {
    "view.compact_at": (0.35, 0.5, 0.6),
    "view.hot_tokens": (2000, 4000, 8000),
    "view.step_tokens": (4000, 8000, 16000),
}
SERIES_POINTS = 300  # at most this many points per engine per session in the plots
EXIT_INTERRUPTED = 130


@dataclass
class ReplayOptions:
    hermes_home: Path | None = None
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
    for compact_at in SWEEP_GRID[keys[0]]:
        for hot in SWEEP_GRID[keys[1]]:
            for step in SWEEP_GRID[keys[2]]:
                defaults_on = sum(v == d for v, d in zip((compact_at, hot, step), (0.5, 4000, 8000), strict=True))
                if defaults_on < 1 or (step != 8000 and defaults_on < 2):
                    continue
                point = (compact_at, hot, step)
                if point in seen:
                    continue
                seen.add(point)
                settings = {**base, keys[0]: compact_at, keys[1]: hot, keys[2]: step}
                configs.append((f"sweep compact_at={compact_at:g} hot={hot} step={step}", settings))
    return configs


class _Series(Observer):
    """Observer collecting request sizes and compaction markers (request index) for the plots."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.compactions: list[int] = []

    def event(self, name: str, **data: Any) -> None:
        if name == "request":
            self.tokens.append(int(data.get("tokens") or 0))
        elif name == "compress" and data.get("outcome") == "boundary":
            self.compactions.append(len(self.tokens))


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


class _Engines:
    """The built-in compressor and Stowage (plus sweep settings) against a temporary HERMES_HOME."""

    def __init__(self, options: ReplayOptions, home: Path | None = None) -> None:
        try:
            from .. import replay_host
            from ..context_engine.replay import HostDriver, StandInSummarizer, TokenMeter
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
            raise CliError("stowage replay needs hermes-agent installed in this Python environment (it replays "
                           "through Hermes's built-in compressor)", 1, "no_host") from exc
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
                self.hosts[label] = replay_host.StowageHost(settings, home=self.home / f"stowage-{number}",
                                                            window=self.window, tools=self.tools, label=label)
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
            observer = _Series()
            if label == BUILTIN:
                target = self.host_module.builtin_target(summarizer, session.id, window=self.window, tools=self.tools)
            else:
                target = self.hosts[label].target(summarizer, session.id)
            driver = self.driver_cls(self.meter, window=self.window, price_models=(self.price,), observer=observer)
            result = driver.replay(session.messages, target)  # closes the target
            row = result.as_dict()
            row["cost"] = row["cost"][self.price.name]
            row["spilled_outputs"] = row["hook_replaced_results"]
            row["recoverable_outputs"] = self._recoverable(label, session.id) if label != BUILTIN else 0
            rows[label] = row
            if label in (BUILTIN, STOWAGE):
                series[label] = {"tokens": downsample(observer.tokens), "compactions": observer.compactions,
                                 "requests": len(observer.tokens)}
        self.meter.clear()  # streaming: nothing of this session stays cached
        return {"rows": rows, "series": series}

    def _recoverable(self, label: str, session_id: str) -> int:
        """Spilled outputs whose whole text the temporary store holds for this session."""
        root = self.hosts[label].home / "stowage"
        if not (root / "index.sqlite3").is_file():
            return 0
        from ..blobstore import BlobStore

        store = BlobStore(root)
        try:
            return len(store.list_blobs(session_id=session_id, kind="spill", limit=1_000_000))
        finally:
            close = getattr(store, "close", None)
            if callable(close):
                close()

    def close(self) -> None:
        self.host_module.cleanup_home(self.home)
        if self.previous_home is None:
            os.environ.pop("HERMES_HOME", None)
        else:
            os.environ["HERMES_HOME"] = self.previous_home


def _settings_of(engine: Any) -> dict[str, Any]:
    settings = getattr(engine, "settings", None)
    snapshot = settings.as_dict() if settings is not None and hasattr(settings, "as_dict") else {}
    flat = {f"{section}.{key}": value for section, values in snapshot.items() if isinstance(values, dict)
            for key, value in values.items() if section in ("view", "compaction", "spill")}
    return governing(flat)  # only the keys that apply: view.compact_at or compaction.threshold, never both


# -- sources ----------------------------------------------------------------------------------------
def open_source(options: ReplayOptions, hermes_home: Path) -> tuple[str, int | None, Iterator[Any]]:
    """(description, number of sessions when known, iterator of sessions); source errors raise CliError."""
    try:
        if options.source_file is not None:
            if options.session or options.since:
                raise CliError("--session and --since read state.db; with --from use --limit", 2, "usage")
            return (f"transcripts from {options.source_file}" + (f", {options.chain} per session"
                                                                  if options.chain > 1 else ""),
                    None, jsonl_sessions(options.source_file, chain=options.chain, limit=options.limit))
        since = parse_since(options.since) if options.since else None
        count, sessions = open_state_db(hermes_home, session=options.session, since=since, limit=options.limit)
        return f"sessions from {hermes_home / 'state.db'} (read from a private copy)", count, sessions
    except SourceError as exc:
        code = 2 if exc.kind in ("usage", "unknown_session") else 1
        raise CliError(str(exc), code, exc.kind) from exc


# -- the run ----------------------------------------------------------------------------------------
class _Progress:
    def __init__(self, stream: TextIO, enabled: bool, total: int | None) -> None:
        self.stream, self.enabled, self.total = stream, enabled, total
        self.tty = enabled and stream.isatty()
        self.started = time.perf_counter()

    def update(self, done: int, name: str, note: str = "") -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.started
        of = f"/{self.total}" if self.total else ""
        bar = ""
        if self.total:
            filled = int(24 * done / max(1, self.total))
            bar = "[" + "#" * filled + "." * (24 - filled) + "] "
        line = f"replay: {bar}{done}{of} sessions, {elapsed:.0f}s  {name[:40]}{note}"
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _replay_one(engines: _Engines, item: RecordedSession) -> dict[str, Any]:
    """One session's row for the report, or ``{"failed": reason}`` (one bad session never stops the others)."""
    try:
        replayed = engines.replay(item)
    except Exception as exc:  # noqa: BLE001 - RecursionError and MemoryError included: the session is skipped
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        return {"failed": f"replay failed: {type(exc).__name__}: {detail}"}
    return {"session": item.id, "title": item.title, "started_at": item.started_at, "recorded": item.counts(),
            "recorded_rows": item.recorded_rows, "host_compactions": item.host_compactions,
            "problems": item.problems, **replayed}


_WORKER: dict[str, _Engines] = {}


def _worker_start(options: ReplayOptions, home: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool and reports
    _WORKER["engines"] = _Engines(options, Path(home) / f"worker-{os.getpid()}")


def _worker_replay(item: RecordedSession) -> dict[str, Any]:
    return _replay_one(_WORKER["engines"], item)


def _results(engines: _Engines, items: Iterator[Any], jobs: int) -> Iterator[tuple[Any, dict[str, Any] | None]]:
    """(item, row) in source order; rows come from ``jobs`` worker processes, at most 2 x jobs sessions in
    flight (memory stays bounded)."""
    if jobs <= 1:
        for item in items:
            yield item, (_replay_one(engines, item) if isinstance(item, RecordedSession) else None)
        return
    import multiprocessing
    from collections import deque

    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_start,
                                                    initargs=(engines.options, str(engines.home)))
    try:
        pending: deque[tuple[Any, Any]] = deque()
        for item in items:
            future = pool.apply_async(_worker_replay, (item,)) if isinstance(item, RecordedSession) else None
            pending.append((item, future))
            while len(pending) >= 2 * jobs:
                first, job = pending.popleft()
                yield first, (job.get() if job is not None else None)
        while pending:
            first, job = pending.popleft()
            yield first, (job.get() if job is not None else None)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def run(options: ReplayOptions, hermes_home: Path, err: TextIO = sys.stderr) -> tuple[dict[str, Any], int]:
    """Replay every session of the source; returns (report, exit status)."""

    description, count, sessions = open_source(options, hermes_home)
    # the engines' own operational warnings (a compaction that did not clear the threshold, ...) are part of
    # the replay, not messages for the user: keep them off the terminal (Python prints them when no handler is set)
    quiet = logging.NullHandler()
    logging.getLogger().addHandler(quiet)
    try:
        return _run(options, description, count, sessions, err)
    finally:
        logging.getLogger().removeHandler(quiet)


def _run(options: ReplayOptions, description: str, count: int | None, sessions: Iterator[Any],
         err: TextIO) -> tuple[dict[str, Any], int]:
    from .replay_report import build_report

    engines = _Engines(options)
    done: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    interrupted = False
    progress = _Progress(err, options.progress, count)
    started = time.perf_counter()

    def replayable(item: Any) -> bool:
        if isinstance(item, SkippedSession):
            skipped.append({"session": item.id, "reason": item.reason})
            return False
        if not item.messages or not any(m.get("role") == "user" for m in item.messages):
            skipped.append({"session": item.id, "reason": "no user message to replay"})
            return False
        return True

    try:
        try:
            for item, row in _results(engines, (i for i in sessions if replayable(i)), options.jobs):
                if row is None:
                    continue
                if "failed" in row:
                    skipped.append({"session": item.id, "reason": row["failed"]})
                    continue
                done.append(row)
                progress.update(len(done), item.id)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            close = getattr(sessions, "close", None)
            if callable(close):
                close()
        progress.finish()
        report = build_report(done, skipped, options=options, source=description, engines=engines,
                              interrupted=interrupted, wall_s=time.perf_counter() - started)
    finally:
        engines.close()
    return report, (EXIT_INTERRUPTED if interrupted else 0)
