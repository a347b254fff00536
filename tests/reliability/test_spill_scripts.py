"""No output over ``spill.threshold_tokens`` tokens is sent whole, in any script.

The attack: spill skipped counting any output with fewer characters than the
threshold, but Amharic, CJK and emoji run to several tokens per character: a
3,990-character Amharic page is about 7,100 tokens and went to the model
whole at the 4,000-token default.  Counting is now skipped only below the
threshold in UTF-8 bytes (a token covers at least one byte).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.context_engine.chat.markers import SPILL_HEADER
from stowage.context_engine.chat.tokens import TokenCounter
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.spill import may_exceed

pytestmark = pytest.mark.reliability
THRESHOLD = 4000
AMHARIC = "ኢትዮጵያ በምሥራቅ አፍሪካ የምትገኝ ሀገር ናት። ዋና ከተማዋ አዲስ አበባ ነው። የሀገሪቱ ሕዝብ ብዙ ቋንቋዎችን ይናገራል። "


def _page(unit: str, chars: int = THRESHOLD - 10) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def _cjk() -> str:
    rng = random.Random(31)  # CJK Extension A: rare ideographs, about three tokens each
    return "".join(chr(0x3400 + rng.randrange(6000)) for _ in range(THRESHOLD - 10))


def _emoji() -> str:
    rng = random.Random(31)
    return "".join(chr(0x1F300 + rng.randrange(700)) for _ in range(THRESHOLD - 10))


SCRIPTS = {"amharic": _page(AMHARIC), "cjk": _cjk(), "emoji": _emoji()}


@pytest.fixture(scope="module")
def encoding():
    counter = TokenCounter("o200k_base")
    if counter.loaded.encoding is None:
        pytest.skip("the o200k_base encoding is not available offline here")
    return counter.loaded.encoding


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_page_under_the_threshold_in_characters_but_over_it_in_tokens_is_spilled(tmp_path, encoding, figures, script):
    text = SCRIPTS[script]
    tokens = len(encoding.encode_ordinary(text))
    assert len(text) < THRESHOLD < tokens  # the case the character shortcut let through
    engine = StowageEngineCore(load_settings({}), summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 128_000)
    engine.on_session_start("scripts", hermes_home=str(tmp_path))
    assert engine.settings.spill.threshold_tokens == THRESHOLD  # the shipped default
    preview = engine.spill_tool_result("web_extract", '{"url": "https://example.test/page"}', text).text
    figures.update(script=script, chars=len(text), utf8_bytes=len(text.encode()), tokens=tokens)
    assert preview is not None and preview.startswith(SPILL_HEADER)
    assert len(encoding.encode_ordinary(preview)) < THRESHOLD
    (handle,) = [line.split()[-1] for line in preview.splitlines() if line.startswith("handle: ")]
    store = engine.state.store.store
    assert store.read_bytes(store.resolve(handle, "scripts")).decode("utf-8") == text


def test_short_ascii_and_short_non_latin_outputs_are_still_left_alone(tmp_path):
    engine = StowageEngineCore(load_settings({}), summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 128_000)
    engine.on_session_start("scripts", hermes_home=str(tmp_path))
    assert engine.spill_tool_result("terminal", "{}", "x" * (THRESHOLD - 10)).text is None
    assert engine.spill_tool_result("terminal", "{}", _page(AMHARIC, 300)).text is None  # ~540 tokens


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=700), st.integers(min_value=1, max_value=800))
def test_the_shortcut_never_skips_a_text_over_the_threshold(encoding, text, threshold):
    """A true lower bound: whenever counting is skipped, the real count is within the threshold."""
    if not may_exceed(text, threshold):
        assert len(encoding.encode_ordinary(text)) <= threshold


def test_the_shortcut_skips_what_it_safely_can():
    assert not may_exceed("a" * 4000, 4000)
    assert may_exceed("a" * 4001, 4000)
    assert not may_exceed("é" * 1000, 4000)  # at most 4 bytes a character: no encoding needed
    assert not may_exceed("é" * 2000, 4000)  # 4,000 bytes
    assert may_exceed("é" * 2001, 4000)
    assert may_exceed("\ud800" * 1500, 4000)  # a lone surrogate is counted, never a crash
