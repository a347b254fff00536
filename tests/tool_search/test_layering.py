"""tool_search must stay host-agnostic and importable under any package name."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tool_search"
HOST_MODULES = {"hermes_cli", "agent", "tools", "model_tools", "toolsets", "hermes_agent", "run_agent"}


def imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((0, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or ""))
    return out


def test_no_host_imports_and_relative_intra_package_imports():
    files = sorted(PACKAGE.glob("*.py"))
    assert files
    for path in files:
        for level, module in imports(path):
            top = module.split(".")[0]
            assert top not in HOST_MODULES and "hermes" not in module, f"{path.name} imports {module}"
            assert not (level == 0 and top == "stowage"), f"{path.name}: use relative imports, not {module}"
