"""The key tables of ``docs/configuration.md``, written from :mod:`schema` so no row can drift.

Each ``### `stowage.<section>``` heading of the doc is followed by a table
between two markers; this module writes those tables from ``schema.KEYS``
(default, accepted values, the ``compression.*`` key inherited, what it does)
and leaves the prose around them alone.  ``tests/context_engine/test_config_reference.py``
fails when the doc differs from what it writes.  After changing the schema::

    .venv/bin/python -m stowage.context_engine.config.reference --write docs/configuration.md
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .schema import KEYS, SECTIONS, Key

HEAD = "| key | default | accepted | inherits | what it does |\n|---|---|---|---|---|"
_BLOCK = re.compile(r"(<!-- keys of stowage\.(\w+): generated[^>]*-->\n)(.*?)(<!-- end of keys -->)", re.DOTALL)


def begin_marker(section: str) -> str:
    return (
        f"<!-- keys of stowage.{section}: generated from context_engine/config/schema.py "
        "(python -m stowage.context_engine.config.reference --write docs/configuration.md) -->\n"
    )


END_MARKER = "<!-- end of keys -->"


def _default(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def row(key: Key) -> str:
    """One table row: the key's name, default, accepted values, inherited key and what it does."""
    inherits = f"`{key.inherits}`" if key.inherits else ""
    return (
        f"| `{key.name}` | `{_cell(_default(key.default))}` | {_cell(key.accepted())} | {inherits} | {_cell(key.doc)} |"
    )


def table(section: str) -> str:
    """The whole table of one ``stowage.<section>`` block."""
    rows = [row(key) for key in KEYS if key.section == section]
    if not rows:
        raise ValueError(f"no key in section {section!r}")
    return HEAD + "\n" + "\n".join(rows) + "\n"


def render(doc: str) -> str:
    """``doc`` with every generated table rewritten from the schema.

    Every section of the schema must have its block in the doc, and every block must name a known section.
    """
    found = [match.group(2) for match in _BLOCK.finditer(doc)]
    missing = [s for s in SECTIONS if s not in found]
    unknown = [s for s in found if s not in SECTIONS]
    if missing or unknown:
        raise ValueError(f"configuration doc: sections without a key table {missing}, unknown sections {unknown}")
    return _BLOCK.sub(lambda m: begin_marker(m.group(2)) + table(m.group(2)) + m.group(4), doc)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("--write", "--check"):
        print("usage: python -m stowage.context_engine.config.reference --write|--check docs/configuration.md")
        return 2
    path = Path(args[1])
    text = path.read_text(encoding="utf-8")
    try:
        fresh = render(text)
    except ValueError as exc:
        print(exc)
        return 1
    if args[0] == "--check":
        if fresh != text:
            print(f"{path} differs from the schema: run with --write")
            return 1
        return 0
    if fresh != text:
        path.write_text(fresh, encoding="utf-8")
        print(f"{path}: key tables rewritten from the schema")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
