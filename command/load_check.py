"""Does the plugin import now, by the route Hermes would take?

``agent.log`` keeps a ``Failed to load plugin 'stowage'`` line until Hermes
starts again, so after the user fixes a broken install the log still reads as
broken.  Doctor re-checks instead of replaying it: it imports the plugin in
Hermes's own Python, as Hermes does (the entry point, or the user-plugin
folder as ``hermes_plugins.stowage``), down to the modules ``register(ctx)``
imports.  The child process knows nothing of Stowage, so a damaged install
cannot break the check itself.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

# what register(ctx) imports, below the package
REGISTER_IMPORTS = ("host.registration", "host.commands")
TIMEOUT_S = 60

_CHILD = r"""
import importlib, importlib.metadata, importlib.util, json, os, sys, types
route, key, group, folder, below = json.loads(sys.argv[1])

def describe(exc):
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ModuleNotFoundError) else f"{type(exc).__name__}: {text}"

try:
    if route == "entry point":
        found = [e for e in importlib.metadata.entry_points(group=group) if e.name == key]
        if not found:
            raise ModuleNotFoundError(f"no {group} entry point named {key!r}")
        package = found[0].value.split(":")[0].split(".")[0]
        importlib.import_module(package)
    else:
        sys.modules.setdefault("hermes_plugins", types.ModuleType("hermes_plugins")).__path__ = []
        package = "hermes_plugins." + key
        spec = importlib.util.spec_from_file_location(
            package, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    for name in below:
        importlib.import_module(package + "." + name)
    print(json.dumps({"ok": True}))
except BaseException as exc:
    print(json.dumps({"ok": False, "cause": describe(exc)}))
"""


@dataclass(frozen=True)
class ImportCheck:
    """The outcome of importing the plugin now: ``ok``, or the cause as Hermes would log it."""

    ok: bool
    cause: str = ""
    checked: bool = True  # False: the check itself could not run (no interpreter, a timeout)
    route: str = ""  # the route imported by ("entry point", "user plugin folder")


def import_now(python: str, route: str, key: str, group: str, folder: str | None = None) -> ImportCheck:
    """Import the plugin in *python* by *route* ("entry point" or "user plugin folder" at *folder*)."""
    argument = json.dumps([route, key, group, folder, list(REGISTER_IMPORTS)])
    try:
        proc = subprocess.run(
            [python, "-c", _CHILD, argument],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return ImportCheck(False, f"could not run {python}: {exc}", checked=False, route=route)
    lines = proc.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return ImportCheck(
            False, f"the import check in {python} gave no answer ({tail[:200]})", checked=False, route=route
        )
    return ImportCheck(bool(answer.get("ok")), str(answer.get("cause") or ""), route=route)
