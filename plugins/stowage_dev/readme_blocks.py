"""The README's copy-paste install blocks, read from the README itself, so the tests follow what users read."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"  # plugins/stowage_dev/ -> the checkout


def install_block(name: str, readme: Path = README) -> list[str]:
    """The command lines of the fenced block after ``<!-- install: NAME -->`` (comments and blank lines kept out)."""
    text = readme.read_text(encoding="utf-8")
    found = re.search(rf"<!-- install: {re.escape(name)} -->\s*```bash\n(.*?)```", text, re.S)
    if found is None:
        raise AssertionError(f"README.md has no install block {name!r}")
    return [line.split("  #")[0].strip() for line in found.group(1).splitlines() if line.strip()]
