"""Measure Stowage's secret masking against the rules of public secret scanners.

Our own corpus (``tests/reliability/secret_formats.py``) is written by us, so
it can only hold the formats we already thought of.  This tool takes a
scanner's rule file instead, generates synthetic secrets from each rule's
own regex, puts them in the contexts real text holds them in, keeps only
the samples the rule itself would flag, and reports per rule whether
:func:`stowage.context_engine.redaction.masking.mask` (the egress gate's masking)
removes the secret.

Sources (nothing of theirs is shipped here; point the tool at your copies):

* ``--gitleaks PATH``: a gitleaks ``config/gitleaks.toml`` you downloaded.
* ``--trufflehog DIR``: a trufflehog checkout's ``pkg/detectors`` folder
  (the Go sources are read as text, for their key patterns).
* ``--detect-secrets``: the regexes of the installed detect-secrets plugins
  (the ``test`` extra installs it).

    python bench/scanner_coverage.py --gitleaks gitleaks.toml [--trufflehog DIR] [--detect-secrets]
        [--samples 3] [--only twitter,slack] [--verbose] [--json]

It lists each rule with a leaked sample (its contexts and one example) and
the totals per scanner; the exit status is 0 whatever it finds (a measure,
not a gate: the corpus tests are the gate).

The regex sampler (:func:`sample`) walks Python's parse tree of a pattern:
literals, classes (negated too), categories, repeats, alternation, groups
and back-references; anchors and lookarounds emit nothing.  Go's RE2 syntax
is translated first (POSIX classes, ``\\z``, flags in mid-pattern).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # Python 3.11+: the parser is private but stable enough for a bench tool
    import re._constants as sre_c  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

# -- Go (RE2) syntax to Python ---------------------------------------------------------------------

_POSIX = {
    "alnum": "A-Za-z0-9",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "word": "A-Za-z0-9_",
    "space": r" \t\r\n\f\v",
    "punct": r"!-/:-@\[-`{-~",
}


def go_to_python(pattern: str) -> str:
    """A Go regexp as Python's ``re`` reads it the same way.

    POSIX classes become ranges, ``\\z`` becomes ``\\Z``, and a flag group in
    mid-pattern (``\\b(p8e-(?i)[a-z]{32})``, which Python refuses) becomes a
    scoped group running to the end of the group that holds it.
    """
    pattern = re.sub(r"\[:(\w+):\]", lambda m: _POSIX.get(m.group(1), m.group(0)), pattern)
    pattern = pattern.replace(r"\z", r"\Z")
    out: list[str] = []
    scoped: list[list[str]] = [[]]  # per open group: the flag groups opened inside it, still open
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            step = 3 if pattern.startswith("^]", i + 1) else 2 if pattern.startswith("]", i + 1) else 1
            out.append(pattern[i : i + step])
            i += step
            continue
        flags = re.match(r"\(\?([imsU-]+)\)", pattern[i:])
        if flags and i > 0:
            opened = f"(?{flags.group(1).replace('U', '')}:"
            out.append(opened)
            scoped[-1].append(opened)
            i += flags.end()
            continue
        if c == "(":
            scoped.append([])
        elif c == ")" and len(scoped) > 1:
            out.append(")" * len(scoped.pop()))
        elif c == "|" and scoped[-1]:
            # the flags hold to the group's end, across alternatives: close them here, reopen after the bar
            out.append(")" * len(scoped[-1]) + "|" + "".join(scoped[-1]))
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(scoped[0]))
    return "".join(out)


# -- sampling a regex ------------------------------------------------------------------------------

_PRINTABLE = [chr(c) for c in range(0x20, 0x7F)]
_ALNUM = string.ascii_letters + string.digits


def _class_chars(items: list[tuple[Any, Any]], fold: bool = False) -> list[str]:
    """The characters a class admits, from printable ASCII (a whitespace category gives a space).

    With ``fold`` (case-insensitive), a letter admits its other case too.
    """
    negate = False
    chosen: set[str] = set()
    for op, av in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            chosen.add(chr(av))
        elif op is sre_c.RANGE:
            chosen.update(chr(c) for c in range(av[0], av[1] + 1) if c < 0x7F or c in (av[0], av[1]))
        elif op is sre_c.CATEGORY:
            name = str(av)
            if "NOT" in name:
                base = _category(name.replace("NOT_", ""))
                chosen.update(c for c in _PRINTABLE if c not in base)
            else:
                chosen.update(_category(name))
    if fold:
        chosen |= {c.swapcase() for c in chosen if c.isascii() and c.isalpha()}
    if negate:
        excluded = chosen | {"\n", "\r", "\t"}
        return [c for c in _PRINTABLE if c not in excluded and c not in " \\"] or [" "]
    if not chosen:
        return [" "]
    visible = sorted(c for c in chosen if c not in "\r\n\t\f\v")
    return visible or sorted(chosen)


def _category(name: str) -> set[str]:
    if "DIGIT" in name:
        return set(string.digits)
    if "WORD" in name:
        return set(_ALNUM + "_")
    if "SPACE" in name:
        return {" "}
    if "LINEBREAK" in name:
        return {"\n"}
    return set(_ALNUM)


@dataclass
class _Walk:
    rng: random.Random
    secret_group: int
    spread: int = 12  # how far past its minimum an open repeat inside the secret goes
    groups: dict[int, str] = field(default_factory=dict)
    fold: bool = False  # case-insensitive where the walk is


def sample(pattern: str, rng: random.Random, secret_group: int = 1, flags: int = 0, fold: bool = True) -> str:
    """One string the (Python) ``pattern`` matches, with the secret group's repeats of varied length.

    Outside the secret group repeats take their minimum, alternatives their
    first and classes a space when they can (a context is plain: ``key=``,
    not ``key ||``); inside, repeats take a count up to ``spread`` past the
    minimum, alternatives and characters are drawn at random, and a
    case-insensitive class gives either case when ``fold`` (as a scanner
    reads it; without ``fold``, the class as written).  Callers check the result with
    the pattern itself: a lookaround or an anchor can still refuse it.
    """
    parsed = sre_parse.parse(pattern, flags)
    walk = _Walk(rng, secret_group, fold=fold and bool(parsed.state.flags & re.IGNORECASE))
    return _emit(parsed, walk, inside=secret_group == 0)


def _emit(items: Iterable[tuple[Any, Any]], walk: _Walk, inside: bool) -> str:
    out: list[str] = []
    for op, av in items:
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            out.append(walk.rng.choice([c for c in _ALNUM if ord(c) != av]))
        elif op is sre_c.ANY:  # an unescaped dot is nearly always a host name's ("hooks.slack.com")
            out.append(".")
        elif op is sre_c.IN:
            chars = _class_chars(av, walk.fold and inside)
            out.append(walk.rng.choice(chars) if inside or " " not in chars else " ")
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            low, high, sub = av
            high = low + walk.spread if high == sre_c.MAXREPEAT else high
            count = walk.rng.randint(low, min(high, low + walk.spread)) if inside else low
            if list(sub) == [(sre_c.ANY, None)]:  # ".{20}": any characters, not dots
                out.extend(walk.rng.choice(_ALNUM) for _ in range(count))
                continue
            if not inside and count == 0 and high >= 3 and _holds_any(sub):
                out.append(" = ")  # "keyword(?:.|\n){0,40}?secret": a separator, not the secret glued on
                continue
            out.extend(_emit(sub, walk, inside) for _ in range(count))
        elif op is sre_c.BRANCH:
            out.append(_emit(walk.rng.choice(av[1]) if inside else av[1][0], walk, inside))
        elif op is sre_c.SUBPATTERN:
            group, add, remove, sub = av
            fold = walk.fold
            walk.fold = (fold or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            text = _emit(sub, walk, inside or (group is not None and group == walk.secret_group))
            walk.fold = fold
            if group is not None:
                walk.groups[group] = text
            out.append(text)
        elif op is getattr(sre_c, "ATOMIC_GROUP", None):
            out.append(_emit(av, walk, inside))
        elif op is sre_c.GROUPREF:
            out.append(walk.groups.get(av, ""))
        elif op is sre_c.GROUPREF_EXISTS:
            _group, yes, no = av
            out.append(_emit(no, walk, inside) if no else "")
        # AT (anchors), ASSERT, ASSERT_NOT: nothing to emit
    return "".join(out)


def _holds_any(items: Iterable[tuple[Any, Any]]) -> bool:
    """The parsed pattern holds a ``.`` (in a branch or group too)."""
    for op, av in items:
        if op is sre_c.ANY:
            return True
        if op is sre_c.BRANCH and any(_holds_any(branch) for branch in av[1]):
            return True
        if op is sre_c.SUBPATTERN and _holds_any(av[3]):
            return True
    return False


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (the measure scanners gate generic rules on)."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


# -- rules -----------------------------------------------------------------------------------------


@dataclass
class ScannerRule:
    source: str
    rule_id: str
    pattern: re.Pattern[str]
    secret_group: int
    keywords: list[str]
    min_entropy: float = 0.0
    allow_secret: list[re.Pattern[str]] = field(default_factory=list)
    allow_match: list[re.Pattern[str]] = field(default_factory=list)
    allow_line: list[re.Pattern[str]] = field(default_factory=list)
    stopwords: list[str] = field(default_factory=list)


def load_gitleaks(path: Path) -> tuple[list[ScannerRule], list[str]]:
    """The text rules of a gitleaks config (path-only rules are skipped, and named in the second list)."""
    import tomllib

    config = tomllib.loads(path.read_text(encoding="utf-8"))
    glob = config.get("allowlist", {})
    glob_regexes = [re.compile(go_to_python(r)) for r in glob.get("regexes", [])]
    glob_stop = [w.lower() for w in glob.get("stopwords", [])]
    rules, skipped = [], []
    for raw in config.get("rules", []):
        if "regex" not in raw:
            skipped.append(raw["id"])
            continue
        try:
            pattern = re.compile(go_to_python(raw["regex"]))
        except re.error as error:
            skipped.append(f"{raw['id']} ({error})")
            continue
        rule = ScannerRule(
            "gitleaks",
            raw["id"],
            pattern,
            raw.get("secretGroup", 1 if pattern.groups else 0),
            [k.lower() for k in raw.get("keywords", [])],
            float(raw.get("entropy", 0.0)),
            list(glob_regexes),
            stopwords=list(glob_stop),
        )
        for allow in raw.get("allowlists", []) + ([raw["allowlist"]] if "allowlist" in raw else []):
            if allow.get("condition", "OR").upper() == "AND" or allow.get("paths") or allow.get("commits"):
                continue  # needs a path or a commit: never true for a bare text
            target = {"match": rule.allow_match, "line": rule.allow_line}.get(
                allow.get("regexTarget", ""), rule.allow_secret
            )
            target.extend(re.compile(go_to_python(r)) for r in allow.get("regexes", []))
            rule.stopwords.extend(w.lower() for w in allow.get("stopwords", []))
        rules.append(rule)
    return rules, skipped


# Plugins whose finding is not itself a secret: an address, or the header line of a key whose body
# (the secret, which the PEM rule masks with the header) the plugin does not read.
DETECT_SECRETS_MARKERS = {
    "IPPublicDetector": "a public IP address is not a credential",
    "PrivateKeyDetector": "flags the BEGIN line, not the key body",
}


def load_detect_secrets() -> list[ScannerRule]:
    """The pattern plugins of the installed detect-secrets, one rule per denylist regex."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    rules = []
    for cls in get_mapping_from_secret_type_to_class().values():
        denylist = getattr(cls, "denylist", None)
        if not denylist or "HighEntropy" in cls.__name__ or cls.__name__ in DETECT_SECRETS_MARKERS:
            continue
        for i, regex in enumerate(denylist):
            pattern = regex if isinstance(regex, re.Pattern) else re.compile(regex)
            rid = cls.__name__ + (f"#{i + 1}" if len(denylist) > 1 else "")
            group = 1 if pattern.groups else 0
            if "(?P<" in pattern.pattern or pattern.groupindex:
                group = max(pattern.groupindex.values(), default=group)
            rules.append(
                ScannerRule("detect-secrets", rid, pattern, group, [cls.__name__.replace("Detector", "").lower()])
            )
    return rules


