"""Move modules of the ``stowage`` package to new places and rewrite every reference to them, from a plan.

    python -m stowage_dev.relayout --dry-run     # what would move and change; nothing is written
    python -m stowage_dev.relayout               # git mv, rewrite, then ruff (imports sorted, formatted)

The plan is data (:mod:`stowage_dev.relayout_plan`): old dotted module -> new dotted module, old package ->
new package, and the packages to create with their docstrings.  Run from the repository root (the folder that
is the package ``stowage``), on a clean work tree, so ``git diff`` shows exactly what the run did.

What is rewritten, in every tracked or new text file but those the plan leaves untouched:

* imports, read with :mod:`ast`: each one resolved to an absolute module (a relative one from the importing
  file's OLD place), mapped, and written again in its own style (a relative import stays relative, computed
  from the file's NEW place; an absolute one stays absolute).  ``from pkg import mod`` follows ``mod``: the
  statement is split when its names now live in different packages, and a moved module keeps its local name
  (``from . import hermes_engines as replay_host``);
* dotted names anywhere in text (``"stowage.context_engine.x.attr"`` in a ``mock.patch`` or ``monkeypatch``
  target, ``importlib`` names, docs), with or without the leading ``stowage.``; the longest known module prefix
  of a name decides what it names;
* paths in text (``context_engine/x.py``, ``context_engine/replay/``);
* Sphinx-style module references in docstrings (``:mod:`.redact_rules```, ``:func:`compactor.compact```).

A folder path (``context_engine/summary/``) names a package, never the old module ``summary.py``; a dotted name
cannot tell the two apart, so text written for the new layout names a room that took an old module's name by
its folder path until the tool has run.

Idempotent: an entry whose old file is gone and whose new one stands is done and moves nothing; a name that
now names a module or package that exists (a room that took an old module's name) is never rewritten again.
Anything it cannot resolve (a relative import above the package, an old and a new file both present, a
plan whose new place has no package) stops it before anything is written.  Modules of a watched folder that
the plan does not name stay where they are and are listed, as are leftovers it cannot rewrite (a path or a
module name built from pieces), for a person to read.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

PACKAGE = "stowage"
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".ini", ".sh", ".json", ""}
SKIP_PARTS = {".git", ".venv", "build", "dist", "__pycache__", "test-artifacts", "node_modules"}
SPHINX_ROLES = "mod|func|class|data|meth|attr|obj|exc|const"


class RelayoutError(Exception):
    """A plan or a reference the tool cannot carry out; nothing has been written."""


@dataclass
class Plan:
    """The moves, expanded to one entry per module, with each entry's state in the tree."""

    modules: dict[str, str]  # old module -> new module (package moves expanded; an __init__ is its package)
    packages: dict[str, str]  # old package -> new package
    rooms: dict[str, str]  # new package -> its docstring
    watched: tuple[str, ...]
    untouched: tuple[str, ...]
    pending: set[str] = field(default_factory=set)  # old modules still at their old place
    done: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)  # neither old nor new file: removed since the plan was written
    package_names: set[str] = field(default_factory=set)  # old names that are packages (moved whole)


def module_path(root: Path, dotted: str, *, package: bool = False) -> Path:
    """The file of *dotted* (``stowage.a.b`` -> ``a/b.py``; a package -> ``a/b/__init__.py``)."""
    parts = dotted.split(".")[1:]
    if package or not parts:
        return root.joinpath(*parts, "__init__.py")
    return root.joinpath(*parts[:-1], parts[-1] + ".py")


def existing_modules(root: Path) -> dict[str, Path]:
    """Every module of the package on disk now: ``stowage`` is the root, each package folder below it counts."""
    found = {PACKAGE: root / "__init__.py"}

    def walk(folder: Path, dotted: str) -> None:
        for child in sorted(folder.iterdir()):
            if child.name in SKIP_PARTS or child.name.startswith("."):
                continue
            if child.is_dir() and (child / "__init__.py").is_file():
                found[f"{dotted}.{child.name}"] = child / "__init__.py"
                walk(child, f"{dotted}.{child.name}")
            elif child.suffix == ".py" and child.stem != "__init__" and dotted != PACKAGE:
                found[f"{dotted}.{child.stem}"] = child

    walk(root, PACKAGE)
    return found


