"""docs/modules.md's module tree names every module of the package folders, and only modules that exist;
docs/architecture.md stays one page (at most about 1,500 words) that cites only what is in the repository, and its
layer block draws the floors the layer test holds (``tests/layers.py``), floor by floor."""

from __future__ import annotations

import re
from pathlib import Path

from .layers import CE, LAYERS

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("host", "command", "context_engine", "blobstore", "tool_search")
TOP_FOLDERS = {"host", "command", "dashboard", "blobstore", "tool_search"}  # stowage.<name>; the rest are CE rooms


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


def drawn_floors(text: str) -> dict[int, set[str]]:
    """The floors docs/architecture.md's layer block draws: ``<floor>  <room>/ [<room>/ ...]  what it holds``."""
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    floors: dict[int, set[str]] = {}
    for line in block.splitlines():
        words = line.split()
        if not words or not words[0].isdigit():
            continue
        rooms = []
        for word in words[1:]:
            if not word.endswith("/"):
                break
            rooms.append(room_name(word.rstrip("/")))
        assert int(words[0]) not in floors, f"floor {words[0]} is drawn twice"
        floors[int(words[0])] = set(rooms)
    return floors


def room_name(folder: str) -> str:
    if folder == "stowage":
        return "stowage"
    if folder == "context_engine":
        return CE
    return f"stowage.{folder}" if folder in TOP_FOLDERS else f"{CE}.{folder}"


def test_the_architecture_layer_block_draws_the_floors_the_layer_test_holds():
    drawn = drawn_floors((ROOT / "docs" / "architecture.md").read_text())
    held = dict(enumerate(LAYERS))
    assert drawn == held, f"docs/architecture.md draws {drawn}, tests/layers.py holds {held}"


def test_a_room_drawn_on_the_wrong_floor_is_found():
    page = "## Layers\n```\n 1    records/   x\n 0    blobstore/  tool_search/   y\n```\n"
    assert drawn_floors(page) == {1: {f"{CE}.records"}, 0: {"stowage.blobstore", "stowage.tool_search"}}
    assert drawn_floors(page) != dict(enumerate(LAYERS))
