"""The package layout, computed from the tree so it cannot drift from it.

The repository root is the package ``stowage`` (it is also the Hermes plugin
folder ``hermes plugins install`` clones).  Every folder under it that is a
Python package ships as ``stowage.<folder>``: a new module or subpackage is in
the wheel without editing a list.  Folders that are not packages (``tests/``,
``bench/``, ``plugins/``, ``docs/``) are not walked.  Of the root's own files
only ``__init__.py`` is a module of the package (``run.py`` and this file are
the project's tools); ``plugin.yaml`` and the dashboard tab ship as data.
The metadata lives in ``pyproject.toml``.
"""

from __future__ import annotations

import warnings

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PACKAGE = "stowage"
ROOT_MODULES = {"__init__"}
DATA = ["plugin.yaml", "dashboard/manifest.json", "dashboard/plugin_api.py", "dashboard/dist/*"]


def packages() -> list[str]:
    """``stowage`` and every package below the root, as ``stowage.<dotted path>``."""
    return [PACKAGE] + [f"{PACKAGE}.{name}" for name in find_packages(where=".", exclude=["build*", "dist*"])]


# dashboard/ is data (a manifest, a JS bundle, a file the dashboard imports by path), not a subpackage
warnings.filterwarnings("ignore", message=r"(?s).*'stowage\.dashboard(\.dist)?'")


class BuildPy(build_py):
    """Ships only ``__init__.py`` from the root folder itself (not run.py, setup.py)."""

    def find_package_modules(self, package, package_dir):  # noqa: ANN001, ANN201 - setuptools' signature
        modules = super().find_package_modules(package, package_dir)
        if package == PACKAGE:
            modules = [m for m in modules if m[1] in ROOT_MODULES]
        return modules


if __name__ == "__main__":  # setuptools runs this file as __main__; a plain import (a plugin loader walking
    # the linked checkout) does nothing
    setup(packages=packages(), package_dir={PACKAGE: "."}, package_data={PACKAGE: DATA}, cmdclass={"build_py": BuildPy})
