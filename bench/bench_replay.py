"""Wall time and peak memory of ``stowage replay`` on the shared trajectories.

Runs the real command (``python -m stowage.command replay --from <data>``, HTML
report written to a temporary folder) in a child process, once on the first
``--small`` trajectories and once on all of them, and prints the wall time and
the peak resident memory of the largest process (``getrusage(RUSAGE_CHILDREN).ru_maxrss``:
the command or one of its ``--jobs`` workers).  The replay streams one session at a time, so the
peak should barely grow from the small run to the full one; the goal is the
204 trajectories through both engines in under a minute on a 2-core machine.

    python bench/bench_replay.py [--data FILE] [--small N] [--chain K] [--jobs N]

Not a timed test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "agent-trajectories.jsonl.gz"
# a fresh parent per run, so each run's peak is its own (ru_maxrss of waited-for descendants)
MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)"
)


def run_once(data: Path, limit: int | None, chain: int, jobs: int, out_dir: Path) -> dict[str, float | int]:
    """One replay in a fresh process tree: wall time, peak RSS of its largest process, the report's totals."""
    html = out_dir / f"replay-{limit or 'all'}.html"
    cmd = [
        sys.executable,
        "-m",
        "stowage.command",
        "replay",
        "--from",
        str(data),
        "--chain",
        str(chain),
        "--html",
        str(html),
        "--json",
        "--quiet",
        "--jobs",
        str(jobs),
        "--hermes-home",
        str(out_dir / "no-home"),
    ]
    if limit:
        cmd += ["--limit", str(limit)]
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    peak_kib = int(proc.stderr.strip().splitlines()[-1]) if proc.stderr.strip() else 0
    if proc.returncode != 0:
        raise SystemExit(
            f"bench_replay: the replay failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}"
        )
    report = json.loads(proc.stdout)
    return {
        "sessions": report["sessions_replayed"],
        "wall_s": wall,
        "peak_rss_mib": peak_kib / 1024,
        "html_kib": html.stat().st_size / 1024,
        "billed_builtin": report["totals"]["built-in"]["billed_tokens"],
        "billed_stowage": report["totals"]["stowage"]["billed_tokens"],
        "requests": report["totals"]["built-in"]["requests"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--small", type=int, default=20, help="trajectories in the small run (memory baseline)")
    parser.add_argument("--chain", type=int, default=1, help="trajectories per replayed session")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the replay (--jobs)")
    args = parser.parse_args(argv)
    data = Path(args.data)
    if not data.is_file():
        print(f"bench_replay: skipped: the trajectory data is not at {data}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        small = run_once(data, args.small, args.chain, args.jobs, Path(tmp))
        full = run_once(data, None, args.chain, args.jobs, Path(tmp))
    print(
        f"bench_replay: `stowage replay --from {data.name}` through the built-in compressor and Stowage "
        f"(chain {args.chain}, --jobs {args.jobs}), HTML report written; peak RSS = the largest single process"
    )
    for name, result in (("small", small), ("all", full)):
        print(
            f"  {name:5} {result['sessions']:>4} sessions {result['requests']:>6,} requests: "
            f"wall {result['wall_s']:6.1f} s, peak RSS {result['peak_rss_mib']:6.0f} MiB, "
            f"report {result['html_kib']:,.0f} KiB; billed stowage/built-in "
            f"{result['billed_stowage'] / max(1, result['billed_builtin']):.2f}x"
        )
    print(
        f"  target: all sessions in under 60 s -> {'met' if full['wall_s'] < 60 else 'NOT met'} on this machine "
        f"(its load at the time counts)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
