"""Benchmark of the blob store: puts, verified reads, range reads, scans, grep, excerpts, memory.

Targets: a 10 MB put under 100 ms, range reads under 5 ms whatever the blob
size, a grep over 100 MB under 2 s, and bounded memory for a 1 GB put.  The
"naive" rows read the whole file and split it, which is what a plain spill
file plus ``read_file`` paging amounts to, for scale.  Excerpt rows time the
preview a spill puts in context (logs, a JSON document, a one-line blob).

    python bench/bench_store.py [--quick] [--json]

Everything happens in a temp dir that is removed afterwards.  ``--quick``
skips the 1 GB memory run and uses fewer repetitions.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
try:
    from stowage.blobstore import BlobStore, RetentionPolicy
    from stowage.blobstore.presentation.excerpt import build_excerpt
    from stowage.blobstore.retrieval.grep import grep_lines
    from stowage.blobstore.retrieval.grep_prefilter import PrefilterStats, batch_pattern, prefiltered_lines
    from stowage.blobstore.retrieval.safe_regex import compile_user_pattern
except ImportError:  # running from a checkout without the editable install
    sys.path.insert(0, str(ROOT))
    from blobstore import BlobStore, RetentionPolicy  # type: ignore[no-redef]
    from blobstore.presentation.excerpt import build_excerpt  # type: ignore[no-redef]
    from blobstore.retrieval.grep import grep_lines  # type: ignore[no-redef]
    from blobstore.retrieval.grep_prefilter import PrefilterStats, batch_pattern, prefiltered_lines  # type: ignore[no-redef]
    from blobstore.retrieval.safe_regex import compile_user_pattern  # type: ignore[no-redef]

MB = 1_000_000
MIB = 1 << 20
LINE = "2026-06-01T12:00:00Z worker-{:06d} GET /api/items?page={} status=200 bytes={} caf\u00e9\n"


def make_text(size: int, salt: int) -> bytes:
    """About ``size`` bytes of log-like text (mostly ASCII, a little UTF-8)."""
    block = "".join(LINE.format(i, i % 97, i * 7) for i in range(2000)).encode()
    head = f"salt {salt}\n".encode()
    reps = size // len(block) + 1
    return (head + block * reps)[:size]


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time in milliseconds."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def generated(total: int, piece: int = 256 * 1024) -> Iterator[bytes]:
    block = make_text(piece, 0)
    sent = 0
    while sent < total:
        out = block[: total - sent]
        sent += len(out)
        yield out


def peak_rss_kib() -> int:
    """Peak RSS of this process image.

    ``VmHWM`` restarts at exec; ``ru_maxrss`` does not on Linux (a child started
    from a big parent reports the parent's peak), so prefer the former.
    """
    try:
        for line in Path("/proc", "self", "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def make_json(size: int) -> str:
    """About ``size`` chars of an indented JSON document (an API listing with nested records)."""
    items, doc, text = [], {"count": 0, "next": None, "results": []}, ""
    i = 0
    while len(text) < size:
        batch = [
            {
                "id": i + k,
                "name": f"item-{i + k}",
                "tags": ["alpha", "beta", f"t{(i + k) % 13}"],
                "owner": {"login": f"user{(i + k) % 101}", "site_admin": False},
                "stats": {"views": (i + k) * 37 % 10007, "score": ((i + k) % 97) / 7},
                "description": "caf\u00e9 widget " * ((i + k) % 5 + 1),
            }
            for k in range(500)
        ]
        items += batch
        i += len(batch)
        doc.update(count=len(items), results=items)
        text = json.dumps(doc, indent=2)
    return text


def make_single_line(size: int) -> str:
    """One line of ``size`` chars: minified JSON-ish text with no newline at all."""
    unit = '{"k":"v%d","n":[1,2,3],"s":"caf\u00e9 <div class=x>text</div>"},'
    parts, total, i = [], 0, 0
    while total < size:
        piece = unit % i
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)[:size]


def grep_cases(store: BlobStore, sha: str, size: int, repeat: int) -> list[dict]:
    """Full-scan greps (no early stop) and the tool's default budget on a frequent pattern."""
    rows = []
    cases = [
        ("literal, no match (full scan)", "status=500", {"literal": True}, {}),
        ("regex, no match (full scan)", r"status=5\d\d bytes=\d+", {}, {}),
        ("regex, ignore case, no match (full scan)", r"ERROR|Traceback|panic:", {"ignore_case": True}, {}),
        (
            "literal, rare match (full scan)",
            "worker-001999 GET /api/items?page=59",
            {"literal": True},
            {"max_matches": 10_000},
        ),
        ("regex, frequent match, default caps (50 matches)", r"page=\d+ status=200", {}, {}),
    ]
    for name, pattern, compile_opts, grep_opts in cases:
        compiled = compile_user_pattern(pattern, **compile_opts)
        prefilter = batch_pattern(pattern, **compile_opts)
        for path in ("stowage_fetch (batch prefilter)", "per-line only"):
            result = None
            stats = PrefilterStats()

            # the loop's values bound as defaults (bugbear B023): the closure is timed inside this iteration
            def scan(
                path: str = path,
                prefilter: Any = prefilter,
                grep_opts: dict[str, Any] = grep_opts,
                compiled: Any = compiled,
            ) -> None:
                nonlocal result, stats
                stats = PrefilterStats()
                if path.startswith("per-line"):
                    lines = store.iter_numbered_lines(sha)
                else:
                    lines = prefiltered_lines(
                        store.iter_line_batches(sha), prefilter, context=grep_opts.get("context", 2), stats=stats
                    )
                result = grep_lines(lines, compiled, **{"time_budget_s": 600.0, **grep_opts})

            ms = timed(scan, repeat if path.startswith("stowage") else 1)
            assert result is not None
            rows.append(
                {
                    "case": f"{name} [{path}]",
                    "pattern": pattern,
                    "ms": ms,
                    "mb_per_s": size / MB / (ms / 1000),
                    "lines_scanned": stats.lines or result.scanned_lines,
                    "matches": result.match_count,
                    "truncated": result.truncated,
                }
            )
    return rows


def excerpt_cases(repeat: int) -> list[dict]:
    """``build_excerpt`` with the spill defaults on the payload shapes spills see."""
    payloads = [
        ("1 MB log", make_text(1 * MB, 1).decode()),
        ("10 MB log", make_text(10 * MB, 2).decode()),
        ("1 MB JSON document", make_json(1 * MB)),
        ("1 MB single-line blob", make_single_line(1 * MB)),
    ]
    rows = []
    for name, text in payloads:
        ex = build_excerpt(text)
        rows.append(
            {
                "case": name,
                "chars": len(text),
                "ms": timed(lambda text=text: build_excerpt(text), repeat),
                "kind": ex.kind,
                "layout": ex.layout,
                "excerpt_chars": len(ex.text),
            }
        )
    return rows


def child_memory_run(root: str, total: int) -> dict:
    """Put ``total`` generated bytes in this (fresh) process under tracemalloc."""
    store = BlobStore(root, RetentionPolicy(max_total_bytes=None))
    store.put(b"warm up")
    rss_before = peak_rss_kib()
    tracemalloc.start()
    t0 = time.perf_counter()
    res = store.put(generated(total))
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "bytes": res.size,
        "seconds": seconds,
        "rss_before_kib": rss_before,
        "rss_after_kib": peak_rss_kib(),
        "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "tracemalloc_peak_bytes": peak,
    }


