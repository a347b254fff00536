"""The wheel as a user gets it, and a broken install, through the real ``hermes`` CLI (hermes-agent 0.19.0).

* **wheel**: the wheel built from this tree, installed (not editable) into a
  clean venv next to hermes-agent 0.19.0; every module of the tree must import
  from the installed copy (a wheel missing one fails here).  One ``hermes chat
  -q`` session in which the scripted model's requests show Stowage at work (a
  spilled output's preview, older outputs as stubs), then ``stowage doctor``
  exits 0 and ``stowage dashboard enable`` links the tab where the dashboard finds it.
* A user-plugin copy whose import fails prints one line in the terminal at
  start, and doctor exits 1 naming the cause; once fixed, a session later,
  doctor and status no longer report the old failure.

The plugin-folder routes (``hermes plugins install file://<clean clone>``, the
user-plugin copy and link) run on every host of the matrix:
``test_host_install_routes.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Iterator

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.hermes_home import REPO_ROOT, _user_plugin_installer
from stowage_dev.readme_blocks import install_block
from stowage_dev.runner import run_cli
from stowage_dev.tempdirs import scratch_dir

from .install_routes import CONFIG, assert_stowage_at_work, new_home, run_session, script_session

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOST = "hermes-agent==0.19.0"
BUILD_IGNORE = (
    ".git",
    ".venv*",
    "__pycache__",
    "*.egg-info",
    ".*_cache",
    ".hypothesis",
    "test-artifacts",
    "node_modules",
)


def _bin(venv_dir: Path, name: str) -> str:
    return str(venv_dir / ("Scripts" if os.name == "nt" else "bin") / name)


@pytest.fixture(scope="module")
def wheel_venv() -> Iterator[Path]:
    """A clean venv with hermes-agent 0.19.0 and the wheel built from this tree (pip's cache is reused)."""
    for root in scratch_dir("stowage-wheel-"):
        # built from a copy of the tree: an in-tree build leaves build/lib behind, whose stale modules would
        # end up in the next wheel (and the checkout stays as it was)
        source, dist = root / "source", root / "dist"
        shutil.copytree(REPO_ROOT, source, symlinks=True, ignore=_not_source)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(source)],
            check=True,
            timeout=900,
        )
        assert next(dist.glob("hermes_stowage-*.whl"))  # the checkout builds a wheel
        # then as the README's block says: a venv, activated, and its pip line run in the checkout
        create, pip_line, *_ = install_block("pypi-hermes")
        assert re.fullmatch(r"python3 -m venv (\S+) && \. \1/bin/activate", create), create
        assert pip_line.startswith("pip install ") and f"'{HOST}'" in pip_line, pip_line
        target = root / "venv"
        venv.EnvBuilder(with_pip=True).create(target)
        subprocess.run(
            ["bash", "-c", pip_line.replace("pip install ", "pip install --quiet ", 1)],
            cwd=source,
            env=_activated(target),
            check=True,
            timeout=1800,
        )
        yield target


