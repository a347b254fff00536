"""Temporary ``HERMES_HOME`` directories and plugin install routes.

A :class:`HermesHome` is a throw-away directory tree::

    <root>/hermes/      HERMES_HOME (config.yaml, plugins/, state.db, logs/ ...)
    <root>/home/        HOME of the subprocess (nothing touches the real ~)
    <root>/work/        working directory of the subprocess
    <root>/net.log      refused network attempts (JSON lines), see _pyboot

plus the environment to run the host in it (:meth:`HermesHome.env`).

Plugin install routes:

* **entry point** (default): the project is pip-installed (editable) in the
  venv, so ``plugins.enabled: [stowage]`` is all it takes.
* **user folder**: :meth:`HermesHome.install_user_plugin` symlinks or copies
  a plugin folder to ``$HERMES_HOME/plugins/<name>/``;
  :meth:`HermesHome.install_stowage_user_plugin` builds Stowage's folder
  with the project's own ``plugins/install_user_plugin.py`` (``mode="copy"``
  copies, ``mode="symlink"`` is its ``--link`` symlink to the checkout).  Both sources produce the key
  ``stowage`` and the entry point, discovered *later*, would win the key
  collision in ``hermes_cli.plugins`` (and ``plugins.disabled`` would
  disable both), so the user-folder routes also hide the ``hermes-stowage``
  distribution from the subprocess: ``plugins/stowage_dev/_pyboot/sitecustomize.py``
  filters it out of ``importlib.metadata`` and removes its editable import
  finder, so neither its entry point nor ``import stowage`` is visible.
"""

from __future__ import annotations

import copy
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
HARNESS_DIR = Path(__file__).resolve().parent
PYBOOT_DIR = HARNESS_DIR / "_pyboot"
STOWAGE_DIST = "hermes-stowage"
STOWAGE_PLUGIN_DIR = REPO_ROOT  # the repository root is the plugin folder
HARNESS_PROBE_PLUGIN_DIR = HARNESS_DIR / "plugins" / "harness_probe"
HARNESS_PROBE_EVENTS = "harness_probe_events.jsonl"


def _user_plugin_installer():  # noqa: ANN202 - a module loaded from its file
    """``plugins/install_user_plugin.py`` (a script, not a package module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "stowage_install_user_plugin", REPO_ROOT / "plugins" / "install_user_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Environment variables passed through from the test process (plus STOWAGE_*);
# everything else (API keys, proxies, HERMES_* of the developer) is dropped.
_PASSTHROUGH_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT", "TERM")

# Settings that keep the host offline, quiet and fast (all overridable).
OFFLINE_DEFAULTS: dict[str, Any] = {
    "memory": {"memory_enabled": False, "user_profile_enabled": False},
    "curator": {"enabled": False},
    "model_catalog": {"enabled": False},
    "lsp": {"enabled": False},
    "security": {"tirith_enabled": False, "allow_lazy_installs": False},
    "agent": {"environment_probe": False},
    "checkpoints": {"enabled": False},
    "sessions": {"auto_prune": False},
    "updates": {"non_interactive_local_changes": "stash"},
    # The CLI's automatic session titles are extra non-streaming (aux) calls
    # (system + user messages); off so aux recordings only hold what a test
    # provoked.  Re-enable with extra config if a test wants them.
    "auxiliary": {"title_generation": {"enabled": False}},
    # The skill-creation nudge forks a background review agent after 10 tool
    # iterations; its concurrent main-model requests would race the script.
    "skills": {"creation_nudge_interval": 0},
}


def deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Recursively merge *extra* into a copy of *base* (extra wins)."""
    merged = copy.deepcopy(dict(base))
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def lifted_caps() -> dict[str, Any]:
    """The config keys ``stowage setup`` sets (Hermes's caps on tool outputs), as nested YAML."""
    from stowage.command.host_caps import CAPS

    nested: dict[str, Any] = {}
    for cap in CAPS:
        *parents, leaf = cap.key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = cap.lifted
    return nested


