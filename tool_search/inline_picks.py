"""A request's inline blocks, each decided once and kept per user message: later requests re-send the same bytes.

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
from typing import Any, Callable, Sequence

from .catalog import Catalog
from .inline import own_text, render_block, user_keys

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


def blocks_for(
    messages: Sequence[dict[str, Any]], catalog: Catalog, store: PickStore, rank: Callable[[str], list[str]]
) -> tuple[dict[int, str], tuple[str, ...]]:
    """The blocks of a request's user messages (index -> text), and the tools the newest one names.

    Each user message's block is decided once, at the first request of that
    message (then the newest), and kept: later requests, a restarted process
    and a resumed session re-send the same bytes.  An earlier message with
    no kept block gets none (ranking it now would change the request's
    settled part).  A tool whose schema an earlier block of this request
    shows in full is named only (docs/tool-search.md has the arithmetic).
    """
    keys = user_keys(messages)
    blocks: dict[int, str] = {}
    shown: list[str] = []
    newest: tuple[str, ...] = ()
    for n, (index, key) in enumerate(keys):
        pick = store.get(key)
        if pick is None and n == len(keys) - 1:
            pick = new_pick(catalog, rank(text) if (text := own_text(messages[index])).strip() else [], shown)
            store.put(key, pick)
        if pick is None:
            continue
        if pick.block:
            blocks[index] = pick.block
        shown.extend(name for name in pick.full if name not in shown)
        if n == len(keys) - 1:
            newest = pick.names
    return blocks, newest


def new_pick(catalog: Catalog, ranked: Sequence[str], shown: Sequence[str]) -> Pick:
    """A block for ``ranked`` (best first): new schemas in full, those ``shown`` earlier by name."""
    names = tuple(ranked)
    full = tuple(n for n in names if n not in shown)
    schemas = []
    for name in full:
        entry = catalog.get(name)
        if entry is not None:
            schemas.append({"name": name, "description": entry.description, "parameters": entry.parameters})
    return Pick(names, full, render_block(schemas, [n for n in names if n in shown]) if names else "")


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
