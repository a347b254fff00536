"""The move tool (``python -m stowage_dev.relayout``) on a small tree of its own: moves, rewrites, runs twice.

The tree is a git repository whose root is the package ``stowage`` (as the real one is); the plan moves one
flat module into a new room, one module into an existing package under the name of the room it joins, and a
package whole.  Every kind of reference the tool rewrites appears once; a second run changes nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from stowage_dev import relayout

FILES = {
    "__init__.py": '"""root."""\n',
    "core/__init__.py": '"""core."""\n',
    "core/helpers.py": '"""Helpers; see :mod:`.rules`."""\n\nVALUE = 1\n',
    "core/rules.py": '"""Rules."""\n\nfrom .helpers import VALUE\n\nRULE = VALUE\n',
    "core/user.py": (
        '"""Uses :func:`rules.RULE`."""\n\n'
        "from . import helpers\n"
        "from .rules import RULE\n\n\n"
        "def late():\n"
        "    from .helpers import VALUE as V\n\n"
        "    return V, RULE, helpers\n"
    ),
    "core/replay/__init__.py": '"""replay."""\n\nfrom .driver import drive\n',
    "core/replay/driver.py": (
        '"""driver: :func:`drive`."""\n\nfrom ..helpers import VALUE\n\n\ndef drive():\n    return VALUE\n'
    ),
    "core/tables.py": "ROWS = 1\n",
    "face/__init__.py": '"""face."""\n',
    "face/cli.py": (
        "import stowage.core.rules as r\n"
        "from stowage.core.replay import drive\n"
        "from ..core import helpers, user\n"
        "from stowage.core import tables\n"
        "from ..core.replay import (  # noqa: E402\n    drive as d,\n)\n\n"
        'TARGET = "stowage.core.helpers.VALUE"\n'
        "X = (r, drive, helpers, user)\n"
    ),
    "docs/guide.md": (
        "See `core/rules.py`, `core/replay/`, ``core.helpers.VALUE``;\n`core/tables.py` in `core/tables/`.\n"
    ),
    "tests/test_x.py": (
        "from stowage.core.rules import RULE\n\n\n"
        "def test_x(monkeypatch):\n"
        '    monkeypatch.setattr("stowage.core.rules.RULE", 2)\n'
        "    assert RULE\n"
    ),
}

PLAN = SimpleNamespace(
    ROOMS={"stowage.core.base": "The ground floor.", "stowage.core.tables": "A room named as the module it takes."},
    MODULES={
        "stowage.core.helpers": "stowage.core.base.helpers",
        "stowage.core.rules": "stowage.face.rules",
        "stowage.core.tables": "stowage.core.tables.main",
    },
    PACKAGES={"stowage.core.replay": "stowage.face.replay"},
    WATCHED=("stowage.core",),
    UNTOUCHED=(),
)


def _tree(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    who = ["-c", "user.name=relayout test", "-c", "user.email=relayout@example.invalid"]
    subprocess.run(["git", *who, "commit", "-qm", "before"], cwd=tmp_path, check=True)
    return tmp_path


def _run(root: Path) -> relayout.Outcome:
    plan = relayout.load_plan(root, PLAN)
    outcome = relayout.compute(root, plan)
    relayout.apply(root, plan, outcome)
    return outcome


def test_moves_and_rewrites_every_kind_of_reference(tmp_path):
    root = _tree(tmp_path)
    outcome = _run(root)
    assert outcome.unplanned == ["stowage.core.user"]
    assert not (root / "core/helpers.py").exists() and not (root / "core/replay").exists()
    assert (root / "core/base/__init__.py").read_text() == '"""The ground floor."""\n'
    user = (root / "core/user.py").read_text()
    assert "from .base import helpers\n" in user
    assert "from ..face.rules import RULE\n" in user
    assert "    from .base.helpers import VALUE as V\n" in user
    assert '"""Uses :func:`..face.rules.RULE`."""' in user
    rules = (root / "face/rules.py").read_text()
    assert "from ..core.base.helpers import VALUE\n" in rules
    assert (root / "core/base/helpers.py").read_text().startswith('"""Helpers; see :mod:`...face.rules`."""')
    driver = (root / "face/replay/driver.py").read_text()
    assert driver.startswith('"""driver: :func:`drive`."""') and "from ...core.base.helpers import VALUE\n" in driver
    assert (root / "face/replay/__init__.py").read_text().endswith("from .driver import drive\n")
    cli = (root / "face/cli.py").read_text()
    assert "import stowage.face.rules as r\n" in cli
    assert "from stowage.face.replay import drive\n" in cli
    assert "from ..core.base import helpers\nfrom ..core import user\n" in cli
    assert 'TARGET = "stowage.core.base.helpers.VALUE"' in cli
    assert "from .replay import drive as d  # noqa: E402\n" in cli
    assert "from stowage.core.tables import main as tables\n" in cli
    assert (root / "docs/guide.md").read_text() == (
        "See `face/rules.py`, `face/replay/`, ``core.base.helpers.VALUE``;\n`core/tables/main.py` in `core/tables/`.\n"
    )
    test = (root / "tests/test_x.py").read_text()
    assert "from stowage.face.rules import RULE\n" in test and '"stowage.face.rules.RULE"' in test
    moved = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert "core/helpers.py -> core/base/helpers.py" in moved


def test_a_second_run_changes_nothing(tmp_path):
    root = _tree(tmp_path)
    _run(root)
    before = {p: p.read_text() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    again = _run(root)
    assert again.moves == [] and again.changed == {}
    assert {p: p.read_text() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts} == before


def test_what_it_cannot_resolve_stops_it_before_writing(tmp_path):
    root = _tree(tmp_path)
    (root / "core/bad.py").write_text("from .... import nothing\n")
    with pytest.raises(relayout.RelayoutError, match="above the package"):
        relayout.compute(root, relayout.load_plan(root, PLAN))
    assert (root / "core/helpers.py").exists()
    (root / "core/bad.py").unlink()
    (root / "core/base").mkdir()
    (root / "core/base/__init__.py").write_text("")
    (root / "core/base/helpers.py").write_text("")
    with pytest.raises(relayout.RelayoutError, match="both exist"):
        relayout.load_plan(root, PLAN)


def test_a_plan_into_no_package_is_refused(tmp_path):
    root = _tree(tmp_path)
    plan = SimpleNamespace(**{**vars(PLAN), "MODULES": {"stowage.core.helpers": "stowage.nowhere.helpers"}})
    with pytest.raises(relayout.RelayoutError, match="neither a room"):
        relayout.load_plan(root, plan)
