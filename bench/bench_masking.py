"""CPU cost of masking a whole transcript: every message text through the egress gate's masking.

The same transcript generator as ``bench_compress.py`` (about 25k, 100k and
400k tokens), each message's text and call arguments masked once with
:func:`mask` (one text at a time, as the stored parts are) and once with
:func:`redact_many` (all texts in one batch, as a summary prompt is).  Each
figure is the median of ``--repeat`` runs with the garbage collector paused.
To compare two versions of the rules, run it once per checkout (the
``stowage`` package on ``PYTHONPATH`` decides which rules run).

    python bench/bench_masking.py [--repeat 5] [--sizes 25000,100000,400000] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from typing import Any

from stowage.context_engine.redaction.masking import mask, unescaped_masked
from stowage.context_engine.redaction.redact import redact_many
from stowage_dev.transcripts import transcript_of_tokens


def texts_of(messages: list[dict[str, Any]]) -> list[str]:
    """Each message's content and each tool call's arguments: what the gate masks."""
    texts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and content:
            texts.append(content)
        elif isinstance(content, list):
            texts += [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
        for call in message.get("tool_calls") or []:
            arguments = call.get("function", {}).get("arguments")
            if isinstance(arguments, str) and arguments:
                texts.append(arguments)
    return texts


def _timed(work: Any) -> float:
    gc.disable()
    try:
        start = time.process_time()
        work()
        return time.process_time() - start
    finally:
        gc.enable()


def measure(tokens: int, repeat: int) -> dict[str, Any]:
    texts = texts_of(transcript_of_tokens(tokens))
    each = [_timed(lambda: [mask(t) for t in texts]) for _ in range(repeat)]
    batch = [_timed(lambda: redact_many([unescaped_masked(t) for t in texts])) for _ in range(repeat)]
    return {
        "tokens": tokens,
        "texts": len(texts),
        "chars": sum(map(len, texts)),
        "mask_each_ms": round(statistics.median(each) * 1000, 1),
        "redact_many_ms": round(statistics.median(batch) * 1000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="25000,100000,400000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(int(size), args.repeat) for size in args.sizes.split(",") if size]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        print(
            f"{row['tokens']:>7} tokens ({row['texts']} texts, {row['chars']:,} chars): mask() each"
            f" {row['mask_each_ms']} ms, redact_many {row['redact_many_ms']} ms (CPU, median of {args.repeat})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
