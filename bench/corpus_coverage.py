"""Measure a secrets corpus (JSON lines) planted on the four routes of a real compaction.

``bench/scanner_coverage.py`` masks samples it generates from a scanner's
rules; this tool reads a corpus already built (one entry per line: ``rule``,
``text``, ``check`` and ``mask``, as in ``gitleaks/corpus.jsonl`` and
``scanners2/corpus.jsonl`` of the shared data), plants every text on each
route by which text reaches the summary model (a user message, a tool
output, a tool error line, JSON call arguments), runs one forced
``compress()`` of a real engine per route with a recording summary model,
and reports per route the formats (rules) with a leaked sample.

A sample leaks when 8 consecutive generated characters of its ``check``
(the ``g`` marks of ``mask``; literal prefixes are ``L``) that its own text
holds nowhere else reach the prompt.  With ``--ordinary FILE`` (one line
per line), each ordinary line is planted too and must reach the prompt
as written.

    python bench/corpus_coverage.py CORPUS.jsonl [--ordinary ordinary.txt] [--routes user,arguments]
        [--direct] [--json] [--list]

``--direct`` also masks each text with ``mask()`` alone (no compaction).
The exit status is 0 whatever it finds: a measure, not a gate.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WINDOW = 8


def pieces(entry: dict) -> list[str]:
    """The 8-character windows of the entry's generated characters that its text holds once only."""
    check, marks, text = entry["check"], entry.get("mask") or "g" * len(entry["check"]), entry["text"]
    out: list[str] = []
    run = ""
    for char, mark in zip(check, marks + "g" * (len(check) - len(marks)), strict=False):
        if mark == "g" and char.isprintable():
            run += char
            continue
        out += _windows(run)
        run = ""
    out += _windows(run)
    rest = text.replace(check, "\x00", 1)
    return [p for p in dict.fromkeys(out) if p not in rest and re.search(r"[A-Za-z0-9]", p)]


def _windows(run: str) -> list[str]:
    if len(run) < WINDOW:
        return []
    return [run[i : i + WINDOW] for i in range(len(run) - WINDOW + 1)]


def leaked_in(entry: dict, found: list[str], prompt: str) -> bool:
    return entry["check"] in prompt or any(p in prompt for p in found)


def route_prompts(texts: list[str], route: str, batch: int) -> list[str]:
    """One prompt text per batch of planted texts (a compaction each)."""
    from tests.reliability.planting import summary_prompts

    prompts = []
    for start in range(0, len(texts), batch):
        prompts.append(summary_prompts(["\n" + t for t in texts[start : start + batch]], route))
    return prompts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--ordinary", type=Path)
    parser.add_argument("--routes", default="user,tool_output,tool_error_line,arguments")
    parser.add_argument("--batch", type=int, default=400, help="planted texts per compaction")
    parser.add_argument("--direct", action="store_true", help="also mask each text alone with mask()")
    parser.add_argument("--list", action="store_true", help="name every leaking format")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    entries = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = [pieces(e) for e in entries]
    formats = sorted({e["rule"] for e in entries})
    measurable = [i for i, f in enumerate(found) if f]
    result: dict[str, dict] = {}
    routes = [r for r in args.routes.split(",") if r]
    if args.direct:
        routes = ["direct", *routes]
    for route in routes:
        start = time.perf_counter()
        leaking: dict[str, int] = defaultdict(int)
        if route == "direct":
            from stowage.context_engine.redaction.masking import mask

            for i in measurable:
                if leaked_in(entries[i], found[i], mask(entries[i]["text"])):
                    leaking[entries[i]["rule"]] += 1
        else:
            texts = [entries[i]["text"] for i in measurable]
            prompts = route_prompts(texts, route, args.batch)
            for n, i in enumerate(measurable):
                if leaked_in(entries[i], found[i], prompts[n // args.batch]):
                    leaking[entries[i]["rule"]] += 1
        result[route] = {
            "formats": len(formats),
            "leaking": len(leaking),
            "rate": round(len(leaking) / len(formats), 4),
            "leaked_samples": sum(leaking.values()),
            "seconds": round(time.perf_counter() - start, 1),
            "rules": sorted(leaking),
        }
    union = sorted({r for v in result.values() for r in v["rules"]})
    ordinary: dict[str, int] = {}
    if args.ordinary:
        from stowage.context_engine.redaction.masking import mask

        lines = [line for line in args.ordinary.read_text(encoding="utf-8").splitlines() if line.strip()]
        ordinary["lines"] = len(lines)
        ordinary["altered_by_mask"] = sum(1 for line in lines if mask(line) != line)
        prompt = "\n".join(route_prompts(lines, "user", args.batch))
        ordinary["altered_in_prompt"] = sum(1 for line in lines if line not in prompt)
    if args.json:
        print(json.dumps({"routes": result, "any_route": union, "ordinary": ordinary}, indent=1))
        return 0
    print(f"{args.corpus}: {len(entries)} samples, {len(formats)} formats, {len(measurable)} measurable samples")
    for route, row in result.items():
        print(
            f"  {route:16} {row['leaking']:4} formats leak ({row['rate']:.1%}), {row['leaked_samples']} samples"
            f"  [{row['seconds']} s]"
        )
    print(f"  any route        {len(union):4} formats leak ({len(union) / len(formats):.1%})")
    if args.list:
        for rule in union:
            print("    " + rule + "  " + ",".join(r for r, row in result.items() if rule in row["rules"]))
    if ordinary:
        print(f"  ordinary: {ordinary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