# A detector's key pattern in Go: ``keyPat = regexp.MustCompile(detectors.PrefixRegex([]string{"a"}) + `re`)``.
_GO_PATTERN = re.compile(
    r"(?P<var>\w*(?:key|secret|token|pat|password|pwd)\w*)\s*=\s*regexp\.MustCompile\(\s*"
    r"(?:detectors\.PrefixRegex\(\[\]string\{(?P<words>[^}]*)\}\)\s*\+\s*)?`(?P<regex>[^`]+)`\s*\)",
    re.IGNORECASE,
)
_GO_KEYWORDS = re.compile(r"func \(\w+ \w+\) Keywords\(\) \[\]string \{\s*return \[\]string\{(?P<words>[^}]*)\}")


def load_trufflehog(folder: Path) -> tuple[list[ScannerRule], list[str]]:
    """The secret patterns of trufflehog's detectors (``pkg/detectors/*/*.go``), one rule per key pattern.

    Only patterns named for a secret (``keyPat``, ``secretPat``, ``tokenPat``)
    count: ids, users, hosts and URLs of multi-part credentials are not
    secrets on their own.  A keyword prefix (``PrefixRegex``) becomes the
    keyword, up to 40 characters of anything, then the secret, as trufflehog
    reads it.
    """
    rules, skipped = [], []
    for path in sorted(folder.glob("*/*.go")):
        if path.name.endswith("_test.go"):
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        keywords = _GO_KEYWORDS.search(source)
        words = re.findall(r'"([^"]+)"', keywords.group("words")) if keywords else []
        for found in _GO_PATTERN.finditer(source):
            if re.search(r"(?i)id|user|email|url|host|domain|name|endpoint", found.group("var").replace("Pat", "")):
                continue
            prefix = ""
            if found.group("words") is not None:
                prefix_words = re.findall(r'"([^"]+)"', found.group("words"))
                prefix = "(?i:" + "|".join(prefix_words) + r")(?:.|[\n\r]){0,40}?"
            rule_id = f"{path.parent.name}/{found.group('var')}"
            try:
                pattern = re.compile(prefix + go_to_python(found.group("regex")))
            except re.error as error:
                skipped.append(f"{rule_id} ({error})")
                continue
            group = 1 if pattern.groups else 0
            rules.append(ScannerRule("trufflehog", rule_id, pattern, group, [w.lower() for w in words]))
    return rules, skipped


