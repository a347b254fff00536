#!/usr/bin/env python3
"""Install Stowage as a Hermes *user plugin* (no pip install into Hermes).

    python3 plugins/install_user_plugin.py            # self-contained copy
    python3 plugins/install_user_plugin.py --link     # symlink to this checkout
    python3 plugins/install_user_plugin.py --hermes-home /path/to/home

The copy puts ``plugins/stowage/`` and the core packages (``context_engine``,
``blobstore``, ``tool_search``) into ``$HERMES_HOME/plugins/stowage/``; the
link points at this checkout, so ``git pull`` updates it.  Then enable it and
select the engine (the script prints the two commands).  Hermes's own Python
needs Stowage's dependencies; the script prints the pip line for it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ("context_engine", "blobstore", "tool_search")
DEPENDENCIES = "tiktoken bpe-openai pyyaml regex rank-bm25"


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


def install(home: Path, link: bool) -> Path:
    target = home / "plugins" / "stowage"
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if link:
        target.symlink_to(ROOT / "plugins" / "stowage", target_is_directory=True)
        return target
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "plugins" / "stowage", target, ignore=ignore)
    for package in CORE:
        shutil.copytree(ROOT / package, target / package, ignore=ignore)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--link", action="store_true", help="symlink to this checkout instead of copying")
    parser.add_argument("--hermes-home", type=Path,
                        default=Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes"))
    args = parser.parse_args(argv)
    target = install(args.hermes_home.expanduser(), args.link)
    print(f"Installed Stowage as a user plugin: {target}{' -> ' + str(target.resolve()) if args.link else ''}")
    python = hermes_python() or "<the python that runs hermes>"
    print("\nNext:")
    print(f"  {python} -m pip install {DEPENDENCIES}")
    print("  hermes plugins enable stowage")
    print("  hermes config set context.engine stowage    # or edit config.yaml: context: {engine: stowage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
