"""Stowage: a lossless context engine plugin for Hermes Agent.

The repository root is the ``stowage`` package in every install route, and a
valid Hermes plugin folder (``plugin.yaml`` and this ``register(ctx)``):

* pip (wheel, checkout, editable): ``setup.py`` maps this folder to ``stowage``
  and ships every package found under it (``context_engine``, ``blobstore``,
  ``tool_search``, ``host``, ``cli``); Hermes finds the ``hermes_agent.plugins``
  entry point;
* ``hermes plugins install <git url>`` clones this folder to
  ``$HERMES_HOME/plugins/stowage/``; ``plugins/install_user_plugin.py`` copies
  or links it there from a checkout.  Hermes imports it as ``hermes_plugins.stowage``.

Every module reaches the others with relative imports, so the same tree works
under either name.  Nothing edits ``__path__``: one import tree, one copy of
each module (and of its process-global registries) per process.
"""

from __future__ import annotations

__version__ = "0.1.0"


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    """Hermes entry point: register the engine, its hooks and middleware."""
    from .host.registration import register_plugin

    register_plugin(ctx)
