#!/usr/bin/env python3
"""The ``stowage`` command from a plugin folder, for the routes that install no console script.

    python3 $HERMES_HOME/plugins/stowage/launcher.py doctor

(``hermes stowage doctor`` does the same while the plugin loads; this works
also when it does not: disabled, not enabled, or failing to import.)  Any
``python3`` will do: when it lacks Stowage's requirements, the launcher runs
itself again with the Python of the ``hermes`` on PATH.  It imports this folder as the package ``stowage``
and runs its command line, under a private name (every module imports its
siblings relatively) so no other ``stowage`` on ``sys.path`` (PyPI's
unrelated ``stowage`` tool, a pip install of this one) is involved.  Not part of the wheel (pip installs the
``stowage`` console script instead); importing this file does nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

NAME = "stowage_plugin_folder"
REEXEC = "STOWAGE_LAUNCHER_REEXEC"


def _hermes_python() -> str | None:
    """The interpreter on the first line of the ``hermes`` script on PATH (None when there is none)."""
    script = shutil.which("hermes") or shutil.which("hermesx")
    if not script:
        return None
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    words = first[2:].split() if first.startswith("#!") else []
    if words and os.path.basename(words[0]) == "env":
        return shutil.which(words[1]) if len(words) > 1 else None
    return words[0] if words and os.access(words[0], os.X_OK) else None


def main(argv: list[str]) -> int:
    folder = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location(
        NAME, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        print(f"stowage: cannot load the plugin folder {folder}", file=sys.stderr)
        return 1
    package = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = package
    spec.loader.exec_module(package)
    try:
        run = importlib.import_module(f"{NAME}.command").main
    except ImportError as exc:
        hermes_python = _hermes_python()
        if hermes_python and not os.environ.get(REEXEC):
            # `python3 launcher.py` with a Python that lacks the requirements: run again, once, in Hermes's own
            os.environ[REEXEC] = "1"
            os.execv(hermes_python, [hermes_python, str(Path(__file__).resolve()), *argv])
        failure = importlib.import_module(f"{NAME}.host.load_failure")
        describe, fix_for = failure.describe, failure.fix_for

        cause = describe(exc)
        print(
            f"stowage: cannot run ({cause}). Fix: {fix_for(cause, sys.executable, 'hermes plugins update stowage')}",
            file=sys.stderr,
        )
        return 1
    return run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
