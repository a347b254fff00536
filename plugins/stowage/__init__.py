"""Stowage: a lossless context engine plugin for Hermes Agent.

This folder is both the ``stowage`` package of the pip distribution and a
valid Hermes user-plugin folder (``$HERMES_HOME/plugins/stowage/``).  The core
lives in sibling packages (``context_engine``, ``blobstore``, ``tool_search``)
that the modules here reach with *relative* imports, so the same code works
whatever name the host imports this package under:

* pip (or editable) install: ``pyproject.toml`` maps each folder to its
  subpackage of ``stowage`` (``[tool.setuptools.package-dir]``);
* a user-plugin folder built by ``plugins/install_user_plugin.py`` from the
  same mapping: the core folders sit next to this file (copied or linked).

Nothing here edits ``__path__``: there is one import tree, and one copy of
each module (and of its process-global registries) per process.
"""

from __future__ import annotations

__version__ = "0.1.0"


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    """Hermes entry point: register the engine, its hooks and middleware."""
    from .registration import register_plugin

    register_plugin(ctx)
