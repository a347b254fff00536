"""Stowage installed into a throw-away Hermes home as a user installs it, and a session that shows it at work.

Shared by ``test_install_routes_as_shipped.py`` (the wheel, a broken install)
and ``test_host_install_routes.py`` (the plugin-folder routes on every host of
the matrix).  Routes:

* ``git``: ``hermes plugins install file://<clean clone> --enable``;
* ``copy`` / ``link``: ``plugins/install_user_plugin.py`` (a copy, or a symlink to the checkout);
* ``wheel``: nothing here (the wheel's venv is the test's own fixture).

The plugin-folder routes hide the pip-installed ``hermes-stowage`` of the venv
from the host (see ``stowage_dev.hermes_home``), so Hermes loads the folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import REPO_ROOT, STOWAGE_DIST, HermesHome
from stowage_dev.runner import CliResult, run_cli

CONFIG = {"stowage": {"spill": {"threshold_tokens": 6000}, "view": {"hot_tokens": 1000, "step_tokens": 500}}}
PREVIEW = "[stowage: preview of a large tool output"
# a loaded CI machine starts the newer hosts' CLI slowly
CLI_TIMEOUT = 600.0


def new_home(make_home, route: str) -> HermesHome:
    """A home that selects Stowage, with the harness probe; the user-plugin routes installed (git: see install_git)."""
    home = make_home(engine="stowage", plugins=["stowage"], config=CONFIG, whole_outputs=True)  # as after setup
    home.install_harness_probe()
    if route in ("copy", "link"):
        home.install_stowage_user_plugin("copy" if route == "copy" else "symlink")
    return home


def clean_clone(home: HermesHome) -> Path:
    """A clone of the checkout's HEAD (what a user's ``git clone`` gets: committed files only)."""
    if not (REPO_ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("the git route needs a git checkout and git")
    clone = home.root / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, timeout=300)
    return clone


def install_git(home: HermesHome) -> CliResult:
    """``hermes plugins install file://<clean clone> --enable`` (its --enable writes plugins.enabled)."""
    clone = clean_clone(home)
    home.hide_distribution(STOWAGE_DIST)
    home.plugins_enabled.remove("stowage")
    home.write_config()
    return run_cli(home, "plugins", "install", f"file://{clone}", "--enable", timeout=CLI_TIMEOUT)


def assert_installed_and_enabled(home: HermesHome, installed: CliResult) -> None:
    assert installed.returncode == 0, installed.output
    assert (home.plugins_dir / "stowage" / "plugin.yaml").is_file()
    assert (home.plugins_dir / "stowage" / "__init__.py").is_file()
    assert "stowage" in home.read_config()["plugins"]["enabled"], installed.output


def script_session(fake_llm: FakeLLMServer) -> None:
    """One user turn: a large output (spilled), then three medium ones; older ones reach the model as stubs."""
    fake_llm.on(
        Match.user_turn("ROUTE"),
        Reply.tool(ToolCall("harness_big_output", {"chars": 60_000, "token": "BIG"}, id="call_0")),
    )
    for i in range(1, 4):
        fake_llm.on(
            Match.after_tool_result(f"call_{i - 1}"),
            Reply.tool(ToolCall("harness_big_output", {"chars": 12_000, "token": f"MID{i}"}, id=f"call_{i}")),
        )
    fake_llm.on(Match.after_tool_result("call_3"), Reply.say("route checked"))


def run_session(home: HermesHome, hermes: str | None = None) -> CliResult:
    # faulthandler: a crash of the host process (seen once on 0.22.2 at exit, -11) leaves its stacks in the output
    env = {"PYTHONFAULTHANDLER": "1"}
    return run_cli(home, "chat", "-q", "ROUTE please", "-Q", hermes=hermes, timeout=CLI_TIMEOUT, env=env)


def assert_stowage_at_work(fake_llm: FakeLLMServer, chat: CliResult, *, view: bool = True) -> None:
    """The scripted model's requests show Stowage: the spilled output's preview, older outputs as stubs.

    *view* False: a host without the middleware API (before 0.17.0) has no lean view, so no stubs.
    """
    assert chat.returncode == 0, chat.output
    assert "route checked" in chat.stdout
    (plugin,) = [p for p in chat.probe["plugins"] if p["key"] == "stowage"]
    assert plugin["enabled"] and plugin["error"] is None, chat.probe
    if "engine" in chat.probe:  # the CLI's active agent (not exposed by 0.17.0's CLI)
        assert chat.probe["engine"]["class"] == "StowageContextEngine", chat.probe
    assert fake_llm.matching(Match.after_tool_result("call_0"))[0].tool_results["call_0"].startswith(PREVIEW)
    last = fake_llm.matching(Match.after_tool_result("call_3"))[-1].tool_results
    stubbed = [cid for cid, text in last.items() if text.startswith(VIEW_STUB_PREFIX)]
    assert bool(set(stubbed) & {"call_1", "call_2"}) is view, last
    assert "failed to load" not in chat.stderr


def manifest_warnings(home: HermesHome) -> list[str]:
    """Warnings the host logged about Stowage's plugin.yaml (unknown capabilities or fields, bad schema)."""
    log = home.path / "logs" / "agent.log"
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    return [
        line
        for line in lines
        if "WARNING" in line and "stowage" in line.lower() and ("manifest" in line or "capabilit" in line)
    ]


def launcher(home: HermesHome, *args: str, hidden: str | None = None) -> subprocess.CompletedProcess[str]:
    """``<python of hermes> $HERMES_HOME/plugins/stowage/launcher.py ARGS`` (this venv's python is the host's)."""
    env = home.env({"STOWAGE_HARNESS_HIDE_DISTS": hidden} if hidden else None)
    return subprocess.run(
        [sys.executable, str(home.plugins_dir / "stowage" / "launcher.py"), *args],
        env=env,
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
    )


@dataclass
class Printed:
    stdout: str
    python: str  # the interpreter of this venv's hermes (or hermesx) command


def install_user_plugin_script(home: HermesHome) -> Printed:
    """``python3 plugins/install_user_plugin.py --hermes-home <home>`` with this venv's Hermes first on PATH."""
    bin_dir = Path(sys.executable).parent
    env = home.env({"PATH": f"{bin_dir}{os.pathsep}{home.env().get('PATH', '')}"})
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "plugins" / "install_user_plugin.py"), "--hermes-home", str(home.path)],
        env=env,
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=True,
    )
    return Printed(done.stdout, str(bin_dir / "python"))
