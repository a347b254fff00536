"""Test helpers are shared one way (docs/development.md, "Test helpers").

A test module imports plain helpers from a helper module of its own folder
(``from .catalogs import tool``) or from the installed harness
(``stowage_dev``), and receives fixtures by name from ``conftest.py``. It never
imports a ``test_*.py`` module or a ``conftest.py`` (pytest loads those itself;
importing them runs their tests' module code twice or hands a fixture module
out as a library), never imports through ``tests.`` (that works only when the
checkout happens to be on ``sys.path``), and never edits ``sys.path``. Read
from the source with ``ast``; the checker is run on bad samples too, so it
can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SYS_PATH_EDITS = {"insert", "append", "extend", "remove", "pop", "clear"}


def _is_test_or_conftest(module: str) -> bool:
    name = module.rpartition(".")[2]
    return name == "conftest" or name.startswith("test_")


def _is_sys_path(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def problems(source: str) -> list[str]:
    """``line: what`` for every import of a test module or conftest, import via ``tests.``, or edit of sys.path."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_test_or_conftest(alias.name) or alias.name.split(".")[0] == "tests":
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            named = [f"{module}.{alias.name}" for alias in node.names] if not module or node.level else []
            if _is_test_or_conftest(module) or any(_is_test_or_conftest(n) for n in named):
                found.append(f"{node.lineno}: from {'.' * node.level}{module} import a test module or conftest")
            elif not node.level and module.split(".")[0] == "tests":
                found.append(f"{node.lineno}: from {module} (through the checkout on sys.path)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SYS_PATH_EDITS and _is_sys_path(node.func.value):
                found.append(f"{node.lineno}: sys.path.{node.func.attr}(...)")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                base = target.value if isinstance(target, ast.Subscript) else target
                if _is_sys_path(base):
                    found.append(f"{node.lineno}: assignment to sys.path")
    return found


def test_no_test_module_imports_another_or_a_conftest_or_edits_sys_path() -> None:
    found = {
        str(path.relative_to(TESTS)): bad
        for path in sorted(TESTS.rglob("*.py"))
        if (bad := problems(path.read_text(encoding="utf-8")))
    }
    assert found == {}, f"share test helpers as docs/development.md says: {found}"


def test_the_checker_finds_each_forbidden_shape() -> None:
    bad = [
        "from .conftest import tool",
        "from .test_redact import CORPUS",
        "from . import test_redact",
        "from . import conftest",
        "import test_concurrency_workers as workers",
        "from tests.e2e.stowage_session import warm_up",
        "import tests.e2e.stowage_session",
        "import sys\nsys.path.insert(0, 'x')",
        "import sys\nsys.path.append('x')",
        "import sys\nsys.path = ['x']",
        "import sys\nsys.path[:0] = ['x']",
        "import sys\nsys.path += ['x']",
    ]
    assert [source for source in bad if not problems(source)] == []


def test_the_checker_lets_the_allowed_shapes_pass() -> None:
    good = [
        "from .catalogs import tool",
        "from .helpers import make_engine, RecordingModel",
        "from stowage_dev.records import compaction_record",
        "import stowage_dev.store_workers as workers",
        "from stowage.context_engine.redaction.redact import redact",
        "import os, sys\nenv = {'PYTHONPATH': os.pathsep.join(sys.path)}",  # reading sys.path is fine
        "from . import helpers",
    ]
    assert {source: problems(source) for source in good} == {source: [] for source in good}
