#!/usr/bin/env python3
"""The ``stowage`` command from a plugin folder, for the routes that install no console script.

    <the python that runs hermes> $HERMES_HOME/plugins/stowage/launcher.py doctor

(``hermes stowage doctor`` does the same while the plugin loads; this works
also when it does not.)  It imports this folder as the package ``stowage``
and runs its command line, under a private name (every module imports its
siblings relatively) so no other ``stowage`` on ``sys.path`` (PyPI's
unrelated ``stowage`` tool, a pip install of this one) is involved.  Not part of the wheel (pip installs the
``stowage`` console script instead); importing this file does nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

NAME = "stowage_plugin_folder"


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
