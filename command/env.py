"""Where the ``stowage`` command line looks: Hermes home, config, store, limits.

The CLI runs outside Hermes, so it cannot ask the host; it resolves the same
things the engine does from the same inputs (``$HERMES_HOME/config.yaml``
validated by ``load_settings``, then ``store_root``/``retention_policy``),
which is what keeps ``stowage gc`` in step with the running agent.  Only the
standard library, PyYAML (a project dependency) and the project are used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..blobstore import BlobStore, RetentionPolicy, StoreError
from ..context_engine.chat.tokenizer_loader import load_encoding
from ..context_engine.chat.tokens import TokenCounter
from ..context_engine.config.settings import Settings, StowageConfigError, default_settings, load_settings
from ..context_engine.store_session.store_config import retention_policy, store_root

INDEX_NAME = "index.sqlite3"


@dataclass
class Outcome:
    """What a subcommand produced: ``data`` for ``--json``, ``text`` for people."""

    data: dict[str, Any]
    text: str
    code: int = 0
    stderr: str = ""  # human-only warnings (never mixed into stdout)


class CliError(Exception):
    """A failure to report as ``stowage: error: ...`` with exit status ``code``."""

    def __init__(self, message: str, code: int = 1, kind: str = "error") -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind


class NoStoreError(CliError):
    """The store folder has no index: Stowage never stored anything there."""

    def __init__(self, root: Path, source: str) -> None:
        super().__init__(
            f"no Stowage store at {root} ({source}): nothing has been stored yet. Stowage creates it the "
            "first time it spills or prunes a tool output; use --store or --hermes-home to look elsewhere",
            code=1,
            kind="no_store",
        )


# what an operator command (the CLI, /stowage) reports as its one-line message rather than a traceback
OPERATOR_ERRORS: tuple[type[Exception], ...] = (CliError, StoreError)


def default_hermes_home() -> Path:
    """``$HERMES_HOME`` or ``~/.hermes``, as Hermes itself resolves it without a profile."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def read_config(path: Path) -> dict[str, Any]:
    """The raw ``config.yaml`` ({} when missing); unreadable YAML becomes a config error."""
    if not path.is_file():
        return {}
    try:
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise StowageConfigError([f"cannot read the config file: {exc}"], str(path)) from None
    return data if isinstance(data, dict) else {}


def _raw_store_path(raw: Mapping[str, Any]) -> str:
    """``stowage.store.path`` as written, so a broken block elsewhere still finds the store."""
    block = raw.get("stowage")
    if not isinstance(block, Mapping):
        block = {}
    store = block.get("store")
    if not isinstance(store, Mapping):
        store = {}
    path = store.get("path")
    return path if isinstance(path, str) else ""


@dataclass
class Env:
    """Everything a subcommand needs to know about where it runs."""

    hermes_home: Path
    config_path: Path
    settings: Settings | None
    config_error: StowageConfigError | None
    store_root: Path
    store_source: str
    _store: BlobStore | None = field(default=None, repr=False)

    @classmethod
    def resolve(cls, hermes_home: str | os.PathLike | None, store: str | os.PathLike | None) -> "Env":
        home = Path(hermes_home).expanduser() if hermes_home else default_hermes_home()
        home = home.absolute()
        config_path = home / "config.yaml"
        raw: dict[str, Any] = {}
        settings: Settings | None = None
        error: StowageConfigError | None = None
        try:
            raw = read_config(config_path)
            settings = load_settings(raw, source=str(config_path))
        except StowageConfigError as exc:
            error = exc
        if store:
            root, source = Path(store).expanduser().absolute(), "--store"
        else:
            located = (
                settings
                if settings is not None
                else load_settings({"stowage": {"store": {"path": _raw_store_path(raw)}}})
            )
            root = store_root(located, home)
            source = "stowage.store.path" if located.store.path else "default: $HERMES_HOME/stowage"
        return cls(home, config_path, settings, error, root, source)

    @property
    def effective_settings(self) -> Settings:
        """The validated settings, or the defaults when the block is invalid (reported separately)."""
        return self.settings or default_settings()

    @property
    def policy(self) -> RetentionPolicy:
        return retention_policy(self.effective_settings)

    def store_exists(self) -> bool:
        """An index, or blob files without one (a lost index the doctor can rebuild)."""
        return (self.store_root / INDEX_NAME).is_file() or (self.store_root / "blobs").is_dir()

    def open_store(self) -> BlobStore:
        """The store, opened with the configured limits; never creates a missing one."""
        if self._store is None:
            if not self.store_exists():
                raise NoStoreError(self.store_root, self.store_source)
            self._store = BlobStore(
                self.store_root,
                self.policy,
                cross_session_reads=bool(self.effective_settings.store.cross_session_reads),
            )
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def require_valid_config(self, action: str) -> None:
        """Refuse actions whose meaning depends on the configured limits."""
        if self.config_error is not None:
            raise CliError(
                f"refusing to {action} with an invalid configuration:\n{self.config_error}", code=1, kind="config_error"
            )

    def config_info(self) -> dict[str, Any]:
        error = self.config_error
        return {
            "path": str(self.config_path),
            "exists": self.config_path.is_file(),
            "valid": error is None,
            "problems": list(error.problems) if error else [],
            "error": str(error) if error else None,
        }

    def tokenizer_info(self) -> dict[str, Any]:
        """The backend Stowage would count tokens with, and how its encoding was found."""
        tok = self.effective_settings.tokenizer
        counter = TokenCounter(tok.encoding, allow_download=tok.allow_download)
        loaded = counter.loaded
        return {
            "encoding": tok.encoding,
            "allow_download": tok.allow_download,
            "backend": counter.backend,
            "source": loaded.source,
            "detail": loaded.detail,
        }

    def tokenizer_offline(self) -> dict[str, Any]:
        """Whether the encoding loads with downloads forbidden (air-gapped hosts, CI)."""
        name = self.effective_settings.tokenizer.encoding
        loaded = load_encoding(name, allow_download=False)
        return {"encoding": name, "ok": loaded.encoding is not None, "source": loaded.source, "detail": loaded.detail}