def run(quick: bool) -> dict:
    repeat = 3 if quick else 7
    range_repeat = 30 if quick else 200
    tmp = Path(tempfile.mkdtemp(prefix="stowage-bench-store-"))
    out: dict = {"puts": [], "ranges": [], "scan": {}, "grep": [], "excerpt": [], "memory": None}
    try:
        store = BlobStore(tmp / "store", RetentionPolicy(max_total_bytes=None))
        big = None
        for size in (1 * MB, 10 * MB, 100 * MB):
            salt = iter(range(10**6))
            payloads = [make_text(size, next(salt)) for _ in range(1 if size == 100 * MB else 2)]
            k = iter(range(10**6))
            put_ms = timed(
                lambda payloads=payloads, k=k: store.put(payloads[next(k) % len(payloads)] + b"%d" % time.time_ns()),
                repeat if size < 100 * MB else max(2, repeat // 2),
            )
            res = store.put(payloads[0])
            read_ms = timed(lambda res=res: store.read_bytes(res.sha256), repeat)
            out["puts"].append({"size": size, "put_ms": put_ms, "read_full_ms": read_ms})
            if size == 100 * MB:
                big, big_data = res, payloads[0]
        assert big is not None
        path = store.blob_path(big.sha256)
        cases = [
            (
                "read_lines: 50 lines ending at the last line",
                lambda: store.read_lines(big.sha256, big.line_count - 49, 50),
            ),
            (
                "read_chars: 2000 chars, 5000 before the end",
                lambda: store.read_chars(big.sha256, big.char_count - 5000, 2000),
            ),
            ("read_bytes: last 4 KiB", lambda: store.read_bytes(big.sha256, big.size - 4096, 4096)),
            ("read_lines: 50 lines in the middle", lambda: store.read_lines(big.sha256, big.line_count // 2, 50)),
        ]
        for name, fn in cases:
            warm = timed(fn, range_repeat)

            def cold(fn: Callable[[], object] = fn) -> None:
                store._cache.clear()  # sidecar parse included
                fn()

            out["ranges"].append({"case": name, "warm_ms": warm, "cold_ms": timed(cold, range_repeat)})
        out["ranges"].append(
            {
                "case": "naive: read whole file, split, take 50 last lines",
                "warm_ms": timed(lambda: path.read_bytes().split(b"\n")[-51:], repeat),
                "cold_ms": float("nan"),
            }
        )
        t0 = time.perf_counter()
        lines = sum(1 for _ in store.iter_lines(big.sha256))
        scan_s = time.perf_counter() - t0
        assert lines == big.line_count
        out["scan"] = {"bytes": big.size, "lines": lines, "seconds": scan_s, "mb_per_s": big.size / MB / scan_s}
        del big_data
        out["grep"] = grep_cases(store, big.sha256, big.size, min(repeat, 3))  # each scan takes seconds
        out["excerpt"] = excerpt_cases(repeat)
        if not quick:
            proc = subprocess.run(
                [sys.executable, __file__, "--child-memory", str(tmp / "mem"), str(1 << 30)],
                capture_output=True,
                text=True,
                check=True,
            )
            out["memory"] = json.loads(proc.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def print_table(res: dict) -> None:
    print("\nput / full verified read")
    print(f"{'size':>10} {'put ms':>10} {'read ms':>10} {'put MB/s':>10}")
    for row in res["puts"]:
        print(
            f"{row['size'] / MB:>8.0f}MB {row['put_ms']:>10.1f} {row['read_full_ms']:>10.1f} "
            f"{row['size'] / MB / (row['put_ms'] / 1000):>10.0f}"
        )
    print("\nrange reads on a 100 MB blob (median)")
    print(f"{'case':<52} {'warm ms':>9} {'cold ms':>9}")
    for row in res["ranges"]:
        print(f"{row['case']:<52} {row['warm_ms']:>9.3f} {row['cold_ms']:>9.3f}")
    scan = res["scan"]
    print(
        f"\nfull iter_lines scan: {scan['lines']} lines, {scan['seconds'] * 1000:.0f} ms, "
        f"{scan['mb_per_s']:.0f} MB/s (verified chunk by chunk and as a whole)"
    )
    print("\ngrep_lines over the 100 MB blob (iter_numbered_lines, median; target < 2000 ms)")
    print(f"{'case':<86} {'ms':>8} {'MB/s':>6} {'lines':>10} {'matches':>8} {'cut':>4}")
    for row in res["grep"]:
        print(
            f"{row['case']:<86} {row['ms']:>8.0f} {row['mb_per_s']:>6.0f} {row['lines_scanned']:>10} "
            f"{row['matches']:>8} {'yes' if row['truncated'] else 'no':>4}"
        )
    print("\nbuild_excerpt (budget 2000 chars, median)")
    print(f"{'payload':<24} {'chars':>10} {'ms':>8} {'kind':>8} {'layout':>12}")
    for row in res["excerpt"]:
        print(f"{row['case']:<24} {row['chars']:>10} {row['ms']:>8.1f} {row['kind']:>8} {row['layout']:>12}")
    mem = res["memory"]
    if mem:
        print(
            f"\n1 GiB streamed put (under tracemalloc): {mem['seconds']:.1f} s; "
            f"tracemalloc peak {mem['tracemalloc_peak_bytes'] / MIB:.2f} MiB; peak RSS (VmHWM) "
            f"{mem['rss_before_kib'] / 1024:.1f} MiB before -> {mem['rss_after_kib'] / 1024:.1f} MiB after"
        )
    else:
        print("\n1 GiB memory run skipped (--quick)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1 GB run, fewer repeats")
    parser.add_argument("--json", action="store_true", help="print raw results as JSON")
    parser.add_argument("--child-memory", nargs=2, metavar=("ROOT", "BYTES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_memory:
        print(json.dumps(child_memory_run(args.child_memory[0], int(args.child_memory[1]))))
        return
    res = run(args.quick)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print_table(res)


if __name__ == "__main__":
    main()
