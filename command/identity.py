"""Is Stowage the engine Hermes runs?  Resolved the way Hermes 0.19.0 resolves it.

Hermes selects a plugin context engine only when ``context.engine`` equals the
engine's name exactly, the plugin's key is in ``plugins.enabled`` and not in
``plugins.disabled``, and the plugin is installed by a route the host
discovers (a ``hermes_agent.plugins`` entry point in Hermes's Python, or a
user-plugin folder ``$HERMES_HOME/plugins/<dir>/`` whose manifest name is the
key).  Otherwise it logs one warning, ``Context engine '<name>' not found —
falling back to built-in compressor``, and runs its own compressor.  This
module finds each such cause from the config, the install and
``$HERMES_HOME/logs/agent.log``, with the exact fix.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from ..context_engine.config.schema import SECTIONS
from ..host.enable_step import enable_needs_config_line, enable_step, installed_host, undisable_step
from ..host.host_support import installed_version, parse
from ..host.load_failure import fix_for
from .host_caps import cap_problems, fixed_caps, host_cli
from .load_check import ImportCheck, import_now

ENGINE = "stowage"
PLUGIN_KEY = "stowage"
ENTRY_POINT_GROUP = "hermes_agent.plugins"
FALLBACK = re.compile(r"Context engine '(?P<name>[^']*)' not found\s*\W+\s*falling back to built-in compressor")
LOAD_FAILED = re.compile(r"Failed to load plugin '(?P<name>[^']*)': (?P<cause>.*)$")
# what the host logs when Stowage does run: a fallback or load failure logged before one of these is fixed
RUNNING = re.compile(r"Using context engine: (?P<name>\S+)|Plugin '(?P<plugin>[^']*)' registered context engine")
LOG_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})")
LOG_TAIL_BYTES = 2 * 1024 * 1024


def _problem(kind: str, subject: str, detail: str, severity: str = "error") -> dict[str, Any]:
    return {
        "kind": kind,
        "severity": severity,
        "subject": subject,
        "detail": detail,
        "repairable": False,
        "repaired": False,
    }


def _names(value: Any) -> list[str] | None:
    """A ``plugins.enabled``/``disabled`` list as Hermes reads it (None when the key is missing)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return []


def read_host_config(path: Path) -> tuple[dict[str, Any], str | None]:
    """The raw config and why it could not be read (None when fine or missing)."""
    if not path.is_file():
        return {}, None
    try:
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return {}, f"cannot read {path}: {exc}"
    return (data if isinstance(data, dict) else {}), None


def user_plugin_folders(hermes_home: Path) -> list[dict[str, Any]]:
    """User-plugin folders whose plugin key (manifest name, else folder name) is ``stowage``."""
    found = []
    folder = hermes_home / "plugins"
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    for child in children:
        manifest = next((child / n for n in ("plugin.yaml", "plugin.yml") if (child / n).is_file()), None)
        if manifest is None:
            continue
        try:
            data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            data = None
        name = data.get("name") if isinstance(data, dict) and isinstance(data.get("name"), str) else child.name
        if name == PLUGIN_KEY:
            found.append({"path": str(child), "complete": (child / "__init__.py").is_file()})
    return found


def _hermes_python() -> str | None:
    """The interpreter of the ``hermes`` command on PATH (its script's shebang), if any."""
    script = shutil.which("hermes")
    if not script:
        beside = Path(sys.executable).with_name("hermes")
        script = str(beside) if beside.exists() else None
    if not script:
        return None
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[1])
    return words[0]