# -- contexts --------------------------------------------------------------------------------------

# Where a provider's secret shows up in a coding session: {p} is the provider word, {P} its upper case.
CONTEXTS: dict[str, str] = {
    "config-key": '{p}_api_key = "{s}"',
    "env-yaml": "{P}_TOKEN: {s}",
    "shell-export": "export {P}_SECRET={s}",
    "json": '{{"{p}Token": "{s}", "region": "eu-west-1"}}',
    "go": '{p}Secret := "{s}"',
    "yaml-provider": "{p}:\n  key: {s}",
    "provider-named": "{p} = {s}",
    "log-line": "2026-11-27T10:00:01Z DEBUG {p} client sent {s} upstream",
}


def provider_word(rule: ScannerRule) -> str:
    """The provider's name: the rule's keyword when it is a word, else the rule id's first part."""
    for keyword in rule.keywords:
        if re.fullmatch(r"[a-z][a-z0-9]{2,}", keyword):
            return keyword
    word = re.split(r"[-_#]", rule.rule_id)[0].lower()
    return re.sub(r"detector$", "", word) or "service"


def _allowed(rule: ScannerRule, secret: str, match: str, line: str) -> bool:
    """The scanner would not report this finding (an allowlist or stopword hits)."""
    low = secret.lower()
    return (
        any(p.search(secret) for p in rule.allow_secret)
        or any(p.search(match) for p in rule.allow_match)
        or any(p.search(line) for p in rule.allow_line)
        or any(w in low for w in rule.stopwords)
    )


