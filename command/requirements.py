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

from ..host.load_failure import COST_WITHOUT, REQUIREMENTS, pip_command


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
    """One doctor problem per missing requirement, naming what it really costs, with the pip command for *python*.

    Each is an error, whether the plugin cannot load without it or its loss changes what Stowage counts or finds:
    the fix is one pip command.
    """
    problems = []
    for module in missing_requirements():
        cost = COST_WITHOUT.get(module)
        effect = "the plugin does not load without it" if cost is None else f"without it, {cost}"
        problems.append(
            {
                "kind": "requirement-missing",
                "severity": "error",
                "subject": module,
                "detail": (
                    f"Hermes's Python ({python}) lacks {REQUIREMENTS[module]}: {effect}. Fix: {pip_command(python)}"
                ),
                "repairable": False,
                "repaired": False,
            }
        )
    return problems
