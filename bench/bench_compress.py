"""Time compress() of Stowage and of Hermes's built-in ContextCompressor.

Same transcripts (about 25k, 100k and 400k tokens), same run, summary model
answered instantly by a stub on both sides, so only the engines' own CPU
work is measured.  Each figure is the median of several runs (interleaved
across engines), each on a fresh engine and a fresh copy of the transcript
(cold per-message caches), with the garbage collector paused while timed.

``--summary-ms N`` makes the stub take N ms on both sides, as a real model
call does, and reports each engine's time beyond those calls (Stowage stores
the compaction window while the model works, which an instant stub cannot show).

    python bench/bench_compress.py [--repeat N] [--sizes 25000,100000,400000] [--summary-ms N] [--json]
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import statistics
import tempfile
import time
from typing import Any, Callable

os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="stowage-bench-home-"))

from stowage_dev.transcripts import transcript_of_tokens

SUMMARY_DELAY = {"ms": 0.0, "calls": 0}  # the stub model's latency, and its calls in the timed run
STUB_SUMMARY = "## Goal\nKeep fixing the tests.\n\n## Progress\n### Done\n- ran the suite\n\n## Next Steps\n- continue"


def _model_call() -> None:
    SUMMARY_DELAY["calls"] += 1
    if SUMMARY_DELAY["ms"]:
        time.sleep(SUMMARY_DELAY["ms"] / 1000)


class _StubResponse:
    """Shape of an OpenAI chat completion, enough for both engines."""

    def __init__(self, text: str) -> None:
        message = type("Message", (), {"content": text, "role": "assistant"})()
        self.choices = [type("Choice", (), {"message": message, "finish_reason": "stop"})()]


def builtin_factory() -> Callable[[], Any]:
    import agent.context_compressor as builtin

    def call_llm(*args: Any, **kwargs: Any) -> _StubResponse:
        _model_call()
        return _StubResponse(STUB_SUMMARY)

    builtin.call_llm = call_llm

    def make() -> Any:
        return builtin.ContextCompressor(
            model="bench-model",
            threshold_percent=0.75,
            protect_first_n=3,
            protect_last_n=20,
            summary_target_ratio=0.2,
            quiet_mode=True,
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-bench",
            config_context_length=128_000,
            provider="custom",
        )

    return make


def stowage_factory(store: str = "") -> Callable[[], Any]:
    """Stowage without a store (prune stubs only), or with one:

    * ``cold``: nothing stored yet, so every pruned output and the window are
      written durably during compress() (the worst case);
    * ``warm``: tool outputs were recorded when they arrived, as the spill hook
      does in a session (outside the timed region), so compress() looks them up
      and writes only the window.
    """
    from stowage.context_engine.host_adapter.engine import StowageEngineCore

    def make() -> Any:
        engine = StowageEngineCore(summary_model=lambda prompt, runtime, timeout=None: (_model_call(), STUB_SUMMARY)[1])
        engine.update_model("bench-model", 128_000)
        if store:
            engine.on_session_start("bench-session", hermes_home=tempfile.mkdtemp(prefix="stowage-bench-store-"))
            _ = engine.state.store.store  # open the store outside the timed region
        return engine

    def prepare(engine: Any, messages: list[dict[str, Any]]) -> None:
        if store != "warm":
            return
        from stowage.context_engine.store_session.archive import record_output

        for message in messages:
            if message.get("role") == "tool" and len(message["content"]) >= 200:
                record_output(
                    engine.state.store.store,
                    message["content"],
                    tool_name=message.get("name", ""),
                    arguments="{}",
                    session_id="bench-session",
                )

    make.prepare = prepare  # type: ignore[attr-defined]
    return make


def time_once(make: Callable[[], Any], transcript: list[dict[str, Any]]) -> tuple[float, int]:
    """Milliseconds of one ``compress`` on a fresh engine and transcript copy.

    Process-wide memos are emptied first, so a run never reuses work done by
    an earlier run on the same transcript.  The garbage collector runs before
    and is paused during the timed call, so one engine's garbage is not
    collected on the other's clock.
    """
    clear_process_caches()
    engine = make()
    messages = copy.deepcopy(transcript)
    getattr(make, "prepare", lambda *a: None)(engine, messages)
    gc.collect()
    gc.disable()
    SUMMARY_DELAY["calls"] = 0
    try:
        start = time.perf_counter()
        result = engine.compress(messages, current_tokens=100_000)
        elapsed = (time.perf_counter() - start) * 1000
    finally:
        gc.enable()
    return elapsed - SUMMARY_DELAY["calls"] * SUMMARY_DELAY["ms"], len(result)


def clear_process_caches() -> None:
    from stowage.context_engine.chat.messages import json_object_problem

    json_object_problem.cache_clear()


def time_engines(
    engines: dict[str, Callable[[], Any]], transcript: list[dict[str, Any]], repeat: int
) -> dict[str, tuple[float, int]]:
    """Median per engine; runs are interleaved so machine noise hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in engines}
    sizes: dict[str, int] = {}
    for _ in range(repeat):
        for name, make in engines.items():
            elapsed, sizes[name] = time_once(make, transcript)
            times[name].append(elapsed)
    return {name: (statistics.median(values), sizes[name]) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sizes", default="25000,100000,400000")
    parser.add_argument(
        "--summary-ms",
        type=float,
        default=0.0,
        help="latency of the stub summary model (subtracted from the times shown)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)
    SUMMARY_DELAY["ms"] = args.summary_ms

    from stowage.context_engine.chat.tokens import TokenCounter

    load_start = time.perf_counter()
    backend = TokenCounter().backend  # one-time tokenizer load, reported apart
    load_ms = (time.perf_counter() - load_start) * 1000

    engines = {
        "built-in": builtin_factory(),
        "stowage": stowage_factory(),
        "store-warm": stowage_factory("warm"),
        "store-cold": stowage_factory("cold"),
    }
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        transcript = transcript_of_tokens(size)
        for make in engines.values():  # warm imports and regex caches once
            make().compress(copy.deepcopy(transcript[:40]), current_tokens=100_000)
        row: dict[str, Any] = {
            "target_tokens": size,
            "messages": len(transcript),
            "chars": sum(len(json.dumps(m)) for m in transcript),
        }
        for name, (ms, out) in time_engines(engines, transcript, args.repeat).items():
            row[f"{name}_ms"], row[f"{name}_out"] = ms, out
        for name in ("stowage", "store-warm", "store-cold"):
            row[f"{name}_ratio"] = row[f"{name}_ms"] / row["built-in_ms"]
        rows.append(row)

    if args.json:
        print(json.dumps({"tokenizer": backend, "tokenizer_load_ms": load_ms, "rows": rows}, indent=2))
        return 0
    if args.summary_ms:
        print(f"stub summary model takes {args.summary_ms:g} ms per call; times shown are beyond those calls")
    print(
        f"compress() median of {args.repeat} runs; tokenizer {backend} loaded once in {load_ms:.0f} ms (not included)"
    )
    print("stowage: compaction without a store | store-warm: with the store, outputs recorded at tool time as in a")
    print("session | store-cold: with the store, every pruned output written durably inside compress()")
    print(
        f"{'tokens':>8} {'msgs':>5} {'built-in':>9} {'stowage':>13} {'store-warm':>13} {'store-cold':>14}"
        f"   messages out built-in/stowage"
    )
    for row in rows:
        cells = " ".join(
            f"{row[f'{n}_ms']:>7.1f} x{row[f'{n}_ratio']:<4.2f}" for n in ("stowage", "store-warm", "store-cold")
        )
        print(
            f"{row['target_tokens']:>8} {row['messages']:>5} {row['built-in_ms']:>7.1f}ms {cells}"
            f"   {row['built-in_out']}/{row['stowage_out']}"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        size_growth = last["chars"] / first["chars"]
        print(
            f"growth {first['target_tokens']}->{last['target_tokens']} tokens (x{size_growth:.1f} input): "
            f"built-in x{last['built-in_ms'] / first['built-in_ms']:.1f}, "
            f"stowage x{last['stowage_ms'] / first['stowage_ms']:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