def _finding(rule: ScannerRule, line: str) -> str | None:
    """The secret the rule reports in ``line`` (None when it reports none)."""
    for match in rule.pattern.finditer(line):
        group = rule.secret_group if rule.secret_group <= rule.pattern.groups else 0
        secret = match.group(group) if group else match.group(0)
        if group and not secret:  # a rule with alternatives: the first group that matched
            secret = next((g for g in match.groups() if g), None)
        if not secret or entropy(secret) < rule.min_entropy or _allowed(rule, secret, match.group(0), line):
            continue
        return secret
    return None


@dataclass
class Sample:
    context: str
    line: str
    secret: str


def samples_for(rule: ScannerRule, rng: random.Random, count: int) -> list[Sample]:
    """Up to ``count`` secrets per context, each a finding of the rule in the line built around it."""
    out: list[Sample] = []
    word = provider_word(rule)
    for index in range(count):
        raw = None
        for _try in range(40):  # the first secret as the class is written, the others in either case
            text = sample(rule.pattern.pattern, rng, rule.secret_group, rule.pattern.flags & ~re.UNICODE, index > 0)
            secret = _finding(rule, text)
            if secret:
                raw = (text, secret)
                break
        if raw is None:
            continue
        text, secret = raw
        out.append(Sample("rule-shape", text, secret))
        for name, template in CONTEXTS.items():
            if secret[:1] in "'\"`" and secret[-1:] == secret[:1]:
                template = template.replace('"{s}"', "{s}")  # the rule's secret holds its own quotes
            line = template.format(p=word, P=word.upper().replace("-", "_"), s=secret)
            if _finding(rule, line) == secret:
                out.append(Sample(name, line, secret))
    return out


# -- measuring -------------------------------------------------------------------------------------


