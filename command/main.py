"""``stowage``: the operator's command line for the Stowage blob store.

    stowage [--hermes-home PATH] [--store PATH] [--json] COMMAND
    stowage status                       what is stored, limits, tokenizer
    stowage summary [--session ID] [--all]   the summary a compaction put into the history
    stowage blobs ls [--session S] [--kind K] [--limit N]
    stowage blobs show HANDLE            metadata, provenance, or the tombstone
    stowage blobs cat HANDLE [--lines A:B] [--force]
    stowage blobs rm HANDLE...           delete blobs (tombstones stay)
    stowage purge --session ID | --older-than DAYS [--yes] [--force]
    stowage gc [--dry-run]               apply retention now (or preview it)
    stowage doctor [--repair] [--no-verify]
    stowage setup [--dry-run]            lift Hermes's output caps (the `hermes config set` lines it runs), link the tab
    stowage dashboard enable|disable     the dashboard tab for a pip install
    stowage uninstall [--purge] [--yes]  take Stowage out of config.yaml before removing its code
    stowage replay [--session ID] [--since DATE] [--limit N] [--from FILE] [--sweep] [--html PATH]
                                         what Stowage would have done on recorded sessions
    stowage help [COMMAND]               the commands, or one command's options

Exit status: 0 success, 1 failure (doctor: problems remain), 2 bad usage or
a handle that names no readable blob, 130 a replay stopped with Ctrl-C (its
partial report is written).  Runs without Hermes installed: it only needs the
project and the standard library (and PyYAML for the config); ``replay``
alone needs hermes-agent (it replays through the built-in compressor).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence, TextIO

from ..blobstore import HandleError, StoreError
from ..host.version import __version__
from .blobs import cat, gc, ls, show
from .catalog import COMMANDS
from .env import CliError, Env, Outcome
from .formatting import jsonable
from .purge import purge, rm
from .replay import add_replay_arguments, replay_command
from .status import TerminalProgress, doctor, status
from .summary import summary
from .terminal import safe_text

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Global options, accepted before or after the subcommand.

    Subcommand copies default to SUPPRESS so they never overwrite a value
    given before the subcommand.
    """
    default = (lambda value: argparse.SUPPRESS) if suppress else (lambda value: value)
    parser.add_argument(
        "--hermes-home",
        metavar="PATH",
        default=default(None),
        help="Hermes home folder (default: $HERMES_HOME or ~/.hermes)",
    )
    parser.add_argument(
        "--store",
        metavar="PATH",
        default=default(None),
        help="blob store folder (default: stowage.store.path, else $HERMES_HOME/stowage)",
    )
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="machine-readable output (absolute UTC times)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stowage",
        description="Is Stowage the engine Hermes runs, and what did it store: inspect and maintain the store.",
        epilog="Exit status: 0 ok, 1 failure or problems remain, 2 bad usage or bad handle.",
    )
    _global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"stowage {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(parent: Any, name: str, help_text: str = "") -> argparse.ArgumentParser:
        text = help_text or COMMANDS[name]
        p = parent.add_parser(name, help=text, description=text)
        _global_options(p, suppress=True)
        return p

    command(sub, "status")
    p = command(sub, "help")
    p.add_argument("topic", nargs="?", metavar="COMMAND", help="the command whose options to show")
    p = command(sub, "summary")
    p.add_argument("--session", metavar="ID", help="this session (default: the newest one)")
    p.add_argument("--all", dest="show_all", action="store_true", help="every summary of the session, oldest first")
    blobs = command(sub, "blobs")
    blob_sub = blobs.add_subparsers(dest="blob_command", metavar="ACTION")
    p = command(blob_sub, "ls", "list blobs, most recently used first")
    p.add_argument("--session", help="only blobs this session produced or was granted")
    p.add_argument("--kind", help="only blobs stored with this kind (spill, pruned, window, ...)")
    p.add_argument("--limit", type=int, default=50, help="at most this many rows (default 50)")
    p = command(blob_sub, "show", "metadata and provenance of one blob (or its tombstone)")
    p.add_argument("handle", help="blob handle: 16 to 64 hex characters")
    p = command(blob_sub, "cat", "write a blob's bytes to stdout")
    p.add_argument("handle", help="blob handle: 16 to 64 hex characters")
    p.add_argument("--lines", metavar="A:B", help="only lines A to B (1-based, inclusive; A: or :B allowed)")
    p.add_argument("--force", action="store_true", help="write binary content even to a terminal")
    p = command(
        blob_sub, "rm", "delete blobs, leaving tombstones that explain them (nothing is removed if one handle is bad)"
    )
    p.add_argument("handles", nargs="+", metavar="HANDLE", help="blob handles: 16 to 64 hex characters")
    p = command(sub, "purge")
    p.add_argument("--session", metavar="ID", help="every blob this session produced")
    p.add_argument("--older-than", metavar="DAYS", type=float, help="every blob stored more than DAYS days ago")
    p.add_argument("--yes", action="store_true", help="do not ask (required when stdin is not a terminal)")
    p.add_argument("--force", action="store_true", help="also a live session's blobs")
    p = command(sub, "gc")
    p.add_argument("--dry-run", action="store_true", help="only report what would be evicted and why")
    p = command(sub, "doctor")
    p.add_argument("--repair", action="store_true", help="fix what is safe to fix (quarantine corrupt blobs, ...)")
    p.add_argument("--no-verify", dest="verify", action="store_false", help="skip rehashing every blob (faster)")
    p = command(sub, "setup")
    p.add_argument("--dry-run", action="store_true", help="print the `hermes config set` lines without running them")
    p = command(sub, "dashboard")
    p.add_argument("action", choices=("enable", "disable"))
    p = command(sub, "uninstall")
    p.add_argument("--purge", action="store_true", help="also delete the store folder and the stowage: block")
    p.add_argument("--yes", action="store_true", help="do not ask (required when stdin is not a terminal)")
    p = command(sub, "replay")
    add_replay_arguments(p)
    return parser


