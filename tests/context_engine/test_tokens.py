"""Token counting: offline tiktoken load, exact and sampled counts, the per-message cache."""

from __future__ import annotations

import inspect
import json
import random
import sys

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry

import stowage.context_engine.chat.tokenizer_loader as loader
from stowage.context_engine.chat.tokens import IMAGE_TOKENS, SAMPLE_THRESHOLD_CHARS, TokenCounter
from stowage.context_engine.compaction import assemble
from stowage.context_engine.redaction import redact
from stowage_dev.transcripts import make_transcript, tool_output


@pytest.fixture
def fresh_loader(tmp_path, monkeypatch):
    """An empty tiktoken cache, no per-process caches, and no network."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(loader, "_loaded", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    downloads: list[str] = []

    def no_network(blobpath: str) -> bytes:
        downloads.append(blobpath)
        raise ConnectionError(f"network disabled in tests: {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    return cache, downloads


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_offline_load_seeds_cache_from_bpe_openai(fresh_loader, name):
    cache, downloads = fresh_loader
    loaded = loader.load_encoding(name)
    assert loaded.encoding is not None, loaded.detail
    assert loaded.source == "bpe-openai"
    assert downloads == []
    seeded = loader.cached_file_for(name)
    assert seeded is not None and seeded.parent == cache and seeded.is_file()
    assert loaded.encoding.encode_ordinary("hello world") == tiktoken.get_encoding(name).encode_ordinary("hello world")
    # a second load in a fresh process state finds tiktoken's own cache
    loader._loaded.clear()
    tiktoken.registry.ENCODINGS.clear()
    again = loader.load_encoding(name)
    assert again.source == "tiktoken-cache" and again.encoding is not None


def test_counter_backend_after_offline_load(fresh_loader):
    counter = TokenCounter("o200k_base")
    assert counter.backend == "tiktoken:o200k_base"
    assert counter.loaded.source == "bpe-openai"


def test_without_bpe_openai_and_no_download_falls_back_to_estimate(fresh_loader, monkeypatch):
    _cache, downloads = fresh_loader
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # import raises ImportError
    loaded = loader.load_encoding("o200k_base", allow_download=False)
    assert loaded.encoding is None and loaded.source == "unavailable"
    assert "bpe-openai" in loaded.detail and "allow_download" in loaded.detail
    assert downloads == []
    counter = TokenCounter("o200k_base")
    assert counter.backend == "estimate"
    assert counter.count_text("x" * 400) == 100
    assert counter.count_message({"role": "user", "content": "abcd" * 10}) > 10


def test_download_allowed_but_network_down_never_raises(fresh_loader, monkeypatch):
    _cache, downloads = fresh_loader
    monkeypatch.setitem(sys.modules, "bpe_openai", None)
    loaded = loader.load_encoding("o200k_base", allow_download=True)
    assert loaded.encoding is None and loaded.source == "unavailable"
    assert "o200k_base" in loaded.detail
    assert downloads, "tiktoken should have tried to download when allowed"
    assert TokenCounter("o200k_base", allow_download=True).backend == "estimate"


def test_caching_disabled_by_empty_cache_dir(fresh_loader, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    loaded = loader.load_encoding("o200k_base")
    assert loaded.encoding is None
    assert "TIKTOKEN_CACHE_DIR" in loaded.detail


def test_unknown_encoding_is_unavailable(fresh_loader):
    loaded = loader.load_encoding("p50k_nope")
    assert loaded.encoding is None and "unknown encoding" in loaded.detail


def test_load_is_cached_per_process(fresh_loader):
    first = loader.load_encoding("o200k_base")
    assert loader.load_encoding("o200k_base") is first


# -- counting -------------------------------------------------------------------


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    c = TokenCounter("o200k_base")
    assert c.backend == "tiktoken:o200k_base", c.loaded.detail
    return c


@pytest.mark.parametrize(
    "text", ["", "hello", "def f(x):\n    return x * 2\n", "naïve café — 東京 🙂", "a" * (SAMPLE_THRESHOLD_CHARS - 1)]
)
def test_short_text_is_exact(counter, text):
    expected = len(tiktoken.get_encoding("o200k_base").encode_ordinary(text))
    assert counter.count_text(text) == expected


def test_special_token_text_is_not_rejected(counter):
    # encode() would raise on "<|endoftext|>"; counting must not.
    assert counter.count_text("<|endoftext|> and more") > 0


def _long_texts() -> dict[str, str]:
    rng = random.Random(7)
    prose_words = (
        "the quick compaction engine keeps what matters and drops what does not, while the model "
        "continues its work on the repository; numbers like 42 and names like Stowage stay"
    ).split()
    prose = "\n\n".join(
        " ".join(rng.choice(prose_words) for _ in range(rng.randint(40, 120))).capitalize() + "." for _ in range(60)
    )
    records = [
        {
            "id": i,
            "name": f"item-{i}",
            "tags": ["alpha", "beta"][: i % 3],
            "score": round(i * 0.37, 2),
            "url": f"https://example.com/items/{i}?page={i % 7}",
        }
        for i in range(600)
    ]
    return {
        "log": tool_output(rng, "terminal", 60_000),
        "json-search": tool_output(rng, "web_search", 40_000),
        "json-indented": json.dumps(records, indent=2),
        "json-compact": json.dumps(records),
        "file-read": tool_output(rng, "read_file", 30_000),
        "prose": prose,
        # real source with a prose docstring head and regex-heavy middle
        "python-source": inspect.getsource(redact) + inspect.getsource(assemble),
        "mixed": prose[:5000] + json.dumps(records[:80], indent=2) + tool_output(rng, "terminal", 6000),
        "small-over-threshold": tool_output(rng, "web_search", 1_500),
    }


@pytest.mark.parametrize("kind", list(_long_texts()))
def test_sampled_estimate_within_ten_percent(counter, kind):
    text = _long_texts()[kind]
    assert len(text) > SAMPLE_THRESHOLD_CHARS
    exact = len(tiktoken.get_encoding("o200k_base").encode_ordinary(text))
    estimate = counter.count_text(text)
    assert abs(estimate - exact) <= 0.10 * exact, (kind, estimate, exact)


def test_message_count_includes_calls_and_images(counter):
    text_only = counter.count_message({"role": "user", "content": "look at this"})
    with_image = counter.count_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look at this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 50_000}},
            ],
        }
    )
    assert with_image - text_only == IMAGE_TOKENS
    two_images = counter.count_message(
        {"role": "user", "content": [{"type": "input_image", "image_url": "x"}, {"type": "image", "source": {}}]}
    )
    assert two_images == 4 + 2 * IMAGE_TOKENS
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls -la"}'}}
        ],
    }
    assert counter.count_message(call) > counter.count_message({"role": "assistant", "content": None})


def test_counts_never_raise_on_odd_messages(counter):
    for odd in (
        {"role": "user", "content": None},
        {"role": "user", "content": 12345},
        {"content": ["raw", 3]},
        "not a message",
        {"role": "assistant", "tool_calls": "nope"},
    ):
        assert counter.count_message(odd) >= 4


def test_second_count_of_same_history_is_all_cache_hits():
    counter = TokenCounter("o200k_base")
    history = make_transcript(8, seed=3)
    first = counter.count_messages(history)
    assert counter.misses > 0
    distinct_misses = counter.misses
    hits_before = counter.hits
    second = counter.count_messages(history)
    assert second == first
    assert counter.misses == distinct_misses
    assert counter.hits - hits_before == len(history)
    # an equal copy (new dict objects) is keyed by content, so it hits too
    copy_total = counter.count_messages([dict(m) for m in history])
    assert copy_total == first and counter.misses == distinct_misses


def test_cache_key_sees_changed_content():
    counter = TokenCounter("o200k_base")
    a = counter.count_message({"role": "user", "content": "short"})
    b = counter.count_message({"role": "user", "content": "short but now a lot longer than before"})
    assert b > a and counter.misses == 2


def test_cache_is_bounded():
    counter = TokenCounter("o200k_base", cache_size=5)
    for i in range(20):
        counter.count_message({"role": "user", "content": f"message {i}"})
    assert len(counter._cache) == 5


def test_deepcopy_gets_own_cache_but_shares_encoding():
    import copy

    counter = TokenCounter("o200k_base")
    counter.count_message({"role": "user", "content": "hi"})
    clone = copy.deepcopy(counter)
    assert clone.loaded is counter.loaded
    assert clone._cache == {} and clone.hits == clone.misses == 0


def test_calibrated_estimates_track_exact_counts_without_tokenizing_each_message():
    from stowage.context_engine.chat.tokens import TokenCounter
    from stowage_dev.transcripts import make_transcript

    messages = make_transcript(20, seed=9)
    counter = TokenCounter()
    exact = TokenCounter().count_messages(messages)
    counter.calibrate(messages[-40:])
    misses_before = counter.misses
    estimate = sum(counter.estimate_message(m) for m in messages)
    assert counter.misses == misses_before  # estimates never tokenize a message
    assert abs(estimate - exact) / exact < 0.15, (estimate, exact)
    counted = counter.count_message(messages[0])
    assert counter.estimate_message(messages[0]) == counted  # cached exact counts win
