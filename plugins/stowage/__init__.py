"""Stowage: a lossless context engine plugin for Hermes Agent.

This folder is both the ``stowage`` package of the pip distribution and a
valid Hermes user-plugin folder (``$HERMES_HOME/plugins/stowage/``).  The core
lives in sibling packages (``context_engine``, ``blobstore``, ``tool_search``)
that the modules here reach with *relative* imports, so the same code works
whatever name the host imports this package under:

* pip install: ``stowage`` with the core installed as its subpackages;
* a source checkout linked into ``$HERMES_HOME/plugins/`` (or an editable
  install): the checkout root is appended to ``__path__``;
* a self-contained copy made by ``install_user_plugin.py``: the core folders
  sit next to this file.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

_CORE_PACKAGES = ("context_engine", "blobstore", "tool_search")


def _extend_package_path() -> None:
    """Make the core packages importable as subpackages of this package."""
    here = Path(__file__).resolve().parent
    if all((here / name / "__init__.py").is_file() for name in _CORE_PACKAGES):
        return
    checkout_root = here.parent.parent
    if all((checkout_root / name / "__init__.py").is_file() for name in _CORE_PACKAGES):
        root = str(checkout_root)
        if root not in __path__:  # type: ignore[name-defined]
            __path__.append(root)  # type: ignore[name-defined]


_extend_package_path()


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    """Hermes entry point: register the engine, its hooks and middleware."""
    from .registration import register_plugin

    register_plugin(ctx)
