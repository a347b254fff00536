"""Time compress() of Stowage and of Hermes's built-in ContextCompressor.

Same transcripts (about 25k, 100k and 400k tokens), same run, summary model
answered instantly by a stub on both sides, so only the engines' own CPU
work is measured.  Each figure is the median of several runs, each on a
fresh engine and a fresh copy of the transcript (cold per-message caches).

    python bench/bench_compress.py [--repeat N] [--sizes 25000,100000,400000] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="stowage-bench-home-"))

from support.transcripts import transcript_of_tokens  # noqa: E402

STUB_SUMMARY = "## Goal\nKeep fixing the tests.\n\n## Progress\n### Done\n- ran the suite\n\n## Next Steps\n- continue"


class _StubResponse:
    """Shape of an OpenAI chat completion, enough for both engines."""

    def __init__(self, text: str) -> None:
        message = type("Message", (), {"content": text, "role": "assistant"})()
        self.choices = [type("Choice", (), {"message": message, "finish_reason": "stop"})()]


def builtin_factory() -> Callable[[], Any]:
    import agent.context_compressor as builtin

    builtin.call_llm = lambda *args, **kwargs: _StubResponse(STUB_SUMMARY)

    def make() -> Any:
        return builtin.ContextCompressor(
            model="bench-model", threshold_percent=0.75, protect_first_n=3, protect_last_n=20,
            summary_target_ratio=0.2, quiet_mode=True, base_url="http://127.0.0.1:9/v1", api_key="sk-bench",
            config_context_length=128_000, provider="custom")
    return make


def stowage_factory(store_dir: str | None = None) -> Callable[[], Any]:
    from stowage.context_engine.engine import StowageEngineCore

    def make() -> Any:
        engine = StowageEngineCore(summary_model=lambda prompt, runtime: STUB_SUMMARY)
        engine.update_model("bench-model", 128_000)
        return engine
    return make


def time_compress(make: Callable[[], Any], transcript: list[dict[str, Any]], repeat: int) -> tuple[float, int]:
    """Median milliseconds of ``compress`` and the message count it returned."""
    times = []
    out_len = 0
    for _ in range(repeat):
        engine = make()
        messages = copy.deepcopy(transcript)
        start = time.perf_counter()
        result = engine.compress(messages, current_tokens=100_000)
        times.append((time.perf_counter() - start) * 1000)
        out_len = len(result)
    return statistics.median(times), out_len


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="25000,100000,400000")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)

    from stowage.context_engine.tokens import TokenCounter
    load_start = time.perf_counter()
    backend = TokenCounter().backend  # one-time tokenizer load, reported apart
    load_ms = (time.perf_counter() - load_start) * 1000

    engines = {"built-in": builtin_factory(), "stowage": stowage_factory()}
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        transcript = transcript_of_tokens(size)
        for make in engines.values():  # warm imports and regex caches once
            make().compress(copy.deepcopy(transcript[:40]), current_tokens=100_000)
        row: dict[str, Any] = {"target_tokens": size, "messages": len(transcript),
                               "chars": sum(len(json.dumps(m)) for m in transcript)}
        for name, make in engines.items():
            row[f"{name}_ms"], row[f"{name}_out"] = time_compress(make, transcript, args.repeat)
        row["ratio"] = row["stowage_ms"] / row["built-in_ms"]
        rows.append(row)

    if args.json:
        print(json.dumps({"tokenizer": backend, "tokenizer_load_ms": load_ms, "rows": rows}, indent=2))
        return 0
    print(f"compress() median of {args.repeat} runs; tokenizer {backend} loaded once in {load_ms:.0f} ms (not included)")
    print(f"{'tokens':>8} {'msgs':>6} {'built-in ms':>12} {'stowage ms':>11} {'ratio':>6}  {'out built-in/stowage':>20}")
    for row in rows:
        print(f"{row['target_tokens']:>8} {row['messages']:>6} {row['built-in_ms']:>12.1f} {row['stowage_ms']:>11.1f} "
              f"{row['ratio']:>6.2f}  {row['built-in_out']:>9}/{row['stowage_out']:<9}")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        size_growth = last["chars"] / first["chars"]
        print(f"growth {first['target_tokens']}->{last['target_tokens']} tokens (x{size_growth:.1f} input): "
              f"built-in x{last['built-in_ms'] / first['built-in_ms']:.1f}, "
              f"stowage x{last['stowage_ms'] / first['stowage_ms']:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
