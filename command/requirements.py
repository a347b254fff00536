"""Whether this interpreter has every module the plugin imports.

``stowage doctor`` runs in Hermes's own Python on every route (the pip console
script in its environment, ``hermes stowage``, the plugin folder's launcher),
so a requirement missing here is one the plugin will miss at Hermes's next start,
even when no session has failed yet (the doctor's tools themselves need fewer).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ..host.load_failure import REQUIREMENTS, pip_command


def missing_requirements() -> list[str]:
    """Import names of the requirements that do not import here, in ``REQUIREMENTS`` order."""
    missing = []
    for module in REQUIREMENTS:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def requirement_problems(python: str = sys.executable) -> list[dict[str, Any]]:
    """One doctor problem (an error, with the pip command for *python*) when any requirement is missing."""
    missing = missing_requirements()
    if not missing:
        return []
    names = ", ".join(REQUIREMENTS[m] for m in missing)
    return [
        {
            "kind": "requirement-missing",
            "severity": "error",
            "subject": ", ".join(missing),
            "detail": (
                f"Hermes's Python ({python}) lacks {names}: the plugin does not load without "
                f"{'them' if len(missing) > 1 else 'it'}. Fix: {pip_command(python)}"
            ),
            "repairable": False,
            "repaired": False,
        }
    ]
