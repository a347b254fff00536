#!/usr/bin/env python3
"""Install Stowage as a Hermes *user plugin* (no pip install into Hermes).

    python3 plugins/install_user_plugin.py            # self-contained copy
    python3 plugins/install_user_plugin.py --link     # a symlink to this checkout
    python3 plugins/install_user_plugin.py --hermes-home /path/to/home

The repository root is the plugin folder (``plugin.yaml``, ``__init__.py``
with ``register(ctx)``), the same folder ``hermes plugins install <git url>``
clones.  The copy holds what the wheel ships (the root ``__init__.py``,
``plugin.yaml``, ``dashboard/`` and every package folder); ``--link`` makes
``$HERMES_HOME/plugins/stowage`` a symlink to this checkout, so ``git pull``
updates the plugin.  Hermes's own Python needs Stowage's requirements: the
script prints the pip line for the interpreter of your ``hermes`` command.
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
ROOT_FILES = ("__init__.py", "plugin.yaml", "launcher.py")
DATA_FOLDERS = ("dashboard",)
_IGNORE = ("__pycache__", "*.pyc", "*.egg-info")


def package_folders(root: Path = ROOT) -> list[str]:
    """The top-level package folders of the tree (what ``setup.py`` ships as ``stowage.<name>``)."""
    return sorted(
        child.name
        for child in root.iterdir()
        if child.is_dir()
        and (child / "__init__.py").is_file()
        and child.name not in ("build", "dist")
        and "." not in child.name
    )


def shipped_entries(root: Path = ROOT) -> list[str]:
    """The root entries that make the package: its files, its data folders and its package folders."""
    return [*ROOT_FILES, *DATA_FOLDERS, *package_folders(root)]


def dependencies() -> list[str]:
    """The runtime requirements of the distribution, as pip accepts them."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return list(tomllib.load(fh)["project"]["dependencies"])


def _remove(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)


def build_tree(target: Path, *, link: bool) -> Path:
    """*target* made of the shipped entries of this checkout: copies, or one symlink per entry."""
    _remove(target)
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns(*_IGNORE)
    for name in shipped_entries():
        source, dest = ROOT / name, target / name
        if link:
            dest.symlink_to(source, target_is_directory=source.is_dir())
        elif source.is_dir():
            shutil.copytree(source, dest, ignore=ignore)
        else:
            shutil.copy2(source, dest)
    return target


def install(home: Path, link: bool) -> Path:
    """``home/plugins/stowage``: a copy of the shipped entries, or a symlink to this checkout when *link*."""
    target = home / "plugins" / PACKAGE
    if link:
        _remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(ROOT, target_is_directory=True)
        return target
    return build_tree(target, link=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--link", action="store_true", help="link the plugin folder to this checkout instead of copying"
    )
    parser.add_argument(
        "--hermes-home", type=Path, default=Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")
    )
    args = parser.parse_args(argv)
    target = install(args.hermes_home.expanduser(), args.link)
    print(f"Installed Stowage as a user plugin: {target}{' (a symlink to ' + str(ROOT) + ')' if args.link else ''}")
    python = hermes_python() or "<the python that runs hermes>"
    print("\nNext:")
    print(f"  {python} -m pip install " + " ".join(f"'{d}'" for d in dependencies()))
    print("  hermes plugins enable stowage")
    print("  hermes config set context.engine stowage    # or edit config.yaml: context: {engine: stowage}")
    print("\nThe stowage command: hermes stowage doctor (while the plugin loads), or, also when it does not:")
    print(f"  {python} {target / 'launcher.py'} doctor")
    return 0


def hermes_python() -> str | None:
    """The interpreter of the ``hermes`` command (``hermesx`` in a repackaged 0.20.1), read from its shebang."""
    hermes = shutil.which("hermes") or shutil.which("hermesx")
    if not hermes:
        return None
    try:
        first = Path(hermes).read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    return first[2:].strip() if first.startswith("#!") else None


if __name__ == "__main__":
    sys.exit(main())
