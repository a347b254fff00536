"""``stowage replay``: what Stowage would have done to the user's own recorded sessions.

Each recorded session (``state.db`` or a JSONL file, :mod:`.sources`)
is replayed offline through Hermes's built-in ``ContextCompressor`` and
through Stowage, driven as Hermes 0.19.0 drives an engine
(``command.replay.offline.driver``; the engines are built by
``stowage.command.replay.hermes_engines``, the replay's Hermes glue).  No model is
called: summaries come from the stand-in summarizer, named in every report.

Nothing of the user's is written: the source is read from a private copy,
Stowage runs with a temporary ``HERMES_HOME`` and store, removed at the end.
One session is in memory at a time; its figures are kept (plus a down-sampled
request-size series for the plots).  Ctrl-C stops after the current request
and still writes the report of the sessions done, marked partial.

Unlike the rest of ``stowage.command`` this command needs hermes-agent installed
(it imports the host's compressor, lazily, only here).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator, TextIO

from ..env import CliError
from ..terminal import safe_text
from .engines import Engines
from .hygiene import cap_messages
from .options import ReplayOptions
from .rebuild import StoreFiles, StowageTrace, describe, rebuild_outputs
from .report import build_report
from .sources import RecordedSession, SkippedSession, SourceError, jsonl_sessions, open_state_db, parse_since

EXIT_INTERRUPTED = 130


# -- sources ----------------------------------------------------------------------------------------
def open_source(options: ReplayOptions, hermes_home: Path) -> tuple[str, int | None, Iterator[Any]]:
    """(description, number of sessions when known, iterator of sessions); source errors raise CliError."""
    try:
        if options.source_file is not None:
            if options.session or options.since:
                raise CliError("--session and --since read state.db; with --from use --limit", 2, "usage")
            return (
                f"transcripts from {options.source_file}"
                + (f", {options.chain} per session" if options.chain > 1 else ""),
                None,
                jsonl_sessions(options.source_file, chain=options.chain, limit=options.limit),
            )
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
        line = safe_text(f"replay: {bar}{done}{of} sessions, {elapsed:.0f}s  {name[:40]}{note}")
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _replay_one(engines: Engines, item: RecordedSession) -> dict[str, Any]:
    """One session's row for the report, or ``{"failed": reason}`` (one bad session never stops the others)."""
    trace = rebuild_from_store(item, engines.options.store_root)
    try:
        replayed = engines.replay(item)
    except Exception as exc:  # noqa: BLE001 - RecursionError and MemoryError included: the session is skipped
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        return {"failed": f"replay failed: {type(exc).__name__}: {detail}"}
    return {
        "session": item.id,
        "title": item.title,
        "started_at": item.started_at,
        "recorded": item.counts(),
        "recorded_rows": item.recorded_rows,
        "host_compactions": item.host_compactions,
        "problems": item.problems,
        "stowage_recorded": trace.as_dict(),
        **replayed,
    }


def rebuild_from_store(item: RecordedSession, store_root: Path | None) -> StowageTrace:
    """Stowage's previews and stubs in the recorded history replaced by the originals the store still holds."""
    trace = StowageTrace(summaries=item.stowage_summaries)
    rebuild_outputs(item.messages, StoreFiles(store_root), trace)
    if trace.rebuilt:
        cap_messages(item.messages, item.problems)
    if trace.ran_stowage:
        item.problems.append(describe(trace))
    return trace


_WORKER: dict[str, Engines] = {}


def _worker_start(options: ReplayOptions, home: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool and reports
    _WORKER["engines"] = Engines(options, Path(home) / f"worker-{os.getpid()}")


def _worker_replay(item: RecordedSession) -> dict[str, Any]:
    return _replay_one(_WORKER["engines"], item)


def _results(engines: Engines, items: Iterator[Any], jobs: int) -> Iterator[tuple[Any, dict[str, Any] | None]]:
    """(item, row) in source order; rows come from ``jobs`` worker processes, at most 2 x jobs sessions in
    flight (memory stays bounded)."""
    if jobs <= 1:
        for item in items:
            yield item, (_replay_one(engines, item) if isinstance(item, RecordedSession) else None)
        return
    import multiprocessing
    from collections import deque

    pool = multiprocessing.get_context("fork").Pool(
        jobs, initializer=_worker_start, initargs=(engines.options, str(engines.home))
    )
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


def _run(
    options: ReplayOptions, description: str, count: int | None, sessions: Iterator[Any], err: TextIO
) -> tuple[dict[str, Any], int]:
    engines = Engines(options)
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
        report = build_report(
            done,
            skipped,
            options=options,
            source=description,
            engines=engines,
            interrupted=interrupted,
            wall_s=time.perf_counter() - started,
        )
    finally:
        engines.close()
    return report, (EXIT_INTERRUPTED if interrupted else 0)
