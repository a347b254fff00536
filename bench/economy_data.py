"""Which chained sessions bench_economy replays: all trajectories, or one half of them.

The halves split the trajectories by id (a stable hash, never by position),
so a default chosen on half A can be checked on half B, which the choice
never saw.  Every engine, in every process, replays the same sessions.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

from stowage.command.replay.offline import chain_sessions, read_transcripts
from stowage.command.replay.offline.hidden import common_tokens

HALVES = ("A", "B")
SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
# name -> (file beside the checkout, trajectories per chained session)
DATASETS = {
    "agent": ("agent-trajectories.jsonl.gz", 7),  # 204 Gemini 3 Pro trajectories: the halves defaults are chosen on
    "swe404": ("swe-trajectories-404.jsonl.gz", 5),  # 404: DeepSeek (146) and Gemini (258, the 204 among them)
}


def dataset_path(name: str) -> Path:
    """Where a named dataset lives: ``../shared/data/`` relative to the checkout (CI puts it there)."""
    return SHARED_DATA / DATASETS[name][0]


def dataset_chain(name: str) -> int:
    """Trajectories per chained session for a named dataset (the 404 set was measured five to a session)."""
    return DATASETS[name][1]


def half_of(trajectory_id: str) -> str:
    """ "A" or "B", from the trajectory id alone."""
    return HALVES[hashlib.sha256(trajectory_id.encode("utf-8")).digest()[0] & 1]


def transcripts_of(data: str, limit: int | None, half: str = "") -> Iterator[Any]:
    """The first ``limit`` trajectories (of one half when ``half`` is A or B), in file order."""
    transcripts = read_transcripts(data)
    if half:
        transcripts = (t for t in transcripts if half_of(t.id) == half.upper())
    if limit is not None:
        transcripts = _first(transcripts, limit)
    return transcripts


def sessions_of(data: str, limit: int | None, chain: int, half: str = "") -> Iterator[Any]:
    """The chained sessions of the first ``limit`` trajectories (of one half when ``half`` is A or B)."""
    return chain_sessions(transcripts_of(data, limit, half), chain=chain)


def common_of(data: str, limit: int | None, half: str = "") -> frozenset[str]:
    """The common vocabulary of the replayed trajectories (``hidden.common_tokens``): the same in every process."""
    return common_tokens(t.messages for t in transcripts_of(data, limit, half))


def _first(items: Iterator[Any], count: int) -> Iterator[Any]:
    for number, item in enumerate(items):
        if number >= count:
            return
        yield item