@dataclass
class HermesHome:
    """A temp Hermes home wired to the fake model server at ``base_url``."""

    root: Path
    base_url: str
    context_length: int = 128_000
    engine: str = "compressor"
    plugins_enabled: list[str] = field(default_factory=list)
    extra_config: dict[str, Any] = field(default_factory=dict)
    model: str = "fake-model"
    hidden_distributions: set[str] = field(default_factory=set)
    offline: bool = True
    # True: a home that selects Stowage has the settings `stowage setup` makes (Hermes's caps on tool outputs lifted),
    # as after the documented install; the tests whose doctor must pass ask for it (off by default, so the other
    # sessions, the demo's included, run with the host's own caps as before)
    whole_outputs: bool = False

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        for directory in (self.path, self.home_dir, self.work_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self.write_config()
        self._seed_update_check_cache()

    def _seed_update_check_cache(self) -> None:
        """The CLI banner checks PyPI for updates unless a fresh cache says
        it is up to date (hermes_cli/banner.py ``check_for_updates``)."""
        import json
        import time
        from importlib.metadata import PackageNotFoundError, version

        try:
            ver = version("hermes-agent")
        except PackageNotFoundError:  # pragma: no cover - host not installed
            return
        cache = {"ts": time.time() + 86_400, "behind": 0, "rev": None, "ver": ver}
        (self.path / ".update_check").write_text(json.dumps(cache), encoding="utf-8")

    # -- layout -----------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The ``HERMES_HOME`` directory."""
        return self.root / "hermes"

    @property
    def home_dir(self) -> Path:
        return self.root / "home"

    @property
    def work_dir(self) -> Path:
        return self.root / "work"

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def plugins_dir(self) -> Path:
        return self.path / "plugins"

    @property
    def net_log(self) -> Path:
        return self.root / "net.log"

    # -- config -----------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """The config this home writes (base + offline defaults + extras)."""
        base: dict[str, Any] = {
            "model": {
                "provider": "custom",
                "default": self.model,
                "base_url": self.base_url,
                "api_key": "sk-fake",
                "context_length": self.context_length,
            },
            "context": {"engine": self.engine},
            "plugins": {"enabled": list(self.plugins_enabled)},
            "tools": {"tool_search": {"enabled": "off"}},
        }
        if self.engine == "stowage" and self.whole_outputs:
            base = deep_merge(base, lifted_caps())
        return deep_merge(deep_merge(base, OFFLINE_DEFAULTS), self.extra_config)

    def write_config(self) -> Path:
        self.config_path.write_text(yaml.safe_dump(self.config(), sort_keys=False), encoding="utf-8")
        return self.config_path

    def update_config(self, extra: Mapping[str, Any]) -> Path:
        """Deep-merge *extra* into the extra config and rewrite ``config.yaml``."""
        self.extra_config = deep_merge(self.extra_config, extra)
        return self.write_config()

    def set_engine(self, engine: str) -> None:
        self.engine = engine
        self.write_config()

    def enable_plugins(self, *keys: str) -> None:
        for key in keys:
            if key not in self.plugins_enabled:
                self.plugins_enabled.append(key)
        self.write_config()

    def read_config(self) -> dict[str, Any]:
        """Read ``config.yaml`` back (e.g. after ``hermes plugins enable``)."""
        return yaml.safe_load(self.config_path.read_text(encoding="utf-8")) or {}

    # -- plugins ----------------------------------------------------------------
    def install_user_plugin(
        self,
        source: Path,
        *,
        name: str | None = None,
        mode: Literal["symlink", "copy"] = "symlink",
        extra_dirs: Iterable[Path] = (),
    ) -> Path:
        """Install the plugin folder *source* as ``plugins/<name>/``.

        ``mode="copy"`` copies it (ignoring caches) and also copies each of
        *extra_dirs* inside it; ``mode="symlink"`` links the folder itself.
        """
        source = Path(source).resolve()
        target = self.plugins_dir / (name or source.name)
        self.plugins_dir.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        if mode == "symlink":
            if extra_dirs:
                raise ValueError("extra_dirs needs mode='copy'")
            target.symlink_to(source, target_is_directory=True)
        elif mode == "copy":
            shutil.copytree(source, target, ignore=ignore)
            for extra in extra_dirs:
                extra = Path(extra).resolve()
                shutil.copytree(extra, target / extra.name, ignore=ignore)
        else:
            raise ValueError(f"unknown install mode {mode!r}")
        return target

    def install_stowage_user_plugin(self, mode: Literal["symlink", "copy"] = "symlink") -> Path:
        """Install the repo's Stowage plugin as a user plugin, as a user would
        (``plugins/install_user_plugin.py``), and hide the pip distribution
        (entry point and editable finder) from subprocesses.

        ``copy`` makes a self-contained copy, ``symlink`` links the folder to
        the checkout (``--link``).
        """
        target = _user_plugin_installer().install(self.path, link=(mode == "symlink"))
        self.hide_distribution(STOWAGE_DIST)
        return target

    def install_harness_probe(self, *, enable: bool = True) -> Path:
        """Install the harness' own throw-away test plugin (``harness_probe``)."""
        target = self.install_user_plugin(HARNESS_PROBE_PLUGIN_DIR, mode="symlink")
        if enable:
            self.enable_plugins("harness_probe")
        return target

    def probe_events(self) -> list[dict[str, Any]]:
        """Hook calls recorded by the ``harness_probe`` plugin."""
        import json

        path = self.path / HARNESS_PROBE_EVENTS
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def hide_distribution(self, dist_name: str) -> None:
        """Hide an installed distribution from the subprocesses of this home."""
        self.hidden_distributions.add(dist_name)

    # -- environment ------------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for a host subprocess running in this home."""
        env = {k: os.environ[k] for k in _PASSTHROUGH_ENV if k in os.environ}
        # Project settings such as STOWAGE_NPM_DIR (set by run.py).
        env.update(
            {
                k: v
                for k, v in os.environ.items()
                if k.startswith("STOWAGE_") and not k.startswith("STOWAGE_HARNESS_") and k != "STOWAGE_E2E_KEEP"
            }
        )
        env.update(
            {
                "HERMES_HOME": str(self.path),
                "HOME": str(self.home_dir),
                "PYTHONPATH": str(PYBOOT_DIR),
                "PYTHONUNBUFFERED": "1",
                "PYTHONIOENCODING": "utf-8",
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
                "TERM": "dumb",
                "COLUMNS": "200",
                "NO_COLOR": "1",
            }
        )
        if self.offline:
            env["STOWAGE_HARNESS_OFFLINE"] = "1"
            env["STOWAGE_HARNESS_NET_LOG"] = str(self.net_log)
        if self.hidden_distributions:
            env["STOWAGE_HARNESS_HIDE_DISTS"] = ",".join(sorted(self.hidden_distributions))
        env.update(extra or {})
        return env

    def network_attempts(self) -> list[dict[str, Any]]:
        """Network connections the offline guard refused (JSON lines)."""
        import json

        if not self.net_log.exists():
            return []
        return [json.loads(line) for line in self.net_log.read_text().splitlines() if line.strip()]
