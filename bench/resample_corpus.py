"""A secrets corpus with every generated secret drawn again, from its scanner's pattern, with another seed.

``bench/corpus_coverage.py`` measures a corpus; a rule written from one
corpus's samples would pass it and miss the format.  This tool keeps each
entry's line (its notation and context) and replaces the secret with a new
one that the scanner's own pattern generates and reports (the sampler of
``bench/scanner_coverage.py``), so the same measure runs on samples no rule
was written from.  Entries whose pattern cannot be read (detect-secrets'
keyword plugin, multi-part findings) get a value of the same length and
characters as the old one, drawn anew.

    python bench/resample_corpus.py CORPUS.jsonl OUT.jsonl --seed N [--gitleaks TOML] [--trufflehog DIR]
        [--detect-secrets]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scanner_coverage as tool


def _similar(value: str, marks: str, rng: random.Random) -> str:
    """The value with each generated character (``g`` in ``marks``) drawn again from its class; literals stay."""
    drawn = {c for c, m in zip(value, marks, strict=False) if m == "g"}
    hexes = [h for h in ("0123456789abcdef", "0123456789ABCDEF") if drawn <= set(h)]
    classes = (hexes[0],) if hexes else (string.ascii_lowercase, string.ascii_uppercase, string.digits)
    others = "".join(sorted({c for c, m in zip(value, marks, strict=False) if m == "g" and not c.isalnum()})) or "_"
    out = []
    for char, mark in zip(value, marks.ljust(len(value), "g"), strict=False):
        out.append(rng.choice(next((c for c in classes if char in c), others)) if mark == "g" else char)
    return "".join(out)


def resample(entries: list[dict], rules: dict[str, tool.ScannerRule], seed: int) -> tuple[list[dict], dict[str, int]]:
    counts = {"from_pattern": 0, "similar": 0, "kept": 0}
    fresh: dict[tuple[str, int], str] = {}  # (rule, sample) -> its new secret: both lines of a sample share it
    literal: dict[tuple[str, int], str] = {}  # and its marks: L where the pattern's own text is copied
    out = []
    for entry in entries:
        old = entry["check"]
        if old != entry["secret"] or old not in entry["text"]:
            counts["kept"] += 1
            out.append(entry)
            continue
        key = (entry["rule"], entry["sample"])
        if key not in fresh:
            rng = random.Random(f"{seed}:{entry['rule']}:{entry['sample']}")
            rule = rules.get(_rule_key(entry))
            new = None
            if rule is not None:
                for _try in range(40):
                    text = tool.sample(rule.pattern.pattern, rng, rule.secret_group, rule.pattern.flags & ~re.UNICODE)
                    found = tool._finding(rule, text)
                    if found and len(found) >= 8 and tool._finding(rule, entry["text"].replace(old, found)) == found:
                        new = found
                        break
            fresh[key] = new or _similar(old, entry.get("mask") or "g" * len(old), rng)
            literal[key] = _literal_marks(new, rule.pattern.pattern) if new and rule else ""
            counts["from_pattern" if new else "similar"] += 1
        new = fresh[key]
        marks = literal[key] or entry.get("mask", "")
        if len(marks) != len(new):
            marks = _carried_marks(old, entry.get("mask", ""), new)
        out.append({**entry, "text": entry["text"].replace(old, new), "secret": new, "check": new, "mask": marks})
    return out, counts


def trufflehog_rules(folder: Path) -> dict[str, tool.ScannerRule]:
    """The detectors' rules by ``<detector path>/<pattern>`` (versioned detectors share a folder name: v2)."""
    rules = {r.rule_id: r for r in tool.load_trufflehog(folder)[0]}
    for detector in sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob("*/*.go"))):
        rules.update({f"{detector.name}/{r.rule_id}": r for r in tool.load_trufflehog(detector)[0]})
    return rules


def _literal_marks(secret: str, pattern: str) -> str:
    """``L`` on each run of 4+ characters of the secret the pattern spells out (``hooks.slack.com/``), else ``g``."""
    source = pattern.replace("\\", "")
    marks = ["g"] * len(secret)
    at = 0
    while at < len(secret):
        end = at
        while end < len(secret) and secret[at : end + 1] in source:
            end += 1
        if end - at >= 4:
            marks[at:end] = ["L"] * (end - at)
            at = end
        else:
            at += 1
    return "".join(marks)


def _carried_marks(old: str, marks: str, new: str) -> str:
    """Marks for a new secret of another length: the old literal head and tail (``L``) where the new one keeps them."""
    head = len(marks) - len(marks.lstrip("L"))
    tail = len(marks) - len(marks.rstrip("L"))
    head = next((k for k in range(head) if k >= len(new) or new[k] != old[k]), head)  # the part they share
    tail = tail if tail and new.endswith(old[len(old) - tail :]) and head + tail <= len(new) else 0
    return "L" * head + "g" * (len(new) - head - tail) + "L" * tail


def _rule_key(entry: dict) -> str:
    rule = entry["rule"]
    if rule.startswith("trufflehog/"):
        return rule.split("/", 1)[1] + "/" + str(entry.get("pattern"))
    if rule.startswith("detect-secrets/"):
        return rule
    return rule  # a gitleaks rule id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--gitleaks", type=Path)
    parser.add_argument("--trufflehog", type=Path)
    args = parser.parse_args(argv)
    rules: dict[str, tool.ScannerRule] = {}
    if args.gitleaks:
        rules.update({r.rule_id: r for r in tool.load_gitleaks(args.gitleaks)[0]})
    if args.trufflehog:
        rules.update(trufflehog_rules(args.trufflehog))
    entries = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    out, counts = resample(entries, rules, args.seed)
    args.out.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in out), encoding="utf-8")
    print(f"{len(out)} entries; samples drawn again: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