def _activated(venv_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """What `. <venv>/bin/activate` sets: its bin first on PATH, VIRTUAL_ENV."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{Path(_bin(venv_dir, 'python')).parent}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv_dir)
    env.pop("PYTHONHOME", None)
    return env


def _not_source(folder: str, names: list[str]) -> set[str]:
    """Caches, venvs and build outputs; build/ and dist/ only at the top (dashboard/dist is source)."""
    top = {"build", "dist"} & set(names) if Path(folder) == REPO_ROOT else set()
    return set(shutil.ignore_patterns(*BUILD_IGNORE)(folder, names)) | top


def _tree_modules() -> list[str]:
    """Every module of the tree that ships, as ``stowage.<dotted path>``."""
    modules = ["stowage"]
    for folder in _user_plugin_installer().package_folders():
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            if "__pycache__" in parts or parts[-1] == "__main__":
                continue
            modules.append(".".join(("stowage", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return modules


IMPORT_ALL = """
import importlib, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    try:
        out[name] = importlib.import_module(name).__file__
    except Exception as exc:
        out[name] = f"FAILED {type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_the_wheel_holds_every_module_and_the_plugin_files(wheel_venv: Path) -> None:
    modules = _tree_modules()
    assert {"stowage.context_engine.ahead", "stowage.host.registration", "stowage.command.main"} <= set(modules)
    proc = subprocess.run(
        [_bin(wheel_venv, "python"), "-c", IMPORT_ALL, json.dumps(modules)],
        cwd=wheel_venv,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    files = json.loads(proc.stdout)
    failed = {name: f for name, f in files.items() if f is None or f.startswith("FAILED")}
    assert not failed, failed
    site = {str(Path(f).resolve()).split("site-packages")[0] for f in files.values()}
    assert len(site) == 1 and str(wheel_venv.resolve()) in site.pop()  # all from the installed copy, none from here
    package = Path(files["stowage"]).parent
    for data in ("plugin.yaml", "dashboard/manifest.json", "dashboard/dist/index.js", "dashboard/plugin_api.py"):
        assert (package / data).is_file(), data
    assert not (package / "run.py").exists() and not (package / "tests").exists()
    # the license text travels with the wheel, and the version is the one the plugin reports
    meta = subprocess.run(
        [
            _bin(wheel_venv, "python"),
            "-c",
            "import importlib.metadata as m, json; d = m.distribution('hermes-stowage'); "
            "print(json.dumps([d.version, d.metadata['License-Expression'], d.read_text('licenses/LICENSE')]))",
        ],
        cwd=wheel_venv,  # not the checkout, whose egg-info would answer instead
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    version, expression, license_text = json.loads(meta.stdout)
    import stowage

    assert version == stowage.__version__ and expression == "MIT", meta.stdout
    assert license_text and license_text.startswith("MIT License"), meta.stdout  # dist-info/licenses/LICENSE


def test_the_wheel_in_a_clean_venv_runs_a_stowage_session(fake_llm: FakeLLMServer, make_home, wheel_venv: Path) -> None:
    home = new_home(make_home, "wheel")
    script_session(fake_llm)

    chat = run_session(home, hermes=_bin(wheel_venv, "hermes"))

    assert_stowage_at_work(fake_llm, chat)
    assert chat.probe["engine"]["module"] == "stowage.host.hermes_engine"
    doctor = subprocess.run(
        [_bin(wheel_venv, "stowage"), "--hermes-home", str(home.path), "doctor", "--no-verify"],
        env=home.env(),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    # the dashboard tab: linked where Hermes's dashboard looks, found by its discovery, its API on the package
    linked = subprocess.run(
        [_bin(wheel_venv, "stowage"), "--hermes-home", str(home.path), "dashboard", "enable"],
        env=home.env(),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert linked.returncode == 0, linked.stdout + linked.stderr
    found = subprocess.run(
        [_bin(wheel_venv, "python"), "-c", DASHBOARD_PROBE],
        env=home.env(),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stdout + found.stderr
    tab = json.loads(found.stdout.strip().splitlines()[-1])
    assert tab["name"] == "stowage" and tab["has_api"] and tab["active"], tab
    assert tab["core"].startswith(str(wheel_venv)) and tab["core"].endswith("stowage/__init__.py"), tab


DASHBOARD_PROBE = """
import importlib.util, json
from hermes_cli.web_server import _discover_dashboard_plugins
from hermes_cli.plugins_cmd import _get_enabled_set
(tab,) = [p for p in _discover_dashboard_plugins() if p["name"] == "stowage"]
spec = importlib.util.spec_from_file_location("stowage_tab_api", tab["_dir"] + "/" + tab["_api_file"])
api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api)
print(json.dumps({"name": tab["name"], "has_api": tab["has_api"], "active": "stowage" in _get_enabled_set(),
                  "core": api._core().__file__}))
"""


def test_a_broken_user_plugin_says_so_at_start_and_doctor_names_the_cause(fake_llm: FakeLLMServer, make_home) -> None:
    home = new_home(make_home, "copy")
    shutil.rmtree(home.plugins_dir / "stowage" / "context_engine" / "ahead")  # the module the 0.1.0 wheel lacked
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi"))

    chat = run_cli(home, "chat", "-q", "HELLO", "-Q")

    assert chat.returncode == 0 and "hi" in chat.stdout, chat.output
    said = [line for line in chat.output.splitlines() if line.startswith("stowage:")]
    assert len(said) == 1, chat.output
    assert "failed to load (No module named 'hermes_plugins.stowage.context_engine.ahead')" in said[0]
    assert "Fix:" in said[0]
    # the pip-installed command of this venv examines that home (the user folder is what Hermes loaded there)
    env = {k: v for k, v in home.env().items() if k != "STOWAGE_HARNESS_HIDE_DISTS"}
    doctor = subprocess.run(
        [str(Path(sys.executable).with_name("stowage")), "--hermes-home", str(home.path), "doctor", "--no-verify"],
        env=env,
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "No module named 'hermes_plugins.stowage.context_engine.ahead'" in doctor.stdout + doctor.stderr

    # fixed: a good copy, one session; the earlier failure and fallback in agent.log are history, not current
    home.install_stowage_user_plugin("copy")
    again = run_cli(home, "chat", "-q", "HELLO", "-Q")
    assert again.returncode == 0 and again.probe["engine"]["class"] == "StowageContextEngine", again.output
    assert not [line for line in again.output.splitlines() if "failed to load" in line]
    for command in (["doctor", "--no-verify"], ["status"]):
        checked = subprocess.run(
            [str(Path(sys.executable).with_name("stowage")), "--hermes-home", str(home.path), *command],
            env=env,
            cwd=home.work_dir,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "would not load" not in checked.stdout and "host-fell-back" not in checked.stdout, checked.stdout


def test_the_readmes_block_for_hermes_from_pypi_works_as_written(
    fake_llm: FakeLLMServer, make_home, wheel_venv: Path
) -> None:
    """After the venv and pip lines (the fixture ran them), the rest of the README block, literally, in a new home."""
    home = make_home(engine="compressor", plugins=[], config=CONFIG)  # a user's Hermes before Stowage
    home.install_harness_probe()  # the scripted session's tools (not part of what the README installs)
    env = _activated(wheel_venv, home.env())
    env.pop("PYTHONPATH", None)  # the venv's own packages only
    for line in install_block("pypi-hermes")[2:]:
        done = subprocess.run(
            ["bash", "-c", line],
            env=env,
            cwd=home.work_dir,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (line, done.stdout + done.stderr)
        assert "Traceback" not in done.stdout + done.stderr, line
    assert line == "stowage doctor" and "result: no problems" in done.stdout, done.stdout
    assert "Allow this plugin to replace built-in tools" not in done.stdout
    script_session(fake_llm)
    chat = run_session(home, hermes=_bin(wheel_venv, "hermes"))
    assert_stowage_at_work(fake_llm, chat)
