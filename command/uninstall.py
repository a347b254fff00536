"""``stowage uninstall [--purge] [--yes]``: take Stowage out of Hermes's config before removing its code.

Removing the plugin alone leaves ``context.engine: stowage``,
``plugins.enabled: [stowage]`` and ``plugins.entries.stowage`` behind, and
Hermes then falls back to its built-in compressor at every start with only a
log line.  This cuts exactly those lines out of ``config.yaml`` (every other
byte kept, written through a link to the file it points at; a copy of the
old file is kept beside it), unlinks the dashboard tab of a pip install, and
prints the one command that removes the code on the active route.
``--purge`` also deletes what Stowage wrote in its store folder (nothing
else: the folder's marker and names tell) and the ``stowage:`` block, and
names what it leaves.  Everything is planned and checked first (links,
permissions, the edit itself); a plan that cannot be carried out whole
changes nothing.  Run it before removing the code: afterwards the command is gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..blobstore.ownership import describe, inventory
from ..context_engine.chat.markers import SPILL_HEADER
from ..context_engine.records.session_files import STORE_COMPANIONS
from .config_edit import ConfigEditError, config_without_stowage, edit_out_stowage
from .dashboard import dashboard
from .env import CliError, Env, Outcome
from .host_caps import CAPS
from .identity import PLUGIN_KEY, entry_point_route, user_plugin_folders
from .purge import ask_terminal, can_ask
from .replay.sources import messages_containing

__all__ = ["BACKUP_SUFFIX", "config_without_stowage", "removal_command", "uninstall"]

BACKUP_SUFFIX = ".before-stowage-uninstall"
STUB_MARK = SPILL_HEADER[: SPILL_HEADER.index(":") + 1]  # "[stowage:", how every stub Stowage writes begins


@dataclass(frozen=True)
class ConfigPlan:
    """The new text of ``target`` (``path`` itself, or the file its link points at) and where the old goes."""

    path: Path
    target: Path
    old: bytes
    new: bytes
    backup: Path
    changes: list[str]


@dataclass
class StorePlan:
    """What a purge deletes in the store folder and what it leaves there, decided before anything is deleted."""

    configured: Path
    folder: Path  # the real folder (a link followed)
    delete: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # entries Stowage did not write
    remove_folder: bool = False
    note: str | None = None  # why nothing is deleted, or how a link was followed


def _refuse(reason: str, kind: str) -> CliError:
    return CliError(f"{reason} (nothing was changed)", 1, kind)


def _writable_folder(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _backup_path(path: Path) -> Path:
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    number = 0
    while backup.exists() or backup.is_symlink():  # an earlier uninstall's copy stays
        number += 1
        backup = path.with_name(f"{path.name}{BACKUP_SUFFIX}.{number}")
    return backup


def plan_config(path: Path, purge: bool) -> ConfigPlan | None:
    """The edit of ``config.yaml`` (None: nothing names Stowage, or no file); refuses what it cannot do whole."""
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a dangling link or a loop
        raise _refuse(f"{path} is a link Stowage cannot follow ({exc}); fix the link first", "config_link") from None
    if not target.is_file():
        raise _refuse(f"{path} is not a file; fix it first", "config_unreadable")
    try:
        old = target.read_bytes()
        text = old.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(f"cannot read {path}: {exc}; fix or restore the file first", "config_unreadable") from None
    try:
        new, changes = edit_out_stowage(text, purge, lifted=((cap.key, cap.lifted) for cap in CAPS))
    except ConfigEditError as exc:
        raise _refuse(
            f"cannot edit {target} safely: {exc}. Make these edits by hand, or fix the file first", "config_edit"
        ) from None
    if not changes:
        return None
    via = f" (the file {path} links to)" if target != path else ""
    if not _writable_folder(target.parent) or not os.access(target, os.W_OK):
        raise _refuse(
            f"cannot write {target}{via}: permission denied. Make these edits by hand: " + "; ".join(changes),
            "config_readonly",
        )
    if not _writable_folder(path.parent):
        raise _refuse(
            f"cannot keep a copy of the old config beside {path}: its folder is not writable", "config_readonly"
        )
    return ConfigPlan(path, target, old, new.encode("utf-8"), _backup_path(path), changes)


def plan_store(configured: Path) -> StorePlan | None:
    """What a purge deletes: only the names Stowage writes, never through a link inside the folder."""
    if not (configured.exists() or configured.is_symlink()):
        return None
    try:
        folder = configured.resolve(strict=True)
    except (OSError, RuntimeError):
        return StorePlan(configured, configured, note=f"the store {configured} is a link to nothing: left as it is")
    if not folder.is_dir():
        return StorePlan(configured, folder, note=f"the store path {configured} is not a folder: left as it is")
    try:
        found = inventory(folder, STORE_COMPANIONS)
    except OSError as exc:
        raise _refuse(f"cannot list the store folder {folder}: {exc}", "store_unreadable") from None
    plan = StorePlan(configured, folder, delete=list(found.own), left=list(found.foreign))
    linked = folder != configured.absolute()
    if linked:
        plan.note = (
            f"the store {configured} is a link to {folder}: Stowage's files there deleted, the link and the folder kept"
        )
    # a folder reached through a link, or one Stowage did not make, is the user's: only emptied of Stowage's files
    plan.remove_folder = not plan.left and not linked and (found.created_folder or not found.marked)
    if plan.delete and not _writable_folder(folder):
        raise _refuse(f"cannot delete in the store folder {folder}: permission denied", "store_readonly")
    return plan


def _write_config(plan: ConfigPlan) -> None:
    """The old bytes kept as the backup, then the new ones put in place atomically (through a link: its target)."""
    mode = plan.target.stat().st_mode & 0o777
    fd = os.open(plan.backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(plan.old)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".yaml", dir=str(plan.target.parent))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(plan.new)
        os.chmod(tmp, mode)
        os.replace(tmp, plan.target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _delete_store(plan: StorePlan) -> list[str]:
    """Delete the planned entries (a real folder's tree, never a link); what could not be deleted."""
    failed = []
    for name in plan.delete:
        path = plan.folder / name
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            failed.append(f"{name} ({exc.strerror or exc})")
    if plan.remove_folder and not failed:
        try:
            plan.folder.rmdir()
        except OSError:
            plan.remove_folder = False
    return failed


def stale_previews(hermes_home: Path) -> int | None:
    """How many messages in Hermes's ``state.db`` hold a Stowage stub (None: unknown); read-only."""
    return messages_containing(hermes_home / "state.db", STUB_MARK)


def removal_command(env: Env) -> str:
    """The command that removes Stowage's code on the route Hermes uses (after this one)."""
    folders = user_plugin_folders(env.hermes_home)
    lines = []
    for folder in folders:
        path = Path(folder["path"])
        if path.is_symlink():  # a link to a checkout: remove the link, the checkout is the user's
            lines.append(f"rm {path}")
        else:
            lines.append(f"hermes plugins remove {PLUGIN_KEY}" if (path / ".git").exists() else f"rm -r {path}")
    route = entry_point_route()
    if route.get("found"):
        lines.append(f"{route.get('python')} -m pip uninstall hermes-stowage")
    return " && ".join(lines) if lines else "nothing: no install of Stowage is visible to Hermes"


def _store_lines(plan: StorePlan, failed: list[str]) -> list[str]:
    lines = []
    if plan.note:
        lines.append(f"  {plan.note}")
    if plan.delete:
        done = [n for n in plan.delete if not any(f.startswith(n + " ") for f in failed)]
        if done:
            lines.append(f"  deleted in {plan.folder}: {describe(done, 12)}")
    if failed:
        lines.append(f"  could NOT delete in {plan.folder}: {', '.join(failed)}")
    if plan.left:
        lines.append(f"  left in {plan.folder}, not written by Stowage: {describe(plan.left)}; the folder stays")
    elif plan.remove_folder:
        lines.append(f"  the store folder {plan.folder} removed")
    elif plan.delete:
        lines.append(f"  the folder {plan.folder} stays (Stowage did not create it), empty of Stowage's files")
    return lines


def uninstall(
    env: Env,
    *,
    purge: bool,
    yes: bool,
    ask: Callable[[str], bool] = ask_terminal,
    interactive: Callable[[], bool] = can_ask,
) -> Outcome:
    # plan: everything is read and checked before anything changes
    config = plan_config(env.config_path, purge)
    store = plan_store(env.store_root) if purge else None
    changes = list(config.changes) if config else []
    if config and config.target != config.path:
        changes.append(f"written to {config.target}, the file {config.path} links to (the link stays)")
    if store and store.delete:
        changes.append(f"delete Stowage's files in {store.folder}: {describe(store.delete, 12)}")
    if store and store.left:
        changes.append(f"leave what Stowage did not write there: {describe(store.left)}")
    if changes and not yes:
        if not interactive():
            raise CliError(
                "would change: " + "; ".join(changes) + ". Refusing without --yes (stdin is not a terminal)",
                1,
                "needs_confirmation",
            )
        if not ask("Stowage uninstall will:\n  " + "\n  ".join(changes) + "\nGo ahead?"):
            return Outcome({"cancelled": True, "changes": []}, "cancelled: nothing changed", 1)
    # act
    if config is not None:
        try:
            _write_config(config)
        except OSError as exc:
            raise _refuse(f"cannot write {config.target}: {exc}", "config_write") from None
    link = dashboard(env, "disable").data.get("removed", False)
    failed: list[str] = []
    if store is not None and store.delete:
        env.close()
        failed = _delete_store(store)
    lines = ["Stowage uninstall"]
    lines += [f"  {c}" for c in (config.changes if config else [])] or [
        "  config.yaml names no Stowage setting: nothing to change"
    ]
    if config is not None and config.target != config.path:
        lines.append(f"  edited {config.target} through the link {config.path}")
    if store is not None:
        lines += _store_lines(store, failed)
    if link:
        lines.append("  the dashboard tab link removed")
    if config is not None:
        lines.append(
            f"  left: {config.backup}, the config as it was (it still names Stowage): "
            "delete it once you no longer need it"
        )
    if not purge:
        lines.append(
            f"  kept: the store {env.store_root} and the stowage: block (`stowage uninstall --purge` deletes both)"
            if env.store_root.exists()
            else "  kept: the stowage: block (`stowage uninstall --purge` deletes it)"
        )
    previews = stale_previews(env.hermes_home) if purge else None
    if purge and previews is not None:
        lines.append(
            f"  left: Hermes's session database {env.hermes_home / 'state.db'}, where {previews} message(s) hold "
            "Stowage's `[stowage: …]` previews; their handles now point at nothing (the store is gone). "
            "It is Hermes's file: Stowage does not edit it"
        )
    code_step = removal_command(env)
    lines.append(f"Hermes now runs its built-in compressor. Last step, remove the code: {code_step}")
    data: dict[str, Any] = {
        "changes": changes,
        "config_written": str(config.target) if config else None,
        "backup": str(config.backup) if config else None,
        "dashboard_link_removed": link,
        "store_deleted": bool(store and store.delete and not failed),
        "store_folder_removed": bool(store and store.remove_folder and not failed),
        "store_deleted_entries": list(store.delete) if store else [],
        "store_left": list(store.left) if store else [],
        "store_failed": failed,
        "state_db_stale_previews": previews,
        "remove_code": code_step,
    }
    return Outcome(data, "\n".join(lines), 1 if failed else 0)