def load_plan(root: Path, data: ModuleType) -> Plan:
    """The plan of *data* checked against the tree: every entry pending, done or gone, and nowhere half-way."""
    plan = Plan(dict(data.MODULES), dict(data.PACKAGES), dict(data.ROOMS), tuple(data.WATCHED), tuple(data.UNTOUCHED))
    for old, new in data.PACKAGES.items():
        source, target = module_path(root, old, package=True).parent, module_path(root, new, package=True).parent
        folder = source if source.is_dir() else target
        plan.modules[old] = new
        plan.package_names.add(old)
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else []:
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
                if rel:
                    plan.package_names.add(".".join((old, *rel)))
            if rel:
                plan.modules[".".join((old, *rel))] = ".".join((new, *rel))
    news = list(plan.modules.values())
    if len(set(news)) != len(news):
        raise RelayoutError("two old modules are planned to the same new module")
    for old, new in plan.modules.items():
        is_pkg = old in plan.package_names
        old_file, new_file = module_path(root, old, package=is_pkg), module_path(root, new, package=is_pkg)
        if old_file.is_file() and new_file.is_file():
            raise RelayoutError(f"{old} and {new} both exist: {old_file} and {new_file}")
        if old_file.is_file():
            plan.pending.add(old)
        elif new_file.is_file():
            plan.done.add(old)
        else:
            plan.gone.add(old)
        parent = new.rpartition(".")[0]
        if parent not in plan.rooms and parent not in news and not _package_exists(root, parent):
            raise RelayoutError(f"{new}: its package {parent} is neither a room of the plan nor a package that exists")
    return plan


def _package_exists(root: Path, dotted: str) -> bool:
    return module_path(root, dotted, package=True).is_file()


class Mapper:
    """Old names to new ones, knowing which names still mean an old module."""

    def __init__(self, plan: Plan, root: Path) -> None:
        self.plan = plan
        self.on_disk = set(existing_modules(root))
        # an old name is live unless its move is done and the name now belongs to something that exists
        self.live = {old: new for old, new in plan.modules.items() if old in plan.pending or old not in self.on_disk}
        self.live = {old: new for old, new in self.live.items() if old not in plan.gone}
        self.known = self.on_disk | set(plan.modules) | set(plan.modules.values()) | set(plan.rooms)

    def module(self, name: str) -> str:
        """*name* (a whole module name) as it is called after the move."""
        return self.live.get(name, name)

    def dotted(self, name: str) -> str:
        """A dotted name that may go on past a module into its attributes, by its longest known module prefix."""
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            if head in self.known:
                if head in self.live:
                    return ".".join([self.live[head], *parts[cut:]])
                return name
        return name

    def is_module(self, name: str) -> bool:
        return name in self.known


def own_module(root: Path, path: Path) -> str | None:
    """The dotted name of a file of the package (``None`` for tests, bench and the harness)."""
    rel = path.relative_to(root)
    folder = root
    for part in rel.parts[:-1]:
        folder = folder / part
        if not (folder / "__init__.py").is_file():
            return None
    parts = rel.with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    elif len(parts) == 1:
        return None  # run.py, setup.py: not modules of the package
    return ".".join((PACKAGE, *parts))


def _package_of(module: str, path_is_init: bool) -> str:
    return module if path_is_init else module.rpartition(".")[0]


def relative_from(package: str, target: str) -> str:
    """The relative ``from`` part that names *target* inside *package* (``..chat.messages``)."""
    pkg, tgt = package.split("."), target.split(".")
    common = 0
    while common < min(len(pkg), len(tgt)) and pkg[common] == tgt[common]:
        common += 1
    if common == 0:
        raise RelayoutError(f"{target} cannot be named relative to {package}")
    return "." * (len(pkg) - common + 1) + ".".join(tgt[common:])


@dataclass
class FileJob:
    path: Path
    text: str
    old_module: str | None
    new_module: str | None
    is_init: bool


def _byte_to_char(line: str, col: int) -> int:
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))


def _alias_text(name: str, asname: str | None) -> str:
    return name if asname is None or asname == name else f"{name} as {asname}"


def _from_statement(head: str, names: list[str], indent: str, comment: str = "") -> str:
    """One ``from`` statement; a comment of the old statement's first line (``# noqa: E402``) stays on its first."""
    line = f"from {head} import {', '.join(names)}"
    tail = f"  {comment}" if comment else ""
    if len(indent) + len(line) + len(tail) <= 120:
        return line + tail
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"from {head} import ({tail}\n{inner}{indent})"