def _entry_point_here() -> bool:
    try:
        return any(ep.name == PLUGIN_KEY for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # noqa: BLE001 - broken metadata of another package
        return False


def _entry_point_in(python: str) -> bool | None:
    """Whether ``python`` sees the entry point (None: could not ask it)."""
    code = "import importlib.metadata as m; print(any(e.name == %r for e in m.entry_points(group=%r)))" % (
        PLUGIN_KEY,
        ENTRY_POINT_GROUP,
    )
    try:
        proc = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return True if out == "True" else False if out == "False" else None


def entry_point_route() -> dict[str, Any]:
    here = os.path.realpath(sys.executable)
    hermes = _hermes_python()
    if hermes and os.path.realpath(hermes) != here:
        found = _entry_point_in(hermes)
        return {"python": hermes, "found": found, "checked_in": "hermes"}
    return {"python": sys.executable, "found": _entry_point_here(), "checked_in": "hermes" if hermes else "this"}


def read_fallbacks(log_path: Path) -> dict[str, Any]:
    """The host's fallback warnings in ``agent.log`` (the tail of a large file; unreadable bytes replaced)."""
    info: dict[str, Any] = {"path": str(log_path), "exists": log_path.is_file(), "fallbacks": [], "error": None}
    if not info["exists"]:
        return info
    try:
        with log_path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - LOG_TAIL_BYTES))
            text = handle.read().decode("utf-8", "replace")
    except OSError as exc:
        info["error"] = f"cannot read {log_path}: {exc}"
        return info
    info["load_failures"] = []
    for line in text.splitlines():
        running = RUNNING.search(line)
        if running and ENGINE in (running.group("name"), running.group("plugin")):
            # Stowage ran after these: they are history, not the current state
            info["fallbacks"].clear()
            info["load_failures"].clear()
            continue
        failed = LOAD_FAILED.search(line)
        if failed and failed.group("name") == PLUGIN_KEY:
            info["load_failures"].append(
                {"cause": failed.group("cause").strip()[:300], "time": _log_time(line), "line": line.strip()[:300]}
            )
            continue
        match = FALLBACK.search(line)
        if match:
            info["fallbacks"].append(
                {"engine": match.group("name"), "time": _log_time(line), "line": line.strip()[:300]}
            )
    return info


