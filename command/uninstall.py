"""``stowage uninstall [--purge] [--yes]``: take Stowage out of Hermes's config before removing its code.

Removing the plugin alone leaves ``context.engine: stowage``,
``plugins.enabled: [stowage]`` and ``plugins.entries.stowage`` behind, and
Hermes then falls back to its built-in compressor at every start with only a
log line.  This edits ``config.yaml`` so Hermes runs its compressor by
choice (a copy of the old file is kept beside it), unlinks the dashboard tab
of a pip install, and prints the one command that removes the code on the
active route.  ``--purge`` also deletes the store folder and the
``stowage:`` block.  Run it before removing the code: afterwards the command is gone.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import yaml

from .dashboard import dashboard
from .env import CliError, Env, Outcome
from .identity import PLUGIN_KEY, entry_point_route, read_host_config, user_plugin_folders
from .purge import ask_terminal, can_ask

BACKUP_SUFFIX = ".before-stowage-uninstall"


def config_without_stowage(raw: dict[str, Any], purge: bool) -> tuple[dict[str, Any], list[str]]:
    """The config with every line that names Stowage taken out, and what changed (pure)."""
    config = copy.deepcopy(raw) if raw else {}
    changes: list[str] = []
    context = config.get("context")
    if isinstance(context, dict) and str(context.get("engine", "")).strip().lower() == PLUGIN_KEY:
        context["engine"] = "compressor"
        changes.append("context.engine: compressor (Hermes's built-in compressor)")
    plugins = config.get("plugins")
    if isinstance(plugins, dict):
        for key in ("enabled", "disabled"):
            names = plugins.get(key)
            if isinstance(names, str):
                names = [names]
            if isinstance(names, list) and PLUGIN_KEY in names:
                plugins[key] = [n for n in names if n != PLUGIN_KEY]
                changes.append(f"plugins.{key}: {PLUGIN_KEY} removed")
        entries = plugins.get("entries")
        if isinstance(entries, dict) and PLUGIN_KEY in entries:
            del entries[PLUGIN_KEY]
            changes.append(f"plugins.entries.{PLUGIN_KEY} removed")
            if not entries:
                del plugins["entries"]
    if purge and "stowage" in config:
        del config["stowage"]
        changes.append("the stowage: block removed")
    return config, changes


def _write_config(path: Path, config: dict[str, Any]) -> Path:
    """Atomically, keeping the old file as ``config.yaml.before-stowage-uninstall`` (``.1``, ... when taken)."""
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    number = 0
    while backup.exists():  # an earlier uninstall's copy stays
        number += 1
        backup = path.with_name(f"{path.name}{BACKUP_SUFFIX}.{number}")
    shutil.copy2(path, backup)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".yaml", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.safe_dump(config, handle, sort_keys=False, allow_unicode=True)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def removal_command(env: Env) -> str:
    """The command that removes Stowage's code on the route Hermes uses (after this one)."""
    folders = user_plugin_folders(env.hermes_home)
    lines = []
    for folder in folders:
        path = Path(folder["path"])
        lines.append(f"hermes plugins remove {PLUGIN_KEY}" if (path / ".git").exists() else f"rm -r {path}")
    route = entry_point_route()
    if route.get("found"):
        lines.append(f"{route.get('python')} -m pip uninstall hermes-stowage")
    return " && ".join(lines) if lines else "nothing: no install of Stowage is visible to Hermes"


def uninstall(
    env: Env,
    *,
    purge: bool,
    yes: bool,
    ask: Callable[[str], bool] = ask_terminal,
    interactive: Callable[[], bool] = can_ask,
) -> Outcome:
    raw, error = read_host_config(env.config_path)
    if error:
        raise CliError(f"{error}; fix or restore the file first (nothing was changed)", 1, "config_unreadable")
    config, changes = config_without_stowage(raw, purge)
    store = env.store_root
    store_present = store.exists()
    if purge and store_present:
        changes.append(f"the store folder {store} deleted (stored outputs, index, session status and summaries)")
    if changes and not yes:
        if not interactive():
            raise CliError(
                "would change: " + "; ".join(changes) + ". Refusing without --yes (stdin is not a terminal)",
                1,
                "needs_confirmation",
            )
        if not ask("Stowage uninstall will:\n  " + "\n  ".join(changes) + "\nGo ahead?"):
            return Outcome({"cancelled": True, "changes": []}, "cancelled: nothing changed", 1)
    backup = None
    config_changes = [c for c in changes if not c.startswith("the store folder")]
    if config_changes and env.config_path.is_file():
        backup = _write_config(env.config_path, config)
    link = dashboard(env, "disable").data.get("removed", False)
    if purge and store_present:
        env.close()
        shutil.rmtree(store)
    lines = ["Stowage uninstall"]
    lines += [f"  {c}" for c in changes] or ["  config.yaml names no Stowage setting: nothing to change"]
    if backup is not None:
        lines.append(f"  the previous config is kept as {backup}")
    if link:
        lines.append("  the dashboard tab link removed")
    if not purge:
        lines.append(
            f"  kept: the store {store} and the stowage: block (`stowage uninstall --purge` deletes both)"
            if store_present
            else "  kept: the stowage: block (`stowage uninstall --purge` deletes it)"
        )
    code_step = removal_command(env)
    lines.append(f"Hermes now runs its built-in compressor. Last step, remove the code: {code_step}")
    data = {
        "changes": changes,
        "backup": str(backup) if backup else None,
        "dashboard_link_removed": link,
        "store_deleted": bool(purge and store_present),
        "remove_code": code_step,
    }
    return Outcome(data, "\n".join(lines))
