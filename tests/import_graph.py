"""The import graph of the shipped package, read from the source with ``ast`` (the circle and layer tests).

Every ``import`` anywhere in a module counts, a function-level one included, and so does one under
``if TYPE_CHECKING:`` (it says the two modules know each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

from setuptools import find_packages

REPO = Path(__file__).resolve().parents[1]
# the dashboard tab's API: shipped in dashboard/ (not a package: Hermes loads the file on its own), it imports the
# package at run time by name through ``_sub("command.live")``; each such name counts as one of its imports
DASHBOARD_API = "stowage.dashboard.plugin_api"


def modules() -> dict[str, Path]:
    """Every module of the shipped package by its dotted name (``stowage.blobstore.store``).

    The repository root is the package ``stowage``; every folder under it that is a Python package ships
    as ``stowage.<folder>`` (``setup.py``), and of the root's own files only ``__init__.py``.
    """
    found: dict[str, Path] = {"stowage": REPO / "__init__.py", DASHBOARD_API: REPO / "dashboard" / "plugin_api.py"}
    for package in find_packages(where=str(REPO), exclude=["build*", "dist*"]):
        folder = REPO / package.replace(".", "/")
        for path in sorted(folder.glob("*.py")):
            dotted = f"stowage.{package}" if path.stem == "__init__" else f"stowage.{package}.{path.stem}"
            found[dotted] = path
    return found


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports (``from pkg import sub`` names the submodule)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if module == DASHBOARD_API and _run_time_import(node):
            out.add(f"stowage.{node.args[0].value}")  # type: ignore[attr-defined]
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known]
            out.update(subs)
            if len(subs) < len(node.names):
                out.add(target)
    return {name for name in out if name in known and name != module}


def _run_time_import(node: ast.AST) -> bool:
    """``_sub("command.live")`` in the dashboard's API."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_sub"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def graph() -> dict[str, set[str]]:
    """Every module of the package with the modules of the package it imports."""
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}
