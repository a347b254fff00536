"""docs/configuration.md's key tables are written from the schema: a row that drifts fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from stowage.context_engine.config import reference
from stowage.context_engine.config.schema import KEYS, KEYS_BY_PATH

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_doc_tables_are_what_the_schema_writes() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert reference.render(text) == text, (
        "docs/configuration.md differs from the schema: run "
        "`.venv/bin/python -m stowage.context_engine.config.reference --write docs/configuration.md`"
    )
    assert reference.main(["--check", str(DOC)]) == 0


def test_every_key_has_its_row_with_default_range_and_inherited_key() -> None:
    text = DOC.read_text(encoding="utf-8")
    for key in KEYS:
        assert reference.row(key) in text, key.path
    target = reference.row(KEYS_BY_PATH["compaction.target_ratio"])
    assert target.startswith("| `target_ratio` | `0.2` | a number from 0.05 to 0.8 | `compression.target_ratio` |")


def test_a_hand_edited_row_is_caught_and_rewritten(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    good = reference.row(KEYS_BY_PATH["compaction.target_ratio"])
    drifted = text.replace(good, "| `target_ratio` | `stowage.compaction.target_ratio` | copied from above |")
    assert drifted != text
    copy = tmp_path / "configuration.md"
    copy.write_text(drifted, encoding="utf-8")
    assert reference.main(["--check", str(copy)]) == 1
    assert reference.main(["--write", str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == text


def test_a_section_without_its_table_is_an_error() -> None:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- keys of stowage.spill:")
    end = text.index(reference.END_MARKER, start) + len(reference.END_MARKER)
    with pytest.raises(ValueError, match="spill"):
        reference.render(text[:start] + text[end:])
