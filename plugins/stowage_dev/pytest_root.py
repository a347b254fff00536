"""A pytest plugin (``-p stowage_dev.pytest_root`` in pyproject's addopts): the checkout's root is a plain folder.

The root is the plugin package (its ``__init__.py`` imports relatively), and pytest would import it under the
folder's own name: a checkout in ``stowage-main/`` (a hyphen, as a downloaded archive unpacks, or a worktree) then
fails every test with "attempted relative import with no known parent package".  The tests import the installed
``stowage``, never the root by its folder name.  A conftest cannot do this: pytest asks only the conftests above a
folder how to collect it, and the root has none.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The rootdir as ``pytest.Dir`` (never a ``Package``); every other folder as pytest decides."""
    if path == parent.config.rootpath:
        return pytest.Dir.from_parent(parent, path=path)
    return None
