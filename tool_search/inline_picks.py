"""The rendered inline blocks, kept per user message so every later request re-sends the same bytes.

A block is decided once, at the first request of its user message, and
kept under the message's key (``inline.user_keys``): in memory for the
process, and in one small JSON file in the store folder, so a restarted
process or a resumed session with the same history renders the same bytes
instead of ranking again (the catalog, the endpoint or the ranking may have
changed since).  Shared by every session of one store folder in a process:
a review agent or subagent replaying the parent's history finds the
parent's blocks.  Writes go to a temporary file, then ``os.replace``.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

FILE_NAME = "tool-inline-picks.json"
FORMAT = 1
MAX_PICKS = 1000  # oldest dropped beyond this (a block is one to a few kB; the file is rewritten per new pick)


@dataclass(frozen=True)
class Pick:
    names: tuple[str, ...]  # every tool the block names (shown in full or by name)
    full: tuple[str, ...]  # the tools whose schema it shows in full
    block: str  # the exact text sent (empty: nothing was worth showing)


class PickStore:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._picks: OrderedDict[str, Pick] | None = None

    def get(self, key: str) -> Pick | None:
        with self._lock:
            return self._loaded().get(key)

    def put(self, key: str, pick: Pick) -> None:
        with self._lock:
            picks = self._loaded()
            picks[key] = pick
            while len(picks) > MAX_PICKS:
                picks.popitem(last=False)
            self._save(picks)

    def _loaded(self) -> OrderedDict[str, Pick]:
        if self._picks is None:
            self._picks = _read(self.path) if self.path is not None else OrderedDict()
        return self._picks

    def _save(self, picks: OrderedDict[str, Pick]) -> None:
        if self.path is None:
            return
        payload = {
            "format": FORMAT,
            "picks": {k: {"names": list(p.names), "full": list(p.full), "block": p.block} for k, p in picks.items()},
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:  # the picks still serve this process from memory
            logger.warning("stowage: cannot write inline tool picks to %s: %s", self.path, exc)


def _read(path: Path) -> OrderedDict[str, Pick]:
    out: OrderedDict[str, Pick] = OrderedDict()
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return out
    except (OSError, ValueError) as exc:
        logger.warning("stowage: ignoring unreadable inline tool picks %s: %s", path, exc)
        return out
    raw = payload.get("picks") if isinstance(payload, dict) and payload.get("format") == FORMAT else None
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(value.get("block"), str):
            names = tuple(str(n) for n in value.get("names") or ())
            out[str(key)] = Pick(names, tuple(str(n) for n in value.get("full") or ()), value["block"])
    return out


_stores: dict[str, PickStore] = {}
_stores_lock = threading.Lock()


def store_for(folder: Path | None) -> PickStore:
    """The process's one store for ``folder`` (None: memory only, one per process)."""
    key = str(folder / FILE_NAME) if folder is not None else ""
    with _stores_lock:
        found = _stores.get(key)
        if found is None:
            found = _stores[key] = PickStore(folder / FILE_NAME if folder is not None else None)
        return found


def reset_stores() -> None:
    """Forget the process's stores (tests: a "restarted process" reads the file again)."""
    with _stores_lock:
        _stores.clear()
