"""One invisible character inside a key must not hide it from the mask.

Keys of five self-identifying formats, each split by one invisible or
format character (zero-width space, word joiner, soft hyphen, BOM,
zero-width non-joiner and joiner, bidi controls, combining grapheme joiner,
variation selector), are planted on every route of a real compaction: the
summary prompt, read with those characters removed (as a reader or a model
sees it), must hold no piece of any key.  Ordinary lines whose invisible
characters carry meaning (Arabic with its marks, emoji sequences,
soft-hyphenated words) pass unchanged.  Before the fix 5 of 5 split keys
reached the summary model.
"""

from __future__ import annotations

import pytest

from stowage.context_engine.redaction.invisible import INVISIBLE
from stowage.context_engine.redaction.redact import redact, redact_many

from .planting import ROUTES, summary_prompts

pytestmark = pytest.mark.reliability

SPLITTERS = {
    "zero width space": "\u200b",
    "word joiner": "\u2060",
    "soft hyphen": "\u00ad",
    "byte order mark": "\ufeff",
    "zero width non-joiner": "\u200c",
    "zero width joiner": "\u200d",
    "right-to-left override": "\u202e",
    "left-to-right isolate": "\u2066",
    "combining grapheme joiner": "\u034f",
    "variation selector 16": "\ufe0f",
}
KEYS = {
    "openai project key": "sk-proj-" + "Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2Ue7Io9Pl4Mn",
    "aws access key id": "AKIA" + "Q7LMV2B9TC4RZ8WD",
    "github token": "ghp_" + "Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2Ue",
    "google api key": "AIza" + "SyQx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2",
    "slack bot token": "xoxb-" + "2948571635-4817263950-Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3",
}
ORDINARY = [
    "\u0645\u0631\u062d\u0628\u0627\u200f \u0628\u0643\u0645 in the release notes",
    "reviewed by \U0001f469\u200d\U0001f4bb and \U0001f468\u200d\U0001f469\u200d\U0001f467 today \u2764\ufe0f",
    "the con\u00adfig\u00adu\u00adra\u00adtion file is read at start",
    "\ufeffname,version,license",
    "a\u2066b\u2069c isolate and ZWNJ in \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "commit 3f1c2a9 fix\u200b: wrap long\u200bwords in the table",
]


def split(key: str, splitter: str) -> str:
    middle = len(key) // 2
    return key[:middle] + splitter + key[middle:]


def pieces(key: str) -> list[str]:
    """The key's halves: a mask that keeps either lets the key through."""
    middle = len(key) // 2
    return [key[:middle], key[middle:]]


def cases() -> list[tuple[str, str, str]]:
    return [
        (f"{name} split by {where}", key, split(key, mark))
        for name, key in KEYS.items()
        for where, mark in SPLITTERS.items()
    ]


def leaked(text: str) -> list[str]:
    seen = INVISIBLE.sub("", text)
    return [label for label, key, _ in cases() if any(piece in seen for piece in pieces(key))]


def test_split_keys_are_masked_alone_and_in_lines(figures):
    missed = []
    for label, _, split_key in cases():
        for line in (split_key, f"export TOKEN={split_key}", f"curl -H 'Authorization: Bearer {split_key}' api"):
            if leaked(redact(line)) or leaked(redact_many([line, "other"])[0]):
                missed.append(f"{label}: {line!r}")
    figures.update(cases=len(cases()) * 3, missed=len(missed))
    assert not missed, missed[:10]


@pytest.mark.parametrize("route", ROUTES)
def test_split_keys_never_reach_the_summary_model(route, figures):
    lines = [f"the key is {split_key} for the service" for _, _, split_key in cases()]
    prompt = summary_prompts(lines, route)
    found = leaked(prompt)
    figures.update(route=route, keys=len(lines), reached_the_model=len(found))
    assert "PLANT-0" in prompt and f"PLANT-{len(lines) - 1}" in prompt
    assert not found, found[:10]


def test_ordinary_lines_with_invisible_characters_pass_unchanged():
    assert [redact(line) for line in ORDINARY] == ORDINARY
    assert redact_many(ORDINARY) == ORDINARY


def test_the_characters_around_a_masked_key_stay():
    key = KEYS["openai project key"]
    line = f"\u200fsee\u200b {split(key, chr(0x200B))} and \u2066{split(key, chr(0xAD))}\u2069 end\u200d"
    assert redact(line) == "\u200fsee\u200b [REDACTED] and \u2066[REDACTED]\u2069 end\u200d"
