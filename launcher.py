#!/usr/bin/env python3
"""The ``stowage`` command from a plugin folder, for the routes that install no console script.

    <the python that runs hermes> $HERMES_HOME/plugins/stowage/launcher.py doctor

(``hermes stowage doctor`` does the same while the plugin loads; this works
also when it does not.)  It imports this folder as the package ``stowage``
and runs its command line.  Not part of the wheel (pip installs the
``stowage`` console script instead); importing this file does nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    folder = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("stowage", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        print(f"stowage: cannot load the plugin folder {folder}", file=sys.stderr)
        return 1
    package = importlib.util.module_from_spec(spec)
    sys.modules["stowage"] = package
    spec.loader.exec_module(package)
    try:
        from stowage.command import main as run
    except ImportError as exc:
        from stowage.host.load_failure import describe, fix_for

        cause = describe(exc)
        print(f"stowage: cannot run ({cause}). Fix: {fix_for(cause, sys.executable, 'hermes plugins update stowage')}",
              file=sys.stderr)
        return 1
    return run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
