"""Writing a Hermes ``config.yaml`` with a ``stowage:`` block, as a user edits it."""

from __future__ import annotations

from pathlib import Path

import yaml

from stowage_dev.hermes_home import lifted_caps

SELECTED = {
    "context": {"engine": "stowage"},
    "plugins": {"enabled": ["stowage"]},
    **lifted_caps(),  # Hermes's caps on tool outputs lifted, as `stowage setup` leaves them
}


def write_config(home: Path, block: object) -> Path:
    """``home/config.yaml`` selecting Stowage, with ``block`` (any YAML value, valid or not) as its ``stowage:``."""
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump({"model": {"default": "x"}, **SELECTED, "stowage": block}), encoding="utf-8")
    return path


def select_stowage(home: Path) -> Path:
    """A config that makes Hermes run Stowage (doctor's engine checks pass; the store checks are the test's)."""
    return write_config(home, {})