def leaked(sample_: Sample, masked: str) -> bool:
    """The secret, or a generated-looking piece of it that its context does not hold, survives masking.

    A piece is 8+ letters and digits holding a digit, or 20+ characters: a rule
    whose finding includes the key's name (``AccountKey=...``) leaves the name,
    which is no leak.
    """
    if sample_.secret in masked:
        return True
    context = sample_.line.replace(sample_.secret, "")
    pieces = [
        p
        for p in re.split(r"[^A-Za-z0-9]+", sample_.secret)
        if len(p) >= 8 and (len(p) >= 20 or any(c.isdigit() for c in p)) and p not in context
    ]
    return any(p in masked for p in pieces)


@dataclass
class RuleResult:
    source: str
    rule_id: str
    samples: int
    leaked: int
    leaked_contexts: list[str]
    example: str = ""


def measure(rules: list[ScannerRule], count: int, seed: int) -> tuple[list[RuleResult], float, int]:
    from stowage.context_engine.redaction.masking import mask

    results = []
    masked_chars = 0
    spent = 0.0
    for rule in rules:
        rng = random.Random(f"{seed}:{rule.source}:{rule.rule_id}")
        found = samples_for(rule, rng, count)
        bad: list[Sample] = []
        for item in found:
            start = time.perf_counter()
            masked = mask(item.line)
            spent += time.perf_counter() - start
            masked_chars += len(item.line)
            if leaked(item, masked):
                bad.append(item)
        results.append(
            RuleResult(
                rule.source,
                rule.rule_id,
                len(found),
                len(bad),
                sorted({b.context for b in bad}),
                bad[0].line[:160] if bad else "",
            )
        )
    return results, spent, masked_chars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gitleaks", type=Path, help="a gitleaks config/gitleaks.toml")
    parser.add_argument("--detect-secrets", action="store_true", help="the installed detect-secrets plugins")
    parser.add_argument("--trufflehog", type=Path, help="a trufflehog checkout's pkg/detectors folder")
    parser.add_argument("--only", help="measure only the rules whose id holds this text (e.g. provider names)")
    parser.add_argument("--samples", type=int, default=3, help="secrets generated per rule (each in every context)")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="one line per rule, covered ones too")
    args = parser.parse_args(argv)
    rules: list[ScannerRule] = []
    skipped: list[str] = []
    if args.gitleaks:
        if not args.gitleaks.is_file():
            parser.error(f"no gitleaks config at {args.gitleaks}")
        loaded, skipped = load_gitleaks(args.gitleaks)
        rules += loaded
    if args.trufflehog:
        if not args.trufflehog.is_dir():
            parser.error(f"no trufflehog detectors folder at {args.trufflehog}")
        loaded, not_read = load_trufflehog(args.trufflehog)
        rules += loaded
        skipped += not_read
    if args.detect_secrets:
        try:
            rules += load_detect_secrets()
        except ImportError:
            parser.error("detect-secrets is not installed (pip install 'hermes-stowage[test]')")
    if args.only:
        rules = [rule for rule in rules if any(part in rule.rule_id for part in args.only.split(","))]
    if not rules:
        parser.error(
            "no rules: give --gitleaks PATH, --trufflehog DIR and/or --detect-secrets (and an --only that matches)"
        )
    results, spent, chars = measure(rules, args.samples, args.seed)
    unsampled = [r.rule_id for r in results if not r.samples]
    leaking = [r for r in results if r.leaked]
    summary = {
        "rules": len(results),
        "skipped_path_only": skipped,
        "unsampled": unsampled,
        "samples": sum(r.samples for r in results),
        "leaked_samples": sum(r.leaked for r in results),
        "rules_leaked": [r.rule_id for r in leaking],
        "mask_ms": round(spent * 1000, 1),
        "mask_us_per_kchar": round(spent * 1e6 / max(chars, 1) * 1000, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "rules": [r.__dict__ for r in results]}, indent=1))
        return 0
    for result in results:
        if result.leaked or args.verbose:
            print(
                f"{result.source:14} {result.rule_id:48} {result.leaked}/{result.samples} leaked"
                + (f"  [{', '.join(result.leaked_contexts)}]  e.g. {result.example!r}" if result.leaked else "")
            )
    by_source = Counter(r.source for r in results)
    for source, total in by_source.items():
        bad = sum(1 for r in leaking if r.source == source)
        print(f"{source}: {total} rules, {bad} leak at least one sample")
    print(
        f"samples {summary['samples']}, leaked {summary['leaked_samples']}; rules not sampled: {unsampled or 'none'};"
        f" skipped (path-only): {skipped or 'none'};"
        f" detect-secrets plugins not measured: {list(DETECT_SECRETS_MARKERS) if args.detect_secrets else 'none'};"
        f" mask {summary['mask_ms']} ms"
        f" ({summary['mask_us_per_kchar']} us per 1,000 chars)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
