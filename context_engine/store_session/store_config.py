"""Map the validated ``stowage.store`` keys onto the blob store's own terms.

The config speaks in hours, days and megabytes (what users think in); the
store speaks in seconds and bytes.  The engine and the ``stowage`` command
line must agree on both the folder and the limits, or ``stowage gc`` would
evict under different rules than the running agent, so both call these two
functions.  No Hermes imports: the caller passes the Hermes home in.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...blobstore import RetentionPolicy
from ..config.settings import Settings

HOUR = 3600.0
DAY = 86400.0
MB = 1 << 20  # binary megabytes: the default 1024 MB cap is exactly the store's 1 GiB default
STORE_DIRNAME = "stowage"


def retention_policy(settings: Settings) -> RetentionPolicy:
    """The :class:`RetentionPolicy` for ``settings.store`` (TTL, size cap, grace, tombstones).

    ``session_idle_seconds`` has no config key and keeps the store's default.
    """
    store = settings.store
    return RetentionPolicy(
        ttl_seconds=float(store.ttl_hours) * HOUR,
        max_total_bytes=int(float(store.max_store_mb) * MB),
        fetch_grace_seconds=float(store.fetch_grace_hours) * HOUR,
        tombstone_ttl_seconds=float(store.tombstone_ttl_days) * DAY,
    )


def store_root(settings: Settings, hermes_home: Path) -> Path:
    """The store folder: ``store.path`` if set, else ``<hermes_home>/stowage``.

    ``~`` and ``$VARS`` are expanded; a relative path is taken relative to the
    Hermes home, not the working directory, so the agent (started from any
    folder) and the command line find the same store.
    """
    raw = str(settings.store.path or "").strip()
    home = Path(hermes_home).expanduser()
    if not raw:
        return home / STORE_DIRNAME
    path = Path(os.path.expandvars(os.path.expanduser(raw)))
    return path if path.is_absolute() else home / path
