"""Coverage of the secret formats public scanners know, and no damage to ordinary text.

``secret_formats.FORMATS`` holds about 300 formats in ten families, shaped
after gitleaks' provider rules and detect-secrets' plugins (provider tokens,
PEM and base64-wrapped private keys, secret-named pairs in every common
syntax, signed URLs, headers).  Each is masked on its own, then planted in a
user message, a tool output (whole and as an error line) and JSON call
arguments of a real compaction, and the summary prompt must hold the line's
marker and none of the secret.  ``ordinary_text`` holds more than 500 lines
of git logs, Kubernetes and CI YAML, code, prose, URLs, base64 images,
package-manager output and hashes: every line must pass unchanged, alone, in
its block, and through the summary prompt.  detect-secrets (the ``test``
extra) gives a second opinion: every secret its pattern plugins find in the
corpus must be masked.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from stowage.context_engine.redaction.redact import redact, redact_many

from .ordinary_text import BLOCKS, ordinary_lines
from .planting import ROUTES, summary_prompts
from .secret_formats import FAMILIES, FORMATS, SecretFormat

pytestmark = pytest.mark.reliability
REQUIRED = [f for f in FORMATS if not f.public]


def _pieces(secret: str) -> list[str]:
    """The secret's alphanumeric pieces of 8 or more characters that no other format's line holds."""
    others = "\n".join(f.line for f in FORMATS if f.secret != secret)
    return [p for p in re.split(r"[^A-Za-z0-9]+", secret) if len(p) >= 8 and p not in others]


_PIECES = {f.secret: _pieces(f.secret) for f in FORMATS}


def leaks(fmt: SecretFormat, text: str) -> bool:
    """The secret, or a piece of it (a partial mask leaks too), is in ``text``."""
    return fmt.secret in text or any(piece in text for piece in _PIECES[fmt.secret])


def test_every_format_has_a_piece_to_find():
    """Guard: a leak is detectable for each format (a secret with no unique piece would prove nothing)."""
    assert len(REQUIRED) >= 290 and len(FAMILIES) >= 9
    assert not [f.name for f in REQUIRED if not _PIECES[f.secret] and len(f.secret) < 8]
    assert len({f.name for f in FORMATS}) == len(FORMATS)


def test_formats_public_scanners_know_are_masked(figures):
    by_family: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    missed = []
    for fmt in REQUIRED:
        by_family[fmt.family] += 1
        out = redact(fmt.line)
        escaped = redact(json.dumps({"command": fmt.line}))  # as call arguments carry it
        assert redact(out) == out and redact(escaped) == escaped, f"{fmt.name}: a second pass changes the text"
        if leaks(fmt, out) or leaks(fmt, escaped):
            missed.append(fmt.name)
        else:
            covered[fmt.family] += 1
    figures.update(
        formats=len(REQUIRED),
        covered=sum(covered.values()),
        **{family: f"{covered[family]}/{by_family[family]}" for family in FAMILIES},
    )
    assert not missed, f"{len(missed)} formats leak: {missed}"
    lines = [fmt.line for fmt in REQUIRED]
    assert redact_many(lines) == [redact(line) for line in lines]


@pytest.mark.parametrize("route", ROUTES)
def test_planted_formats_never_reach_the_summary_model(route, figures):
    # each line starts a line of its own, as a pasted file or command does ("PLANT-i:" then a line break)
    items = ["\n" + f.line for f in REQUIRED]
    prompt = summary_prompts(items, route)
    shown = [i for i in range(len(items)) if f"PLANT-{i}:" in prompt or f"PLANT-{i} " in prompt]
    leaked = [fmt.name for fmt in REQUIRED if leaks(fmt, prompt)]
    figures.update(route=route, planted=len(items), shown=len(shown), leaked=len(leaked))
    if route in ("user", "arguments"):
        assert len(shown) == len(items), "every planted line reached the prompt (else the test proves nothing)"
    else:  # a tool output of 200 characters or more shows as its verdict and size, its error line shows
        assert len(shown) >= len(items) // 2
    assert not leaked, f"{len(leaked)} secrets reached the summary model by {route}: {leaked}"


def test_ordinary_text_passes_unchanged(figures):
    lines = ordinary_lines()
    changed_lines = [line for line in lines if redact(line) != line]
    changed_blocks = [block for block in BLOCKS if redact(block) != block]
    many = redact_many(BLOCKS)
    changed_many = [block for block, out in zip(BLOCKS, many, strict=True) if out != block]
    figures.update(
        lines=len(lines),
        changed_lines=len(changed_lines),
        blocks=len(BLOCKS),
        changed_blocks=len(changed_blocks) + len(changed_many),
        false_positive_rate=f"{len(changed_lines) / len(lines):.2%}",
    )
    assert len(lines) >= 500
    assert not changed_lines, f"{len(changed_lines)} ordinary lines altered: {changed_lines[:10]}"
    assert not changed_blocks and not changed_many


def test_ordinary_text_reaches_the_summary_model_as_written(figures):
    prompt = summary_prompts(BLOCKS, "user")
    altered = [line for block in BLOCKS for line in block.split("\n") if line.strip() and line not in prompt]
    figures.update(blocks=len(BLOCKS), altered_lines=len(altered))
    assert not altered, f"{len(altered)} ordinary lines altered on their way to the model: {altered[:10]}"


def test_the_issue_false_positives_stay():
    """The four reported: a CI permission, a pod setting, Python names after short key prefixes, prose."""
    for text in (
        "permissions:\n  id-token: write\n  contents: read",
        "spec:\n  automountServiceAccountToken: false",
        "sk_learn_model = fit(x)\nam_pm_format = '%p'\nsk_feature_names = ['a']",
        "Start with basic troubleshooting.",
    ):
        assert redact(text) == text


def test_detect_secrets_finds_nothing_we_leak(figures):
    """Second opinion: whatever detect-secrets' pattern plugins find in a planted line is masked."""
    settings = pytest.importorskip("detect_secrets.settings")
    scan = pytest.importorskip("detect_secrets.core.scan")
    plugins = pytest.importorskip("detect_secrets.core.plugins.util")
    names = [c.__name__ for c in plugins.get_mapping_from_secret_type_to_class().values()]
    pattern_plugins = [{"name": n} for n in names if "HighEntropy" not in n and n != "IPPublicDetector"]
    found = leaked = flagged_ordinary = 0
    misses = []
    with settings.transient_settings({"plugins_used": pattern_plugins}):
        for fmt in REQUIRED:
            values = {s.secret_value for line in fmt.line.split("\n") for s in scan.scan_line(line) if s.secret_value}
            found += bool(values)
            out = redact(fmt.line)
            missed = [v for v in values if len(v) >= 8 and v in out and v not in fmt.line.replace(fmt.secret, "")]
            leaked += bool(missed)
            misses += [f"{fmt.name}: {v}" for v in missed]
        flagged_ordinary = sum(1 for line in ordinary_lines() if list(scan.scan_line(line)))
    figures.update(
        detect_secrets_flags=f"{found}/{len(REQUIRED)}",
        we_leak_of_those=leaked,
        detect_secrets_ordinary_lines_flagged=flagged_ordinary,
    )
    assert found >= 50, "detect-secrets ran its plugins"
    assert not misses, misses
