"""``stowage dashboard enable|disable``: the dashboard tab for a pip install.

Hermes's dashboard looks for tabs only in user-plugin folders
(``$HERMES_HOME/plugins/<name>/dashboard/manifest.json``).  The git-clone and
user-plugin routes have the tab in place; a pip install ships it inside the
package, and ``enable`` links it to ``$HERMES_HOME/plugins/stowage-dashboard/dashboard``
(a folder without ``plugin.yaml``, which Hermes's plugin loader skips).
"""

from __future__ import annotations

from pathlib import Path

from .env import CliError, Env, Outcome

LINK_FOLDER = "stowage-dashboard"
SHIPPED = Path(__file__).resolve().parent.parent / "dashboard"


def dashboard(env: Env, action: str) -> Outcome:
    plugins = env.hermes_home / "plugins"
    folder, link = plugins / LINK_FOLDER, plugins / LINK_FOLDER / "dashboard"
    if action == "disable":
        removed = link.is_symlink()
        if removed:
            link.unlink()
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        text = f"removed the dashboard tab link {link}" if removed else f"no dashboard tab link at {link}"
        return Outcome({"action": "disable", "link": str(link), "removed": removed}, text + " (restart the dashboard)")
    if not (SHIPPED / "manifest.json").is_file():
        raise CliError(
            f"this install has no dashboard tab ({SHIPPED / 'manifest.json'} is missing); reinstall Stowage", 1
        )
    in_place = plugins / "stowage" / "dashboard" / "manifest.json"
    if in_place.is_file() and in_place.resolve() != (SHIPPED / "manifest.json"):
        return Outcome(
            {"action": "enable", "link": None, "existing": str(in_place.parent)},
            f"the Stowage plugin folder already has the tab: {in_place.parent}",
        )
    if link.is_symlink() or link.exists():
        if link.is_symlink() and link.resolve() == SHIPPED:
            return Outcome(
                {"action": "enable", "link": str(link), "target": str(SHIPPED)},
                f"the dashboard tab is already linked: {link} -> {SHIPPED}",
            )
        if not link.is_symlink():
            raise CliError(f"{link} exists and is not a link Stowage made; remove it first", 1)
        link.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    link.symlink_to(SHIPPED, target_is_directory=True)
    return Outcome(
        {"action": "enable", "link": str(link), "target": str(SHIPPED)},
        f"linked the dashboard tab: {link} -> {SHIPPED}\n"
        "It shows while the plugin is enabled; restart `hermes dashboard` to see it.",
    )
