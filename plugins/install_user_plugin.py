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
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

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
    found = hermes_python()
    python = found or "<the python that runs hermes>"
    steps = _enable_steps()
    distribution, version = host_of(found) if found else (None, None)
    cli = steps.command_name(distribution)
    print("\nNext:")
    print(f"  {python} -m pip install " + " ".join(f"'{d}'" for d in dependencies()))
    readable, enabled = enabled_now(args.hermes_home.expanduser())
    if readable or not steps.enable_needs_config_line(version):
        print(f"  {steps.enable_step(PACKAGE, distribution, version, enabled)}")
    else:
        print(f"  add {PACKAGE} to plugins.enabled in {args.hermes_home.expanduser() / 'config.yaml'}")
    print(f"  {cli} config set context.engine stowage    # or edit config.yaml: context: {{engine: stowage}}")
    if steps.enable_needs_config_line(version):
        print(f"  (Hermes {version}: `{cli} plugins enable` downloads a managed runtime, so the config line instead)")
    print(f"\nThe stowage command: {cli} stowage doctor (while the plugin loads), or, also when it does not:")
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


def _enable_steps() -> ModuleType:
    """``host/enable_step.py`` of this checkout, loaded by path (standard library only, no install needed)."""
    spec = importlib.util.spec_from_file_location("stowage_enable_step", ROOT / "host" / "enable_step.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_HOST_QUERY = (
    "import json, importlib.metadata as m\n"
    "for name in %r:\n"
    "    try:\n"
    "        print(json.dumps([name, m.version(name)])); break\n"
    "    except m.PackageNotFoundError:\n"
    "        pass\n"
)


def host_of(python: str) -> tuple[str | None, str | None]:
    """(distribution, version) of the Hermes installed in *python*, or (None, None) when it cannot be told."""
    code = _HOST_QUERY % (tuple(_enable_steps().HOST_DISTRIBUTIONS),)
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=30).stdout.strip()
        name, version = json.loads(out.splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError, TypeError):
        return None, None
    return str(name), str(version)


def enabled_now(home: Path) -> tuple[bool, list[str]]:
    """(readable, names) of ``plugins.enabled`` in *home*'s config.yaml, written as a flow or a block list.

    A line-level read: the script runs before any requirement is installed, so there is no YAML parser.  Not
    readable (another shape) means the step must not be written as a whole list, which would drop the others.
    """
    try:
        lines = (home / "config.yaml").read_text(encoding="utf-8").splitlines()
    except OSError:
        return True, []
    section, block, names = False, False, []
    for line in lines:
        text = line.split("#")[0].rstrip()
        if not text.strip():
            continue
        if not line.startswith((" ", "\t")):
            section, block = text.strip() == "plugins:", False
            continue
        stripped = text.strip()
        if block and stripped.startswith("- "):
            names.append(stripped[2:].strip().strip("'\""))
            continue
        block = False
        if section and stripped.startswith("enabled:"):
            value = stripped[len("enabled:") :].strip()
            if not value:
                block = True
            elif value.startswith("[") and value.endswith("]"):
                names += [name.strip().strip("'\"") for name in value[1:-1].split(",") if name.strip()]
            else:
                return False, []
    return True, names


if __name__ == "__main__":
    sys.exit(main())