def dispatch(args: argparse.Namespace, env: Env) -> Outcome:
    """Run the parsed command; raises CliError / StoreError for the caller to report."""
    command = args.command or "status"
    if command == "status":
        return status(env)
    if command == "summary":
        return summary(env, args.session, args.show_all)
    if command == "gc":
        return gc(env, args.dry_run)
    if command == "doctor":
        if args.json or not sys.stderr.isatty():
            return doctor(env, repair=args.repair, verify=args.verify)
        progress = TerminalProgress(sys.stderr)
        try:
            return doctor(env, repair=args.repair, verify=args.verify, progress=progress)
        finally:
            progress.close()
    if command == "purge":
        return purge(env, session=args.session, older_than=args.older_than, yes=args.yes, force=args.force)
    if command == "replay":
        return replay_command(args, env)
    if command == "uninstall":
        from .uninstall import uninstall

        return uninstall(env, purge=args.purge, yes=args.yes)
    if command == "setup":
        from .setup import setup

        return setup(env, dry_run=args.dry_run)
    if command == "dashboard":
        from .dashboard import dashboard

        return dashboard(env, args.action)
    if command == "blobs":
        action = args.blob_command
        if action == "ls":
            return ls(env, args.session, args.kind, args.limit)
        if action == "show":
            return show(env, args.handle)
        if action == "cat":
            return cat(env, args.handle, args.lines, args.force, args.json)
        if action == "rm":
            return rm(env, args.handles)
        raise CliError("blobs needs an action: ls, show, cat or rm (see stowage blobs --help)", EXIT_USAGE, "usage")
    raise CliError(f"unknown command {command!r}", EXIT_USAGE, "usage")  # pragma: no cover - argparse guards


def _emit(outcome: Outcome, as_json: bool, out: TextIO, err: TextIO) -> None:
    if as_json:
        out.write(json.dumps(jsonable(outcome.data), indent=2, sort_keys=False) + "\n")
    elif outcome.text:
        out.write(safe_text(outcome.text) + "\n")
    if outcome.stderr and not as_json:
        err.write(safe_text(outcome.stderr) + "\n")


def _fail(message: str, code: int, kind: str, as_json: bool, out: TextIO, err: TextIO) -> int:
    from ..context_engine.redaction.shown import shown  # an error may quote a provider's echo of a key

    message = shown(message)
    if as_json:
        out.write(json.dumps({"ok": False, "error": {"code": kind, "message": message}}, indent=2) + "\n")
    else:
        err.write(f"stowage: error: {safe_text(message)}\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status instead of exiting."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["help"]:  # `stowage help [COMMAND]`: argparse's own help of the parser or the command
        argv = [*argv[1:2], "--help"]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    env = Env.resolve(args.hermes_home, args.store)
    try:
        outcome = dispatch(args, env)
        _emit(outcome, args.json, out, err)
        out.flush()
        return outcome.code
    except HandleError as exc:
        return _fail(str(exc), EXIT_USAGE, exc.code, args.json, out, err)
    except CliError as exc:
        return _fail(str(exc), exc.code, exc.kind, args.json, out, err)
    except StoreError as exc:
        return _fail(str(exc), EXIT_FAIL, exc.code, args.json, out, err)
    except BrokenPipeError:  # `stowage blobs cat X | head`: the reader left, which is fine
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    finally:
        env.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
