"""The ``stowage replay`` arguments and their mapping to a run, a report file and an exit status."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..env import CliError, Env, Outcome
from .options import PRICE_PRESETS, ReplayOptions, price_model
from .run import run

DEFAULT_HTML = "stowage-replay.html"


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--session", metavar="ID", help="only this state.db session")
    p.add_argument("--since", metavar="DATE", help="only state.db sessions started on or after DATE (YYYY-MM-DD, UTC)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N sessions (the newest N from state.db)")
    p.add_argument(
        "--from",
        dest="source_file",
        metavar="FILE",
        help="JSONL(.gz) of OpenAI-format transcripts instead of $HERMES_HOME/state.db",
    )
    p.add_argument(
        "--chain",
        type=int,
        default=1,
        metavar="K",
        help="with --from: replay K consecutive transcripts as one long session (default 1)",
    )
    p.add_argument(
        "--window",
        type=int,
        default=128_000,
        metavar="TOKENS",
        help="context window the sessions are replayed at (default 128000)",
    )
    p.add_argument(
        "--price",
        choices=sorted(PRICE_PRESETS),
        default=None,
        help="price preset for cached input (default anthropic: read 0.1x, write 1.25x)",
    )
    p.add_argument("--cache-read", type=float, metavar="X", help="price of a cached input token (x input price)")
    p.add_argument("--cache-write", type=float, metavar="Y", help="price of a newly cached input token (x input)")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a stowage setting to replay with, e.g. view.compact_at=0.5 (repeatable)",
    )
    p.add_argument(
        "--sweep",
        action="store_true",
        help="also try a small grid of view.compact_at, view.hot_tokens, view.step_tokens and name the "
        "cheapest with no request over the window",
    )
    p.add_argument(
        "--html", metavar="PATH", default=None, help=f"where to write the HTML report (default ./{DEFAULT_HTML})"
    )
    p.add_argument("--no-html", action="store_true", help="write no HTML report")
    p.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="replay N sessions at a time in worker processes (default 1)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _settings(items: list[str]) -> dict[str, Any]:
    import yaml

    settings: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise CliError(f"--set expects KEY=VALUE, got {item!r}", 2, "usage")
        key, raw = item.split("=", 1)
        try:
            settings[key.strip()] = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise CliError(f"--set {item!r}: the value is not valid YAML", 2, "usage") from exc
    return settings


def _write_html(path: Path, text: str) -> None:
    """Atomically: a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".stowage-replay-", suffix=".html", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replay_command(args: argparse.Namespace, env: Env) -> Outcome:
    from ...context_engine.redaction.shown import shown_record
    from .page import render
    from .report import text_summary

    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1", 2, "usage")
    if args.chain < 1 or args.window < 1000:
        raise CliError("--chain must be at least 1 and --window at least 1000", 2, "usage")
    html = None if args.no_html else Path(args.html or DEFAULT_HTML).expanduser().absolute()
    home = env.hermes_home.absolute()
    if html is not None and (html == home / "state.db" or html.parent == home / "stowage"):
        raise CliError(f"--html {html} would overwrite Hermes's or Stowage's files; choose another path", 2, "usage")
    options = ReplayOptions(
        hermes_home=home,
        store_root=env.store_root,
        source_file=Path(args.source_file).expanduser() if args.source_file else None,
        session=args.session,
        since=args.since,
        limit=args.limit,
        chain=args.chain,
        window=args.window,
        price=price_model(args.price, args.cache_read, args.cache_write),
        settings=_settings(args.settings),
        sweep=args.sweep,
        html=html,
        progress=not args.quiet,
        jobs=max(1, args.jobs),
    )
    try:
        report, code = run(options, home, sys.stderr)
    except CliError:
        raise
    except KeyboardInterrupt as exc:  # before the first session: nothing to report
        raise CliError("interrupted before any session was replayed", 130, "interrupted") from exc
    except Exception as exc:  # never a traceback to the user
        raise CliError(f"replay failed: {type(exc).__name__}: {exc}", 1, "replay_failed") from exc
    report = shown_record(report)  # the report, its page and its JSON quote summary errors and session titles
    if html is not None:
        try:
            _write_html(html, render(report))
        except OSError as exc:
            raise CliError(f"cannot write the report to {html}: {exc.strerror or exc}", 1, "write") from exc
        report["html"] = str(html)
    if not report["sessions_replayed"] and not report["interrupted"]:
        code = 1
    return Outcome(report, text_summary(report, str(html) if html else None), code=code)