def _log_time(line: str) -> float | None:
    stamp = LOG_TIME.match(line)
    if not stamp:
        return None
    try:
        return time.mktime(time.strptime(stamp.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S"))
    except (ValueError, OverflowError):
        return None


def _reinstall_hint(active: str | None, folders: list[dict[str, Any]]) -> str:
    if active == "entry point":
        return "pip install --force-reinstall <the Stowage wheel or checkout> into Hermes's Python"
    if any((Path(f["path"]) / ".git").exists() for f in folders):
        return f"hermes plugins update {PLUGIN_KEY}"
    return (
        "hermes plugins install <the Stowage git URL> --force, or python3 plugins/install_user_plugin.py "
        "from a checkout"
    )


_WHY_NOT = {
    "host-config-unreadable": "the config file cannot be read",
    "plugin-disabled": "the plugin is in plugins.disabled",
    "plugin-not-enabled": "the plugin is not in plugins.enabled",
    "not-installed": "the plugin is not installed where Hermes looks",
    "plugin-load-failed": "the plugin failed to import",
    "host-fell-back": "Hermes logged a fallback",
}


def _why_not(failures: list[dict[str, Any]], engine: str) -> str:
    """The first reason Hermes would not run Stowage, in a few words (the problems table has the fix)."""
    for problem in failures:
        if problem["kind"] == "engine-name-case":
            return f"context.engine is {engine!r}: Hermes matches {ENGINE!r} exactly"
        if problem["kind"] in _WHY_NOT:
            return _WHY_NOT[problem["kind"]]
    return "Stowage is configured but would not run"


def section_typos(raw: Mapping[str, Any]) -> list[str]:
    """Top-level keys that look like a misspelt ``stowage:`` section (``stowge:``, ``Stowage:``).

    Hermes ignores an unknown section and Stowage then runs on its defaults, so a typo there changes nothing the
    user can see.  A key counts when it is a mapping and either very close to ``stowage`` or close and holding
    one of Stowage's own sub-sections (``store:``, ``view:``, ...).
    """
    found = []
    for key, value in raw.items():
        if not isinstance(key, str) or key == ENGINE or not isinstance(value, dict):
            continue
        ratio = difflib.SequenceMatcher(None, key.strip().lower(), ENGINE).ratio()
        if ratio >= 0.9 or (ratio >= 0.75 and any(sub in SECTIONS for sub in value)):
            found.append(key)
    return found


def _load_recheck(active: str | None, ep: Mapping[str, Any], folders: list[dict[str, Any]], cause: str) -> ImportCheck:
    """Import the plugin now by the route the logged failure came from: a user-plugin folder when its cause names
    the folder's package (``hermes_plugins.stowage...``), else the route Hermes takes (the entry point wins)."""
    python = ep.get("python") or sys.executable
    folder = next((f["path"] for f in folders if f["complete"]), None)
    from_folder = f"hermes_plugins.{PLUGIN_KEY}" in cause and folder is not None
    if active == "entry point" and not from_folder:
        return import_now(python, active, PLUGIN_KEY, ENTRY_POINT_GROUP)
    return import_now(python, "user plugin folder", PLUGIN_KEY, ENTRY_POINT_GROUP, folder)


def check_identity(
    hermes_home: Path,
    config_path: Path,
    *,
    environ: Mapping[str, str] | None = None,
    route: dict[str, Any] | None = None,
    host: tuple[str | None, str | None] | None = None,
    recheck: Callable[[], ImportCheck] | None = None,
) -> dict[str, Any]:
    """What Hermes would run, and every reason it would not run Stowage (``problems``).

    *host* is the (distribution, version) of Hermes, which decides how the fixes are written (this Python's by
    default); *recheck* imports the plugin now, when agent.log records a load failure (by Hermes's route by
    default).
    """
    environ = os.environ if environ is None else environ
    distribution, version = installed_host() if host is None else host
    raw, read_error = read_host_config(config_path)
    context_block = raw.get("context")
    context: dict[str, Any] = context_block if isinstance(context_block, dict) else {}
    engine_value = context.get("engine", "compressor")
    engine = str(engine_value) if engine_value is not None else "compressor"
    plugins_block = raw.get("plugins")
    plugins: dict[str, Any] = plugins_block if isinstance(plugins_block, dict) else {}
    enabled, disabled = _names(plugins.get("enabled")), _names(plugins.get("disabled")) or []
    folders = user_plugin_folders(hermes_home)
    ep = entry_point_route() if route is None else route
    # Hermes discovers user folders first and entry points last: on one key, the entry point wins.
    active = (
        "entry point" if ep.get("found") else ("user plugin folder" if any(f["complete"] for f in folders) else None)
    )
    log = read_fallbacks(hermes_home / "logs" / "agent.log")
    problems: list[dict[str, Any]] = []
    caps_fixed: list[str] = []  # the host's caps on tool outputs that no setting lifts
    selected = engine == ENGINE
    wants_stowage = engine.strip().lower() == ENGINE
    if read_error:
        problems.append(_problem("host-config-unreadable", str(config_path), read_error))
    if wants_stowage and not selected:
        problems.append(
            _problem(
                "engine-name-case",
                f"context.engine: {engine}",
                f"Hermes matches engine names exactly, so {engine!r} falls back to the built-in compressor. "
                f"Fix: set `context: {{engine: {ENGINE}}}` in {config_path} (or `hermes config set context.engine "
                f"{ENGINE}`)",
            )
        )
    if not wants_stowage:
        problems.append(
            _problem(
                "not-selected",
                f"context.engine: {engine}",
                f"context.engine is {engine!r}, so Hermes runs "
                + ("its built-in compressor" if engine in ("compressor", "") else f"{engine!r}")
                + f", not Stowage (installed or not). Fix: `hermes config set context.engine {ENGINE}` "
                f"(or set `context: {{engine: {ENGINE}}}` in {config_path})",
            )
        )
    # whatever engine is named: each of these alone keeps Hermes from running Stowage
    if PLUGIN_KEY in disabled:
        problems.append(
            _problem(
                "plugin-disabled",
                f"plugins.disabled: {PLUGIN_KEY}",
                f"the plugin is in plugins.disabled, which always wins: Hermes falls back to the built-in "
                f"compressor. Fix: `{undisable_step(PLUGIN_KEY, distribution, version, disabled)}`"
                + (
                    ""
                    if not enable_needs_config_line(version) or (enabled is not None and PLUGIN_KEY in enabled)
                    else f", then `{enable_step(PLUGIN_KEY, distribution, version, enabled)}`"
                )
                + f" (or remove {PLUGIN_KEY} from plugins.disabled in {config_path})",
            )
        )
    elif enabled is None or PLUGIN_KEY not in enabled:
        what = "plugins.enabled is missing" if enabled is None else f"{PLUGIN_KEY} is not in plugins.enabled"
        problems.append(
            _problem(
                "plugin-not-enabled",
                "plugins.enabled",
                f"{what}: Hermes loads no third-party plugin that is not enabled, and falls back to the built-in "
                f"compressor. Fix: `{enable_step(PLUGIN_KEY, distribution, version, enabled)}` (or add it to "
                f"plugins.enabled in {config_path})",
            )
        )
    if active is None:
        where = f"the Python of `hermes` ({ep.get('python')})" if ep.get("python") else "this Python"
        problems.append(
            _problem(
                "not-installed",
                PLUGIN_KEY,
                f"no install route Hermes discovers: no {ENTRY_POINT_GROUP} entry point named {PLUGIN_KEY!r} in "
                f"{where}"
                + (" (it could not be asked)" if ep.get("found") is None else "")
                + f", and no complete user-plugin folder under {hermes_home / 'plugins'}. "
                "Fix: `hermes plugins install "
                f"<the Stowage git URL> --enable`, or `pip install <the Stowage wheel or checkout>` into Hermes's "
                f"Python (hermes-stowage once published), or `python3 plugins/install_user_plugin.py` from a "
                f"checkout",
            )
        )
    if wants_stowage:
        release = parse(installed_version())
        problems += cap_problems(raw, release, host_cli())
        caps_fixed = fixed_caps(release)
        if environ.get("HERMES_SAFE_MODE") not in (None, "", "0"):
            problems.append(
                _problem(
                    "safe-mode",
                    "HERMES_SAFE_MODE",
                    "HERMES_SAFE_MODE is set: Hermes discovers no plugin at all. Fix: unset it",
                    severity="warning",
                )
            )
    config_mtime = config_path.stat().st_mtime if config_path.is_file() else 0.0
    stale = current = 0
    for fb in log["fallbacks"]:
        if fb["engine"].strip().lower() != ENGINE:
            continue
        if fb["time"] is not None and fb["time"] < config_mtime:
            stale += 1
        else:
            current += 1
    if wants_stowage and log.get("load_failures"):
        last_failure = log["load_failures"][-1]
        python = ep.get("python") or sys.executable
        now = ImportCheck(False, last_failure["cause"], checked=False)
        if active is not None:
            now = recheck() if recheck is not None else _load_recheck(active, ep, folders, last_failure["cause"])
        if now.ok:
            # the log is history: the install was fixed after Hermes last tried, and the fallbacks went with it
            current = 0
            problem = _problem(
                "plugin-load-fixed",
                str(log["path"]),
                f"agent.log records a failed import of the plugin ({last_failure['cause']}), but it imports now by "
                f"the {now.route or active} in {python}: Hermes loads Stowage at its next start",
                severity="note",
            )
            problem["advisory"] = True
            problems.append(problem)
        else:
            cause = now.cause if now.checked else last_failure["cause"]
            told = (
                f"{cause} (re-checked now; agent.log: {last_failure['line']})"
                if now.checked
                else f"{cause} (agent.log: {last_failure['line']}"
                + (f"; not re-checked: {now.cause}" if active is not None else "")
                + ")"
            )
            problems.append(
                _problem(
                    "plugin-load-failed",
                    str(log["path"]),
                    f"Hermes could not import the Stowage plugin and ran its built-in compressor: {told}. Fix: "
                    + fix_for(cause, python, _reinstall_hint(active, folders)),
                )
            )
    for key in section_typos(raw):
        problems.append(
            _problem(
                "config-section-typo",
                f"{key}:",
                f"{config_path} has a top-level section {key!r}, which looks like a misspelt {ENGINE!r}: Hermes "
                f"ignores it and Stowage runs on its defaults. Fix: rename {key!r} to {ENGINE!r}",
            )
        )
    failures = [p for p in problems if not p.get("advisory") and not p.get("stowage_runs")]
    if current and not failures:
        last = [fb for fb in log["fallbacks"] if fb["engine"].strip().lower() == ENGINE][-1]
        problems.append(
            _problem(
                "host-fell-back",
                str(log["path"]),
                f"Hermes logged a fallback after the config was last changed: {last['line']}. The config looks right, "
                f"so the install is the likely cause: check that `hermes plugins list` shows {PLUGIN_KEY} enabled "
                f"and that Stowage is installed in the Python `hermes` runs",
            )
        )
    if log["error"]:
        problems.append(_problem("agent-log-unreadable", log["path"], log["error"], severity="warning"))
    failures = [p for p in problems if not p.get("advisory") and not p.get("stowage_runs")]
    if selected and not failures:
        running = f"{ENGINE} (via the {active})"
    elif wants_stowage:
        running = "Hermes's built-in compressor (" + _why_not(failures, engine) + "; see problems)"
    else:
        running = f"Hermes's built-in compressor: context.engine is {engine!r}, not {ENGINE!r}"
        if engine not in ("compressor", ""):
            running = f"{engine!r} (not Stowage): context.engine is {engine!r}"
    return {
        "engine_configured": engine,
        "selected": selected and not failures,
        "running": running,
        "plugins_enabled": enabled,
        "plugins_disabled": disabled,
        "active_route": active,
        "entry_point": ep,
        "user_plugin_folders": folders,
        "agent_log": {
            "path": log["path"],
            "exists": log["exists"],
            "error": log["error"],
            "stowage_fallbacks": current,
            "stale_fallbacks": stale,
            "load_failures": len(log.get("load_failures", [])),
        },
        "problems": problems,
        "host_caps_fixed": caps_fixed,
    }
