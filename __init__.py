"""Stowage: a lossless context engine plugin for Hermes Agent.

The repository root is the ``stowage`` package in every install route, and a
valid Hermes plugin folder (``plugin.yaml`` and this ``register(ctx)``):

* pip (wheel, checkout, editable): ``setup.py`` maps this folder to ``stowage``
  and ships every package found under it (``context_engine``, ``blobstore``,
  ``tool_search``, ``host``, ``command``); Hermes finds the
  ``hermes_agent.plugins`` entry point;
* ``hermes plugins install <git url>`` clones this folder to
  ``$HERMES_HOME/plugins/stowage/``; ``plugins/install_user_plugin.py`` copies
  or links it there from a checkout.  Hermes imports it as ``hermes_plugins.stowage``.

Every module reaches the others with relative imports, so the same tree works
under either name.  Nothing edits ``__path__``: one import tree, one copy of
each module (and of its process-global registries) per process.
"""

from __future__ import annotations

from .host.version import __version__

__all__ = ["__version__", "register"]


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    """Hermes entry point: register the engine, its hooks and middleware.

    When the plugin's own import fails (a missing requirement, a damaged
    install), Hermes only logs it and runs its built-in compressor; this says
    so in the user's terminal, with the fix, before re-raising for the log.
    """
    try:
        from .host.commands import register_commands
        from .host.registration import register_plugin
    except Exception as exc:
        _say_load_failed(exc)
        raise
    register_plugin(ctx)
    register_commands(ctx)


def _say_load_failed(exc: BaseException) -> None:
    import sys
    from pathlib import Path

    try:
        from .host.load_failure import terminal_line

        folder = Path(__file__).resolve().parent
        reinstall = (
            "hermes plugins update stowage"
            if (folder / ".git").exists() and __name__ != "stowage"
            else f"{sys.executable} -m pip install --force-reinstall <the Stowage wheel or checkout>"
            if __name__ == "stowage"
            else "python3 plugins/install_user_plugin.py (from a Stowage checkout)"
        )
        print(terminal_line(exc, sys.executable, reinstall), file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 - never hide the original failure behind our own
        print(f"stowage: the Stowage plugin failed to load: {exc!r}", file=sys.stderr, flush=True)
