"""Labelled tool-retrieval data for the tool-search benchmark: BFCL from PyPI.

The Berkeley Function Calling Leaderboard ships its data inside the
``bfcl-eval`` wheel on PyPI: each question comes with the function docs the
model was offered and, separately, the ground-truth call(s). We read the JSON
straight out of the wheel (``pip download --no-deps``) instead of installing
it, because installing pins numpy 1.26 and a long list of SDKs that would
disturb the project's environment. Nothing here is committed; the wheel is
cached outside the repository.

Obtain it by hand with:

    python -m pip download --no-deps --only-binary=:all: bfcl-eval==2026.3.23 \
        -d ~/.cache/stowage-bench
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

BFCL_PACKAGE = "bfcl-eval"
BFCL_VERSION = "2026.3.23"
CACHE_DIR = Path(os.environ.get("STOWAGE_BENCH_CACHE", Path.home() / ".cache" / "stowage-bench"))

# Single-turn categories whose ground truth names exactly one distinct function.
QUERY_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "live_simple",
    "live_multiple",
    "parallel",
    "live_parallel",
)
# Every single-turn category's function docs go into the catalog (distractors too).
CATALOG_CATEGORIES = QUERY_CATEGORIES + (
    "parallel_multiple",
    "live_parallel_multiple",
    "irrelevance",
    "live_irrelevance",
    "live_relevance",
)


@dataclass(frozen=True)
class Query:
    qid: str
    text: str
    answer: str  # ground-truth function name
    # the answer's schema as offered with this question
    offered: dict[str, Any] | None = field(default=None, compare=False)


def offered_catalogs(ds: "Dataset") -> list[tuple[list[dict[str, Any]], list[Query]]]:
    """The catalog each question was written against, grouped: (functions, its questions).

    BFCL offers a tool under one name with different descriptions in different
    questions (about a quarter of the names; half of the questions). The union
    catalog keeps the first schema seen per name, so half the questions would be
    judged against a description they were not written for. Here each question's
    answer carries the schema that question offered, everything else as in the
    union. Groups share a catalog so it is built once per distinct variant.
    """
    slot = {f["name"]: i for i, f in enumerate(ds.functions)}
    groups: dict[str, list[Query]] = {}
    for q in ds.queries:
        key = (
            ""
            if q.offered is None or q.offered == ds.functions[slot[q.answer]]
            else json.dumps(q.offered, sort_keys=True)
        )
        groups.setdefault(key, []).append(q)
    out: list[tuple[list[dict[str, Any]], list[Query]]] = []
    for key, qs in groups.items():
        functions = ds.functions
        if key:
            functions = list(ds.functions)
            functions[slot[qs[0].answer]] = json.loads(key)
        out.append((functions, qs))
    return out


@dataclass(frozen=True)
class Dataset:
    functions: list[dict[str, Any]]  # bare {"name","description","parameters"}, unique names
    queries: list[Query]
    source: str


class _WheelReader:
    """Reads ``bfcl_eval/data/...`` files from a wheel or an installed package."""

    def __init__(self, wheel: Path | None, data_dir: Path | None) -> None:
        self._zip = zipfile.ZipFile(wheel) if wheel else None
        self._dir = data_dir
        self.source = str(wheel or data_dir)

    def lines(self, rel: str) -> Iterator[dict[str, Any]]:
        if self._zip is not None:
            try:
                raw = self._zip.read(f"bfcl_eval/data/{rel}").decode("utf-8")
            except KeyError:
                return
        else:
            path = self._dir / rel  # type: ignore[operator]
            if not path.exists():
                return
            raw = path.read_text(encoding="utf-8")
        for line in raw.splitlines():
            if line.strip():
                yield json.loads(line)


def _locate() -> _WheelReader:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.origin:
        data_dir = Path(spec.origin).parent / "data"
        if data_dir.is_dir():
            return _WheelReader(None, data_dir)
    pattern = str(CACHE_DIR / f"bfcl_eval-{BFCL_VERSION}-*.whl")
    found = glob.glob(pattern)
    if not found:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            f"{BFCL_PACKAGE}=={BFCL_VERSION}",
            "-d",
            str(CACHE_DIR),
        ]
        print("fetching dataset:", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        found = glob.glob(pattern)
    if not found:
        raise RuntimeError(f"could not obtain {BFCL_PACKAGE}=={BFCL_VERSION}")
    return _WheelReader(Path(found[0]), None)


def _user_text(question: Any) -> str:
    """The user turns of the first conversation turn, joined."""
    turns = question[0] if question and isinstance(question[0], list) else question
    return "\n".join(m.get("content", "") for m in turns if m.get("role") == "user").strip()


def _bare(fn: dict[str, Any]) -> dict[str, Any]:
    return {"name": fn["name"], "description": fn.get("description", ""), "parameters": fn.get("parameters", {})}


def load_bfcl() -> Dataset:
    """Union of all single-turn function docs as one catalog, and labelled queries."""
    reader = _locate()
    functions: dict[str, dict[str, Any]] = {}
    questions: dict[str, tuple[str, str]] = {}
    offered: dict[tuple[str, str], dict[str, Any]] = {}
    for cat in CATALOG_CATEGORIES:
        for row in reader.lines(f"BFCL_v4_{cat}.json"):
            for fn in row.get("function", []):
                functions.setdefault(fn["name"], _bare(fn))
                if cat in QUERY_CATEGORIES:
                    offered[(row["id"], fn["name"])] = _bare(fn)
            if cat in QUERY_CATEGORIES:
                questions[row["id"]] = (cat, _user_text(row.get("question")))
    queries: list[Query] = []
    for cat in QUERY_CATEGORIES:
        for row in reader.lines(f"possible_answer/BFCL_v4_{cat}.json"):
            names = {next(iter(call)) for call in row.get("ground_truth", [])}
            _, text = questions.get(row["id"], ("", ""))
            if len(names) == 1 and text:
                answer = names.pop()
                if answer in functions:
                    queries.append(Query(row["id"], text, answer, offered.get((row["id"], answer))))
    return Dataset(functions=list(functions.values()), queries=queries, source=reader.source)


def scaled_catalog(functions: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """``size`` schemas from the dataset, with renamed copies once unique ones run out."""
    out: list[dict[str, Any]] = []
    copy = 0
    while len(out) < size:
        for fn in functions:
            if len(out) >= size:
                break
            if copy == 0:
                out.append(fn)
            else:
                out.append({**fn, "name": f"{fn['name']}_v{copy + 1}"})
        copy += 1
    return out
