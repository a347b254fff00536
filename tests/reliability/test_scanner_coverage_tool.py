"""The scanner-coverage measure (``bench/scanner_coverage.py``): its regex sampler, its Go syntax, its verdicts.

The tool is what says which public scanner rules Stowage's masking leaks,
so it must itself be right: a sample must be a string the rule reports, a
rule we do not cover must come out leaked, one we cover must not.  The
rule file here is written for the test (no scanner's own rules are shipped).
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.reliability

_PATH = Path(__file__).resolve().parents[2] / "bench" / "scanner_coverage.py"
_spec = importlib.util.spec_from_file_location("scanner_coverage", _PATH)
assert _spec and _spec.loader
tool = importlib.util.module_from_spec(_spec)
sys.modules["scanner_coverage"] = tool  # dataclasses look their module up by name
_spec.loader.exec_module(tool)


@pytest.mark.parametrize(
    ("go", "python"),
    [
        (r"\b(pat[[:alnum:]]{14})\b", r"\b(pat[A-Za-z0-9]{14})\b"),
        (r"\b(p8e-(?i)[a-z0-9]{32})x", r"\b(p8e-(?i:[a-z0-9]{32}))x"),
        (r"a(?i)b|c", r"a(?i:b)|(?i:c)"),
        (r"(?i)key=(\w+)(?:\s|\z)", r"(?i)key=(\w+)(?:\s|\Z)"),
    ],
)
def test_go_syntax_is_read_as_go_reads_it(go, python):
    assert tool.go_to_python(go) == python
    re.compile(tool.go_to_python(go))


@pytest.mark.parametrize(
    ("pattern", "group"),
    [
        (r"\b(ghp_[A-Za-z0-9]{36})\b", 1),
        (r"(?:sk|rk)_(?:live|test)_([a-zA-Z0-9]{10,99})", 1),
        (r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", 1),
        (r"(?i)token[ \t]*[:=][ \t]*['\"]?([^\s'\"]{16,40})", 1),
        (r"(a|b)x\1y([A-Z]{3,})", 2),
        (r"https://hooks.slack.com/services/(T[A-Z0-9]{8}/B[A-Z0-9]{8}/[a-zA-Z0-9]{24})", 1),
    ],
)
def test_every_sample_is_a_match_with_a_varied_secret(pattern, group):
    compiled = re.compile(pattern)
    rng = random.Random(5)
    secrets = set()
    for _ in range(20):
        text = tool.sample(pattern, rng, group, compiled.flags)
        match = compiled.fullmatch(text) or compiled.search(text)
        assert match, f"{text!r} is not a match of {pattern}"
        secrets.add(match.group(group))
    assert len(secrets) > 10  # drawn at random, not one fixed string


def test_a_case_insensitive_class_gives_either_case_only_when_folding():
    rng = random.Random(1)
    folded = "".join(tool.sample(r"(?i)([a-z]{200})", rng, 1, re.I, fold=True) for _ in range(2))
    plain = tool.sample(r"(?i)([a-z]{200})", rng, 1, re.I, fold=False)
    assert any(c.isupper() for c in folded) and plain.islower()


_RULES = """
title = "test rules"

[[rules]]
id = "github-like"
regex = \'\'\'\\b(ghp_[A-Za-z0-9]{36})\\b\'\'\'
keywords = ["ghp_"]

[[rules]]
id = "acme-named"
regex = \'\'\'(?i)[\\w.-]{0,20}?(?:acmecorp)(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}(?:=|:)[\\x60'"\\s]{0,5}\
([a-z]{24})(?:[\\x60'"\\s;]|$)\'\'\'
keywords = ["acmecorp"]

[[rules]]
id = "a-key-file"
path = \'\'\'\\.p12$\'\'\'
"""


def test_the_tool_reports_a_rule_we_leak_and_not_one_we_mask(tmp_path, capsys):
    config = tmp_path / "rules.toml"
    config.write_text(_RULES, encoding="utf-8")
    assert tool.main(["--gitleaks", str(config), "--samples", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_id = {rule["rule_id"]: rule for rule in report["rules"]}
    assert by_id["github-like"]["samples"] >= 10 and by_id["github-like"]["leaked"] == 0
    # 24 lower-case letters under a name no rule knows: nothing says it is a key, and the tool must say so
    assert by_id["acme-named"]["samples"] >= 4 and by_id["acme-named"]["leaked"] > 0
    assert report["summary"]["rules_leaked"] == ["acme-named"]
    assert report["summary"]["skipped_path_only"] == ["a-key-file"]


def test_a_missing_rule_file_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tool.main(["--gitleaks", str(tmp_path / "absent.toml")])
    assert "no gitleaks config" in capsys.readouterr().err
