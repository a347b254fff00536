"""``stowage setup``: the host settings Stowage needs, each applied by a command the user sees.

Whole tool outputs: for each cap inside Hermes's tools that still cuts an
output before Stowage sees it (``host_caps``), it prints and runs the exact
``hermes config set KEY VALUE`` line (``hermesx`` on 0.20.1) through Hermes's
own command, so Hermes writes its config as it always does; nothing else in
config.yaml is touched.  The dashboard tab: linked where Hermes's dashboard
looks for a pip install (``stowage dashboard enable``), already in place in a
plugin folder.  ``--dry-run`` prints the lines without running them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..host.host_support import installed_version, parse
from .dashboard import dashboard
from .env import CliError, Env, Outcome
from .host_caps import fixed_caps, host_cli, still_cutting
from .identity import read_host_config

CLI_TIMEOUT = 300


def _cli_path(cli: str) -> str | None:
    beside = Path(sys.executable).parent / cli
    return shutil.which(cli) or (str(beside) if beside.exists() else None)


def setup(env: Env, dry_run: bool = False) -> Outcome:
    release = parse(installed_version())
    cli = host_cli()
    raw, error = read_host_config(env.config_path)
    if error:
        raise CliError(f"{error}; fix config.yaml first (nothing was changed)", 1)
    pending = still_cutting(raw, release)
    commands = [cap.set_command(cli) for cap, _, _ in pending]
    lines = ["Whole tool outputs (Hermes's own caps, lifted so Stowage sees every output whole):"]
    if not pending:
        lines.append("  every cap is already lifted")
    ran: list[dict[str, Any]] = []
    if pending and dry_run:
        lines += [f"  {command}" for command in commands]
    elif pending:
        executable = _cli_path(cli)
        if executable is None:
            raise CliError(
                f"`{cli}` is not on PATH, so Stowage cannot run Hermes's config command; run these, then "
                "`stowage doctor`:\n  " + "\n  ".join(commands),
                1,
            )
        child_env = {**os.environ, "HERMES_HOME": str(env.hermes_home)}
        for (cap, _, _), command in zip(pending, commands, strict=True):
            lines.append(f"+ {command}")
            try:
                done = subprocess.run(
                    [executable, "config", "set", cap.key, str(cap.lifted)],
                    env=child_env,
                    capture_output=True,
                    text=True,
                    timeout=CLI_TIMEOUT,
                    stdin=subprocess.DEVNULL,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                raise CliError(f"`{command}` could not run: {exc}", 1) from exc
            ran.append({"command": command, "returncode": done.returncode})
            if done.returncode != 0:
                said = (done.stderr or done.stdout).strip().splitlines()
                raise CliError(f"`{command}` failed (exit {done.returncode}): {said[-1] if said else ''}", 1)
        after, error = read_host_config(env.config_path)
        left = [cap.key for cap, _, _ in still_cutting(after, release)] if not error else [error]
        if left:
            raise CliError(f"after `{cli} config set`, config.yaml still cuts outputs: {', '.join(left)}", 1)
    fixed = fixed_caps(release)
    if fixed:
        lines.append("  no setting lifts these: " + "; ".join(fixed))
    tab = None if dry_run else _dashboard_tab(env)
    if tab is not None:
        lines += ["Dashboard tab:", f"  {tab}", f"  restart the dashboard if it is running: `{cli} dashboard`"]
    data = {"cli": cli, "commands": commands, "ran": ran, "dry_run": dry_run, "fixed": fixed, "dashboard": tab}
    return Outcome(data, "\n".join(lines))


def _dashboard_tab(env: Env) -> str:
    """Link the tab for a pip install (a plugin folder has it in place): what was done, in one line."""
    in_place = env.hermes_home / "plugins" / "stowage" / "dashboard" / "manifest.json"
    if in_place.is_file():
        return f"in place in the plugin folder: {in_place.parent}"
    try:
        outcome = dashboard(env, "enable")
    except CliError as exc:
        return f"not available: {exc}"
    return outcome.text.splitlines()[0]
