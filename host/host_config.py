"""Read the user's Hermes config and validate the ``stowage:`` block.

Hermes hands plugin engines none of its ``compression.*`` keys, so we read
``$HERMES_HOME/config.yaml`` ourselves.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import yaml

from ..context_engine.config.settings import Settings, StowageConfigError, load_settings

logger = logging.getLogger(__name__)


def hermes_home() -> Path:
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:  # noqa: BLE001 - fall back to the documented default
        return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def config_path() -> Path:
    return hermes_home() / "config.yaml"


def read_raw_config() -> dict[str, Any]:
    """The user's config.yaml as written ({} when missing).

    Not ``hermes_cli.config.load_config()``: that merges Hermes's defaults
    in, and Stowage must inherit only the ``compression.*`` keys the user
    actually set (Hermes's default threshold 0.50 is raised to 0.75 by the
    built-in on most windows; inheriting the raw default would compact
    earlier than the built-in ever did).
    """
    path = config_path()
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    return data if isinstance(data, dict) else {}


def load_user_settings() -> tuple[Settings | None, StowageConfigError | None]:
    """Validated settings, or the error to raise when the engine starts."""
    try:
        raw = read_raw_config()
    except (OSError, yaml.YAMLError) as exc:
        return None, StowageConfigError([f"cannot read the config file: {exc}"], str(config_path()))
    try:
        return load_settings(raw, source=str(config_path())), None
    except StowageConfigError as exc:
        return None, exc
