"""docs/modules.md's module tree names every module of the package folders, and only modules that exist;
docs/architecture.md stays one page (at most about 1,500 words) that cites only what is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("host", "command", "context_engine", "blobstore", "tool_search")


def documented_modules() -> set[str]:
    """``folder/sub/name.py`` for every ``name.py`` the tree lists under a folder (by indentation)."""
    text = (ROOT / "docs" / "modules.md").read_text()
    block = text.split("```\n", 2)[1]  # the first fenced block is the tree
    found: set[str] = set()
    stack: list[tuple[int, str]] = []  # (indent, folder path)
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = line.split()[0]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if first.endswith("/"):
            parent = stack[-1][1] + "/" if stack else ""
            stack.append((indent, parent + first.rstrip("/")))
            continue
        if stack:
            names = re.findall(r"(?<![\w./])([A-Za-z_]\w*\.py)\b", _names_part(line))
            found |= {f"{stack[-1][1]}/{name}" for name in names}
    return found


def _names_part(line: str) -> str:
    """The file names of a tree line: everything before the description column (two or more spaces, then text)."""
    stripped = line.strip()
    parts = re.split(r"\s{2,}", stripped)
    names = [p for p in parts if re.fullmatch(r"([A-Za-z_]\w*\.py\s*)+", p)]
    return " ".join(names)


def modules_on_disk() -> set[str]:
    return {
        str(path.relative_to(ROOT))
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*.py")
        if not path.name.startswith("__") and "__pycache__" not in path.parts
    }


def test_the_architecture_tree_matches_the_package_folders():
    documented, on_disk = documented_modules(), modules_on_disk()
    assert not on_disk - documented, f"modules missing from docs/modules.md: {sorted(on_disk - documented)}"
    assert not documented - on_disk, f"docs/modules.md names modules that do not exist: {sorted(documented - on_disk)}"


def cited_paths(text: str) -> set[str]:
    """Every repository path the page names: markdown link targets and code spans that look like paths."""
    links = re.findall(r"\]\(([^)#\s]+)", text)
    spans = re.findall(r"`([\w./-]+/[\w./-]*|[\w-]+\.(?:py|md|yaml|toml))`", text)
    return {p for p in links + spans if not p.startswith("http")}


def test_the_architecture_page_is_one_page_citing_only_the_repository():
    text = (ROOT / "docs" / "architecture.md").read_text()
    words = len(re.sub(r"```.*?```", "", text, flags=re.S).split())
    assert words <= 1500, f"docs/architecture.md has {words} words outside its diagrams"
    assert "http" not in text, "docs/architecture.md cites something outside the repository"
    missing = []
    for cited in sorted(cited_paths(text)):
        candidates = [ROOT / "docs" / cited, ROOT / cited]
        if not any(c.exists() for c in candidates):
            missing.append(cited)
    assert not missing, f"docs/architecture.md names paths that are not in the repository: {missing}"


def test_a_missing_path_is_found():
    assert cited_paths("see [x](nowhere.md) and `context_engine/gone/` and `a.py`") == {
        "nowhere.md",
        "context_engine/gone/",
        "a.py",
    }
