"""Writing a Hermes ``config.yaml`` with a ``stowage:`` block, as a user edits it."""

from __future__ import annotations

from pathlib import Path

import yaml


def write_config(home: Path, block: object) -> Path:
    """``home/config.yaml`` whose ``stowage:`` block is ``block`` (any YAML value, valid or not)."""
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump({"model": {"default": "x"}, "stowage": block}), encoding="utf-8")
    return path
