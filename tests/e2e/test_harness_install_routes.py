"""Stowage's plugin install routes, as the harness sets them up: entry point,
user folder linked to the checkout and self-contained user-folder copy (for the two
folder routes the pip distribution is hidden from the subprocess).

Each route loads one import tree: every module reachable from the plugin
package is imported, and exactly one session registry (``sessions.py``, a
process-global map) exists afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from stowage_dev.hermes_home import REPO_ROOT
from stowage_dev.runner import DriverResult, Scenario, plugins_list, run_scenario

pytestmark = pytest.mark.e2e

# Where the plugin's modules come from, as seen from inside the driver.
PROBE_IMPORTS = """
import importlib, importlib.metadata
from hermes_cli.plugins import get_plugin_manager
plugin_module = get_plugin_manager()._plugins["stowage"].module
core = importlib.import_module(plugin_module.__name__ + ".context_engine")
try:
    import stowage
    importable = True
except ImportError:
    importable = False
import pkgutil, sys
walked = sorted(m.name for m in pkgutil.walk_packages(plugin_module.__path__, plugin_module.__name__ + "."))
for name in walked:
    if not name.endswith(".__main__"):  # python -m entry points run on import
        importlib.import_module(name)
registries = sorted(name for name, module in list(sys.modules.items())
                    if name.rsplit(".", 1)[-1] == "sessions" and hasattr(module, "engine_for"))
result = {
    "walked": walked,
    "registries": registries,
    "stowage_importable": importable,
    "entry_points": sorted(e.name for e in importlib.metadata.entry_points(group="hermes_agent.plugins")),
    "core_file": core.__file__,
}
"""


@pytest.mark.parametrize("route", ["entrypoint", "symlink", "copy"])
def test_stowage_install_route(make_home, route: str) -> None:
    home = make_home(plugins=["stowage"], stowage_route=route)

    result: DriverResult = run_scenario(home, Scenario().python(PROBE_IMPORTS, id="imports"), check=True)

    plugin = result.plugin("stowage")
    assert plugin["enabled"] and plugin["error"] is None
    imports = result.step("imports")["result"]
    listed = {p["name"]: p for p in plugins_list(home, "--no-bundled")}
    assert imports["registries"] == [plugin["module"] + ".host.sessions"], imports["registries"]
    assert not [m for m in imports["walked"] if m.split(".")[-1] in ("tests", "bench", "build", "plugins")]
    if route == "entrypoint":
        assert plugin["source"] == "entrypoint" and plugin["module"] == "stowage"
        assert imports["stowage_importable"] and "stowage" in imports["entry_points"]
        assert Path(imports["core_file"]).parent == REPO_ROOT / "context_engine"
        assert listed["stowage"]["source"] == "entrypoint"
        return
    target = home.plugins_dir / "stowage"
    assert plugin["source"] == "user" and plugin["module"] == "hermes_plugins.stowage"
    assert Path(plugin["module_file"]).parent == target
    assert not imports["stowage_importable"]  # editable finder removed
    assert "stowage" not in imports["entry_points"]  # distribution hidden
    assert Path(imports["core_file"]).parent == target / "context_engine"
    assert target.is_symlink() == (route == "symlink")
    assert Path(imports["core_file"]).resolve().parent == REPO_ROOT / "context_engine" or route == "copy"
    # `hermes plugins list` labels a plugin folder that is a git checkout (the linked one) "git"
    assert listed["stowage"]["source"] == ("git" if route == "symlink" else "user")
