#!/usr/bin/env python3
"""Install Stowage as a Hermes *user plugin* (no pip install into Hermes).

    python3 plugins/install_user_plugin.py            # self-contained copy
    python3 plugins/install_user_plugin.py --link     # same layout, symlinks into this checkout
    python3 plugins/install_user_plugin.py --hermes-home /path/to/home

Both build ``$HERMES_HOME/plugins/stowage/`` in the layout of the installed
package: the files of ``plugins/stowage/`` at the top and every other folder
of the distribution as a subfolder (``context_engine/``, ``blobstore/``, ...).
``--link`` makes each of those entries a symlink into this checkout, so
``git pull`` updates the plugin (run the script again when a module or a
folder is added).  Then enable it and select the engine (the script prints
the two commands).  Hermes's own Python needs Stowage's dependencies; the
script prints the pip line for it.

The folder list and the dependency list are read from ``pyproject.toml``
(``[tool.setuptools.package-dir]`` and ``[project] dependencies``), the one
place both the pip route and this route take them from.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "stowage"
_IGNORE = ("__pycache__", "*.pyc", "*.egg-info")


def _pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def package_folders() -> dict[str, Path]:
    """Where each folder of the plugin comes from: ``""`` (the plugin folder
    itself) and the subfolder name of every other mapped package, e.g.
    ``{"": plugins/stowage, "context_engine": context_engine, "cli": plugins/stowage_cli}``."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    folders: dict[str, Path] = {}
    for name, folder in mapping.items():
        if name == PACKAGE:
            folders[""] = ROOT / folder
        elif name.startswith(PACKAGE + "."):
            folders[name[len(PACKAGE) + 1:].replace(".", "/")] = ROOT / folder
        else:
            raise ValueError(f"pyproject.toml maps {name!r} outside the {PACKAGE!r} package")
    if "" not in folders:
        raise ValueError(f"pyproject.toml does not map the {PACKAGE!r} package")
    return folders


def dependencies() -> list[str]:
    """The runtime requirements of the distribution, as pip accepts them."""
    return list(_pyproject()["project"]["dependencies"])


def _remove(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)


def install(home: Path, link: bool) -> Path:
    """Build ``home/plugins/stowage`` (copy, or symlinks when *link*)."""
    target = home / "plugins" / PACKAGE
    _remove(target)
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns(*_IGNORE)
    folders = package_folders()
    root = folders.pop("")
    nested = {sub.split("/")[0] for sub in folders}
    for entry in sorted(root.iterdir()):
        if entry.name in nested:
            raise ValueError(f"{entry} collides with the mapped package {entry.name!r}")
        if entry.name == "__pycache__" or entry.suffix == ".pyc":
            continue
        if link:
            (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        elif entry.is_dir():
            shutil.copytree(entry, target / entry.name, ignore=ignore)
        else:
            shutil.copy2(entry, target / entry.name)
    # Parents before children, so a nested package lands inside its parent.
    for sub, source in sorted(folders.items()):
        dest = target / sub
        if dest.exists() or dest.is_symlink():
            continue  # already inside a parent folder that was copied or linked whole
        dest.parent.mkdir(parents=True, exist_ok=True)
        if link:
            dest.symlink_to(source, target_is_directory=True)
        else:
            shutil.copytree(source, dest, ignore=ignore)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--link", action="store_true",
                        help="symlink each folder and file into this checkout instead of copying")
    parser.add_argument("--hermes-home", type=Path,
                        default=Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes"))
    args = parser.parse_args(argv)
    target = install(args.hermes_home.expanduser(), args.link)
    print(f"Installed Stowage as a user plugin: {target}{' (symlinks into ' + str(ROOT) + ')' if args.link else ''}")
    python = hermes_python() or "<the python that runs hermes>"
    print("\nNext:")
    print(f"  {python} -m pip install " + " ".join(f"'{d}'" for d in dependencies()))
    print("  hermes plugins enable stowage")
    print("  hermes config set context.engine stowage    # or edit config.yaml: context: {engine: stowage}")
    return 0


def hermes_python() -> str | None:
    """The interpreter of the ``hermes`` command, read from its shebang."""
    hermes = shutil.which("hermes")
    if not hermes:
        return None
    try:
        first = Path(hermes).read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    return first[2:].strip() if first.startswith("#!") else None


if __name__ == "__main__":
    sys.exit(main())
