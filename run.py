#!/usr/bin/env python3
"""One entry point that sets up what it needs, then runs the job.

    python3 run.py demo     # a real Hermes session with Stowage, offline
    python3 run.py test     # static checks, then the whole test suite (extra args go to pytest)
    python3 run.py check    # the static checks only: ruff and mypy on the package
    python3 run.py bench    # the benchmarks, Stowage vs built-in Hermes

Set-up: a virtualenv in ``.venv/`` at the repository root with
``hermes-stowage[test]`` installed in editable mode (pinned hermes-agent
0.19.0 included), the development harness ``stowage_dev``
(``plugins/stowage_dev/``, editable, never part of the wheel) and the npm MCP
reference servers the tool-search tests start.  It is reused while the two
``pyproject.toml`` files and this file are unchanged.
Only the Python standard library is used before the venv exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEV = ROOT / "plugins" / "stowage_dev"
VENV = Path(os.environ.get("STOWAGE_VENV", ROOT / ".venv"))
STAMP = VENV / ".stowage-setup"
NPM_DIR = VENV / "npm"
# MCP reference servers whose tool lists the tool-search e2e tests capture
# (plugins/stowage_dev/mcp_catalog.py); exact versions, all start without real
# credentials.
NPM_PACKAGES: tuple[str, ...] = (
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
    "@modelcontextprotocol/server-github@2025.4.8",
    "@modelcontextprotocol/server-slack@2025.4.25",
    "@modelcontextprotocol/server-gitlab@2025.4.25",
    "@modelcontextprotocol/server-google-maps@0.6.2",
    "@modelcontextprotocol/server-brave-search@0.6.2",
    "@modelcontextprotocol/server-postgres@0.6.2",
    "@modelcontextprotocol/server-everart@0.6.2",
    "@modelcontextprotocol/server-aws-kb-retrieval@0.6.2",
)


def venv_python() -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / "python"


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (ROOT / "pyproject.toml", DEV / "pyproject.toml", Path(__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(cmd: list[str], **kwargs) -> None:  # noqa: ANN003
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def setup() -> Path:
    """Create or refresh the venv; return its python."""
    if STAMP.is_file() and STAMP.read_text() == _fingerprint() and venv_python().exists():
        if NPM_PACKAGES and not npm_installed() and shutil.which("npm"):
            _npm_install()  # npm appeared since the last set-up
        return venv_python()
    if sys.version_info < (3, 11):
        sys.exit(f"Stowage needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    print(f"Setting up {VENV} (first run, or pyproject.toml changed) ...", flush=True)
    if not venv_python().exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    python = str(venv_python())
    _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    _run([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]", "-e", str(DEV)])
    if NPM_PACKAGES:
        _npm_install()
    STAMP.write_text(_fingerprint())
    return venv_python()


def npm_installed() -> bool:
    return (NPM_DIR / "node_modules" / "@modelcontextprotocol").is_dir()


def _npm_install() -> None:
    """The npm MCP reference servers, used only by the MCP tool-search tests: skipped without npm."""
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: skipping the MCP reference servers. Everything else works (the demo too); the MCP "
              "tool-search tests are skipped until Node.js 18+ and npm are installed and `python3 run.py setup` "
              "runs again.", flush=True)
        return
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    _run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NPM_DIR), *NPM_PACKAGES])


# The folders of the shipped package; ruff checks them as they are, mypy as
# the package `stowage` they install as (see check()).
CHECKED = ("plugins/stowage", "plugins/stowage_cli", "context_engine", "blobstore", "tool_search")


def check(python: str, env: dict[str, str]) -> int:
    """ruff, then mypy on ``stowage`` laid out as it installs (symlinks in .venv)."""
    status = subprocess.call([python, "-m", "ruff", "check", *CHECKED], cwd=ROOT, env=env)
    spec = importlib.util.spec_from_file_location("stowage_install_user_plugin",
                                                  ROOT / "plugins" / "install_user_plugin.py")
    assert spec is not None and spec.loader is not None
    installer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installer)
    layout = VENV / "mypy-layout"
    installer.install(layout, link=True)  # layout/plugins/stowage/{context_engine,blobstore,...}
    status |= subprocess.call([python, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                               "--cache-dir", str(VENV / ".mypy_cache"), "-p", "stowage"],
                              cwd=layout / "plugins", env=env)
    if status:
        print("static checks failed (ruff / mypy above)", flush=True)
    return status


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "check", "bench", "setup"):
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    python = str(setup())
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if npm_installed():  # unset: the MCP tests skip, saying why (fail under CI)
        env["STOWAGE_NPM_DIR"] = str(NPM_DIR)
    if job == "setup":
        return 0
    if job == "check":
        return check(python, env)
    if job == "test":
        status = check(python, env)
        return subprocess.call([python, "-m", "pytest", *rest], cwd=ROOT, env=env) or status
    if job == "demo":
        return subprocess.call([python, "-m", "stowage_dev.demo", *rest], cwd=ROOT, env=env)
    status = 0
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        print(f"\n== {script.name} ==", flush=True)
        status |= subprocess.call([python, str(script), *rest], cwd=ROOT, env=env)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