def _comment_of(lines: list[str], node: ast.stmt, path: Path) -> str:
    """The comment inside a statement that is rewritten: one, on its first line, or the tool stops."""
    assert node.end_lineno is not None
    found = [
        (n, m.group(0))
        for n in range(node.lineno - 1, node.end_lineno)
        for m in [re.search(r"#.*", lines[n])]
        if m and (n < node.end_lineno - 1 or m.start() < _byte_to_char(lines[n], node.end_col_offset or 0))
    ]
    if not found:
        return ""
    if len(found) > 1 or found[0][0] != node.lineno - 1:
        raise RelayoutError(f"{path}:{node.lineno}: comments inside an import that moves; rewrite it by hand")
    return found[0][1].rstrip()


def rewrite_imports(job: FileJob, mapper: Mapper) -> str:
    """*job*'s text with every import of a moved module (or from a moved file) written for the new layout."""
    try:
        tree = ast.parse(job.text, str(job.path))
    except SyntaxError as exc:
        raise RelayoutError(f"{job.path}: cannot parse: {exc}") from exc
    lines = job.text.splitlines(keepends=True)
    old_pkg = _package_of(job.old_module, job.is_init) if job.old_module else None
    new_pkg = _package_of(job.new_module, job.is_init) if job.new_module else None
    moved_file = job.old_module != job.new_module
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = []
            for alias in node.names:
                new = mapper.module(alias.name) if alias.name.split(".")[0] == PACKAGE else alias.name
                names.append(_alias_text(new, alias.asname))
            text = "import " + ", ".join(names)
            if [a.name for a in node.names] != [n.split(" as ")[0] for n in names]:
                edits.append(_edit(lines, node, text))
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if old_pkg is None:
                continue  # a test or bench helper importing its own neighbours
            base_parts = old_pkg.split(".")
            if node.level - 1 >= len(base_parts):
                raise RelayoutError(f"{job.path}:{node.lineno}: relative import above the package")
            base = ".".join(base_parts[: len(base_parts) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
            if base.split(".")[0] != PACKAGE:
                continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if alias.name != "*" and mapper.is_module(full):
                new_full = mapper.module(full)
                head, _, leaf = new_full.rpartition(".")
                groups.setdefault(head, []).append(_alias_text(leaf, alias.asname or alias.name))
            else:
                groups.setdefault(mapper.module(base), []).append(_alias_text(alias.name, alias.asname))
        unchanged = list(groups) == [base] and groups[base] == [_alias_text(a.name, a.asname) for a in node.names]
        if unchanged and (node.level == 0 or not moved_file):
            continue
        indent = " " * _byte_to_char(lines[node.lineno - 1], node.col_offset)
        comment = _comment_of(lines, node, job.path) if node.end_lineno != node.lineno else ""
        statements = []
        for head, names in groups.items():
            if node.level:
                assert new_pkg is not None
                head = relative_from(new_pkg, head)
            statements.append(_from_statement(head, names, indent, comment))
        edits.append(_edit(lines, node, ("\n" + indent).join(statements)))
    return _apply(lines, edits)


def _edit(lines: list[str], node: ast.stmt, text: str) -> tuple[int, int, int, int, str]:
    assert node.end_lineno is not None and node.end_col_offset is not None
    start = _byte_to_char(lines[node.lineno - 1], node.col_offset)
    end = _byte_to_char(lines[node.end_lineno - 1], node.end_col_offset)
    return (node.lineno - 1, start, node.end_lineno - 1, end, text)


def _apply(lines: list[str], edits: list[tuple[int, int, int, int, str]]) -> str:
    for l0, c0, l1, c1, text in sorted(edits, reverse=True):
        merged = lines[l0][:c0] + text + lines[l1][c1:]
        lines[l0 : l1 + 1] = [merged]
    return "".join(lines)


DOTTED = re.compile(r"(?<![\w.])(stowage(?:\.[A-Za-z_]\w*)+)")
ROLE = re.compile(r"(:(?:" + SPHINX_ROLES + r"):`~?)(\.*)([A-Za-z_][\w.]*)(`)")


def rewrite_text(text: str, mapper: Mapper) -> str:
    """Dotted names and paths of moved modules in any text, with or without the leading ``stowage.``."""
    tops = "|".join(sorted({old.split(".")[1] for old in mapper.live if old.count(".") >= 1}))
    text = DOTTED.sub(lambda m: mapper.dotted(m.group(1)), text)
    if not tops:
        return text
    bare = re.compile(r"(?<![\w./-])((?:" + tops + r")(?:\.[A-Za-z_]\w*)+)")
    paths = re.compile(r"(?<![\w.-])((?:" + tops + r")(?:/[A-Za-z_]\w*)+)(\.py\b|/)")
    text = bare.sub(lambda m: mapper.dotted(f"{PACKAGE}.{m.group(1)}").partition(".")[2], text)

    def path(m: re.Match[str]) -> str:
        dotted = f"{PACKAGE}." + m.group(1).replace("/", ".")
        if m.group(2) == "/" and dotted not in mapper.plan.package_names:
            return m.group(0)  # a folder: never the module of the same name a room now replaces
        new = mapper.module(dotted)
        if new == dotted:
            return m.group(0)
        return new.partition(".")[2].replace(".", "/") + m.group(2)

    return paths.sub(path, text)


def rewrite_outside_imports(source: str, mapper: Mapper) -> str:
    """:func:`rewrite_text` on a Python file's lines but its import statements (the import pass wrote those)."""
    skip: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.end_lineno is not None:
            skip.update(range(node.lineno - 1, node.end_lineno))
    lines = source.splitlines(keepends=True)
    return "".join(line if n in skip else rewrite_text(line, mapper) for n, line in enumerate(lines))


def rewrite_roles(job: FileJob, mapper: Mapper) -> str:
    """``:mod:`.name``` and ``:func:`mod.attr``` in a package file's docstrings, read from its old place."""
    if job.old_module is None or job.new_module is None:
        return job.text
    old_pkg = _package_of(job.old_module, job.is_init)
    new_pkg = _package_of(job.new_module, job.is_init)

    def role(m: re.Match[str]) -> str:
        dots, name = m.group(2), m.group(3)
        base = old_pkg.split(".")
        if dots:
            base = base[: len(base) - (len(dots) - 1)]
        full = ".".join([*base, name])
        if not dots and not mapper.is_module(f"{old_pkg}.{name.split('.')[0]}"):
            return m.group(0)  # a bare name of the module itself (:class:`Settings`), not a module path
        new_full = mapper.dotted(full)
        new_base = new_pkg.split(".")
        if dots:
            new_base = new_base[: len(new_base) - (len(dots) - 1)]
        if new_full == full or ".".join([*new_base, name]) == new_full:
            return m.group(0)  # the same name still reads right from the file's new place
        # the module part of the new name, to write it relative to the file's new package
        parts = new_full.split(".")
        for cut in range(len(parts), 0, -1):
            if ".".join(parts[:cut]) in mapper.known:
                break
        module, rest = ".".join(parts[:cut]), parts[cut:]
        if not dots and module.rpartition(".")[0] == new_pkg:
            ref = ".".join([module.rpartition(".")[2], *rest])
        else:
            ref = relative_from(new_pkg, module) + ("." + ".".join(rest) if rest else "")
        return m.group(1) + ref + m.group(4)

    return ROLE.sub(role, job.text)


def text_files(root: Path, untouched: tuple[str, ...]) -> list[Path]:
    """The tracked and new (not ignored) files of the work tree that are text, but the untouched ones."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    out = []
    for rel in listed:
        if not rel or rel in untouched or SKIP_PARTS & set(Path(rel).parts):
            continue
        path = root / rel
        if path.suffix not in TEXT_SUFFIXES or not path.is_file() or rel.startswith("dashboard/dist/"):
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        out.append(path)
    return out


@dataclass
class Outcome:
    moves: list[tuple[Path, Path]]
    changed: dict[Path, str]  # old path of the file -> its new text
    unplanned: list[str]
    gone: list[str]
    leftovers: list[str]


def compute(root: Path, plan: Plan) -> Outcome:
    """Every move and every file's new text, in memory: a failure here leaves the tree as it was."""
    mapper = Mapper(plan, root)
    moves: list[tuple[Path, Path]] = []
    for old in sorted(plan.pending):
        new = plan.modules[old]
        is_pkg = old in plan.package_names
        moves.append((module_path(root, old, package=is_pkg), module_path(root, new, package=is_pkg)))
    changed: dict[Path, str] = {}
    for path in text_files(root, plan.untouched):
        text = path.read_text(encoding="utf-8")
        new_text = text
        if path.suffix == ".py":
            old_module = own_module(root, path)
            job = FileJob(
                path, text, old_module, mapper.module(old_module) if old_module else None, path.name == "__init__.py"
            )
            job.text = rewrite_imports(job, mapper)
            job.text = rewrite_roles(job, mapper)
            new_text = rewrite_outside_imports(job.text, mapper)
        else:
            new_text = rewrite_text(new_text, mapper)
        if new_text != text:
            changed[path] = new_text
    planned = set(plan.modules) | set(plan.modules.values())
    unplanned = [
        name
        for name, path in sorted(existing_modules(root).items())
        if name.rpartition(".")[0] in plan.watched and path.name != "__init__.py" and name not in planned
    ]
    leftovers = find_leftovers(root, plan, changed)
    return Outcome(moves, changed, unplanned, sorted(plan.gone), leftovers)


def find_leftovers(root: Path, plan: Plan, changed: dict[Path, str]) -> list[str]:
    """Places that may still name a moved module in a way no rule reads: for a person.

    A file name in pieces (``"context_engine", "engine.py"``) in Python, and a module's bare name in double
    backticks (````session_state````) anywhere, for names with an underscore (plain words such as ``messages``
    are parameter names as often as module names).
    """
    stems = {old.rpartition(".")[2]: old for old in plan.pending if old not in plan.package_names}
    if not stems:
        return []
    alternatives = "|".join(map(re.escape, sorted(stems)))
    in_pieces = re.compile(r"""["'](""" + alternatives + r""")\.py["']""")
    named = [s for s in sorted(stems) if "_" in s]
    in_prose = re.compile(r"``(" + "|".join(map(re.escape, named)) + r")``") if named else None
    found = []
    for path in text_files(root, plan.untouched):
        text = changed.get(path) or path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            hits = list(in_pieces.finditer(line)) if path.suffix == ".py" else []
            hits += list(in_prose.finditer(line)) if in_prose else []
            for m in hits:
                found.append(f"{path.relative_to(root)}:{number}: {m.group(0)} ({stems[m.group(1)]}?)")
    return found


def apply(root: Path, plan: Plan, outcome: Outcome) -> list[Path]:
    """Create the rooms, ``git mv`` the files, write the new texts; returns the Python files written."""
    for room, doc in plan.rooms.items():
        init = module_path(root, room, package=True)
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{doc}"""\n', encoding="utf-8")
            subprocess.run(["git", "add", str(init)], cwd=root, check=True)
    new_place = {}
    for old, new in outcome.moves:
        new.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(old), str(new)], cwd=root, check=True)
        new_place[old] = new
    for old, _ in outcome.moves:
        for folder in (old.parent, *old.parent.parents):
            if folder == root or not folder.is_dir():
                break
            cache = folder / "__pycache__"
            if cache.is_dir() and not any(p.suffix == ".py" for p in folder.iterdir()):
                for pyc in cache.iterdir():
                    pyc.unlink()
                cache.rmdir()
            if not any(folder.iterdir()):
                folder.rmdir()
    written = []
    for path, text in outcome.changed.items():
        target = new_place.get(path, path)
        target.write_text(text, encoding="utf-8")
        if target.suffix == ".py":
            written.append(target)
    return written


def tidy(root: Path, files: list[Path]) -> None:
    """Imports sorted and formatted the way ``run.py check`` wants them, on the written files only."""
    if not files:
        return
    names = [str(p.relative_to(root)) for p in files]
    subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "--select", "I", "--fix", *names], cwd=root)
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", *names], cwd=root, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (the package folder)")
    parser.add_argument("--plan", default="stowage_dev.relayout_plan", help="the module that holds the plan")
    parser.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        plan = load_plan(root, importlib.import_module(args.plan))
        outcome = compute(root, plan)
    except RelayoutError as exc:
        print(f"relayout: {exc}", file=sys.stderr)
        return 2
    print(f"moves: {len(outcome.moves)} files ({len(plan.done)} entries already done)")
    for old, new in outcome.moves:
        print(f"  {old.relative_to(root)} -> {new.relative_to(root)}")
    print(f"files rewritten: {len(outcome.changed)}")
    for path in sorted(outcome.changed):
        print(f"  {path.relative_to(root)}")
    if outcome.gone:
        print("planned but found nowhere (removed since the plan was written; skipped):")
        print("".join(f"  {name}\n" for name in outcome.gone), end="")
    if outcome.unplanned:
        print("NOT IN THE PLAN (left where they are; extend the plan to move them):")
        print("".join(f"  {name}\n" for name in outcome.unplanned), end="")
    if outcome.leftovers:
        print("possible references built from pieces (read them; not rewritten):")
        print("".join(f"  {line}\n" for line in outcome.leftovers), end="")
    if args.dry_run:
        return 0
    tidy(root, apply(root, plan, outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main())
