"""Say once, in the user's terminal, when Stowage is loaded but Hermes will not run it.

Hermes loads an enabled plugin whatever ``context.engine`` says, and when the
engine name does not match it only logs a warning and runs its built-in
compressor.  ``register(ctx)`` runs once per process while the host discovers
plugins, before the session starts, with stderr still the user's terminal:
one line there is the notice nobody can miss.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any

from .load_failure import COST_WITHOUT, REQUIREMENTS, pip_command

logger = logging.getLogger(__name__)
ENGINE = "stowage"
_announced = False


def doctor_command() -> str:
    """How this install runs doctor: the console script of a pip install, the host subcommand of a plugin folder."""
    return "hermes stowage doctor" if __name__.startswith("hermes_plugins.") else "stowage doctor"


def not_selected_notice(raw_config: Any) -> str | None:
    """The notice for this config, or None when Stowage is the selected engine."""
    context = raw_config.get("context") if isinstance(raw_config, dict) else None
    engine = context.get("engine", "compressor") if isinstance(context, dict) else "compressor"
    engine = "compressor" if engine is None else str(engine)
    if engine == ENGINE:
        return None
    if engine.strip().lower() == ENGINE:
        return (
            f"stowage: the Stowage plugin is loaded but context.engine is {engine!r}; Hermes matches engine "
            f"names exactly and runs its built-in compressor. Fix: set `context: {{engine: {ENGINE}}}` in "
            f"config.yaml (run `{doctor_command()}` to check)"
        )
    return (
        f"stowage: the Stowage plugin is loaded but not selected (context.engine is {engine!r}): this session "
        f"runs {'the built-in compressor' if engine == 'compressor' else repr(engine)}. To use Stowage, set "
        f"`context: {{engine: {ENGINE}}}` in config.yaml (run `{doctor_command()}` to check)"
    )


def announce_if_not_selected() -> None:
    global _announced
    if _announced:
        return
    _announced = True
    try:
        from .host_config import read_raw_config

        message = not_selected_notice(read_raw_config())
    except Exception:  # noqa: BLE001 - an unreadable config is reported when the engine starts
        return
    if message is not None:
        _say(message)


def _say(message: str) -> None:
    """One line in the log and in the user's terminal (stderr, while Hermes loads its plugins)."""
    logger.warning("%s", message)
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr (daemonised gateway): the log line remains
        pass


# the requirements whose absence alone degrades a session (bpe-openai matters only while tiktoken's cache lacks
# its file, which doctor's offline tokenizer check tells)
DEGRADING = ("tiktoken", "snowballstemmer")


def _imports(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def degraded_notice(missing: list[str], python: str) -> str | None:
    """The notice for requirements that are missing yet let the plugin load, with what each costs (None: none)."""
    costly = [m for m in missing if m in DEGRADING]
    if not costly:
        return None
    what = "; ".join(f"without {REQUIREMENTS[m]}, {COST_WITHOUT[m]}" for m in costly)
    return f"stowage: Stowage runs degraded: {what}. Fix: {pip_command(python)}"


def announce_if_degraded() -> None:
    """Say it, when Stowage is the engine, that a requirement it loads without is missing (tiktoken above all)."""
    try:
        from .host_config import read_raw_config

        if not_selected_notice(read_raw_config()) is not None:
            return
        missing = [m for m in DEGRADING if not _imports(m)]
    except Exception:  # noqa: BLE001 - a notice must never cost the session anything
        return
    message = degraded_notice(missing, sys.executable)
    if message is not None:
        _say(message)
