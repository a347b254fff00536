"""Why each needed-while-hidden output was hidden, and which signal of the history would have kept it.

Replays the economy bench's chained sessions through the 0.19.0 built-in and
Stowage (``bench_economy``'s workers, same data options), then classifies
every output the answering assistant message needed while the request hid it
(``replay/offline/hidden.py``):

* **how it was hidden**: ``stubbed`` (the message was sent with other
  content: a view stub, or a built-in's pruned placeholder), ``collapsed``
  (folded into a collapse line of settled steps) or ``compacted`` (gone with
  the messages a compaction summarized);
* **the signals the history held before the use** (calls only, never the
  disk: what a pure view could see): the file the output read is edited
  later (``edited``: by the using message or before it), named by a later
  call (``named``), the output's distinctive tokens were used by an earlier
  assistant message (``quoted``), it is still the newest read of its path
  (``newest read``), the newest run of a command run more than once
  (``newest rerun``), or a later output superseded it (a newer read of the
  same path, a newer run of the same command: ``superseded``).

The first signal in that order is the case's *primary* signal (``none``
when no signal holds).  Prints one table per engine and, with ``--json``,
every case.  Not a timed test.

    python bench/economy_working_set.py [--dataset agent|swe404] [--half A|B] [--limit N] [--chain K]
                                        [--set stowage.key=value ...] [--jobs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_economy
from bench_economy import BUILTIN, STOWAGE
from economy_data import common_of, dataset_chain, dataset_path, sessions_of
from economy_signals import SessionIndex, table

from stowage.command.replay.hermes_engines import cleanup_home, hermes_tool_schemas, parse_setting, prepare_hermes_home
from stowage.command.replay.offline.clock import Timing, parse_latency


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=("agent", "swe404"), default="agent")
    parser.add_argument("--data", default="", help="a JSONL(.gz) of transcripts instead of the dataset's file")
    parser.add_argument("--half", choices=("A", "B"), default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--chain", type=int, default=None)
    parser.add_argument("--window", type=int, default=128_000)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--no-builtin", action="store_true", help="Stowage only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--cases", default="", help="classify again the cases of an earlier --json run of the same data (no replay)"
    )
    args = parser.parse_args(argv)
    data = Path(args.data) if args.data else dataset_path(args.dataset)
    if not data.is_file():
        print(f"economy_working_set: skipped: the trajectory data is not at {data} (see ../shared/data/README.md)")
        return 0
    chain = args.chain or dataset_chain(args.dataset)
    overrides = dict(parse_setting(item) for item in args.settings)
    configs: list[tuple[str, dict[str, Any] | None]] = [(STOWAGE, overrides)]
    if not args.no_builtin:
        configs.insert(0, (BUILTIN, None))
    if args.cases:
        return _classify_again(Path(args.cases), data, args, chain)
    base_home = prepare_hermes_home()
    try:
        tools, _ = hermes_tool_schemas()
        common = common_of(str(data), args.limit, args.half or "")
        bench_economy._init_worker(
            str(base_home), configs, args.window, tools, common, Timing(parse_latency("10"), 2.0)
        )
        cases: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in configs}
        outputs: Counter[str] = Counter()
        for session in sessions_of(str(data), args.limit, chain, args.half or ""):
            result = bench_economy._replay_session(session)
            index = SessionIndex(session.messages, session.starts, common)
            for label, row in result["rows"].items():
                outputs[label] += int(row.get("outputs", 0))
                cases[label].extend({**index.classify(c), "session": session.id} for c in row.get("needed_cases", ()))
            print(f"  {session.id}: " + ", ".join(f"{k} {len(v)}" for k, v in cases.items()), file=sys.stderr)
    finally:
        cleanup_home(base_home)
    if args.json:
        print(json.dumps({"data": str(data), "half": args.half, "outputs": outputs, "cases": cases}, indent=2))
        return 0
    for label, found in cases.items():
        share = len(found) / max(1, outputs[label])
        print(f"\n{label}: {len(found)} needed while hidden of {outputs[label]} outputs ({share:.2%})")
        print("\n".join(table(found)))
    return 0


def _classify_again(path: Path, data: Path, args: argparse.Namespace, chain: int) -> int:
    """The tables of an earlier ``--json`` run, its cases classified by this tree's signals."""
    earlier = json.loads(path.read_text(encoding="utf-8"))
    common = common_of(str(data), args.limit, args.half or "")
    indexes = {
        session.id: SessionIndex(session.messages, session.starts, common)
        for session in sessions_of(str(data), args.limit, chain, args.half or "")
    }
    for label, found in earlier["cases"].items():
        cases = [{**indexes[c["session"]].classify(c), "session": c["session"]} for c in found]
        outputs = int(earlier["outputs"].get(label, 0))
        print(f"\n{label}: {len(cases)} needed while hidden of {outputs} outputs ({len(cases) / max(1, outputs):.2%})")
        print("\n".join(table(cases)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
