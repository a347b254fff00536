"""An image compaction takes out of the context is stored and fetchable, never dropped.

The attack: compaction replaced an image in the protected first request with
``[stowage: image removed from older context]`` and stored it nowhere.  Now
the image's bytes go to the store under its media type, the placeholder
names the handle and how to read it, and ``stowage_fetch`` gives the same
data URL back (whole, or its base64 paged by characters).
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from stowage.blobstore import StoreWriteError
from stowage.context_engine.chat.markers import IMAGE_PLACEHOLDER
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage_dev.transcripts import make_transcript

pytestmark = pytest.mark.reliability
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes((i * 37) % 256 for i in range(30_000))
URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
HANDLE = re.compile(r"stored under handle ([0-9a-f]{16,64})")


def session(tmp_path) -> tuple[StowageEngineCore, list[dict]]:
    engine = StowageEngineCore(
        load_settings({}), summary_model=lambda prompt, runtime, timeout=None: "## Goal\nLook at the chart."
    )
    engine.update_model("m", 128_000)
    engine.on_session_start("pictures", hermes_home=str(tmp_path))
    messages = make_transcript(30, seed=5)
    first = next(i for i, m in enumerate(messages) if m["role"] == "user")
    messages[first] = {
        "role": "user",
        "content": [{"type": "text", "text": "here is the chart"}, {"type": "image_url", "image_url": {"url": URL}}],
    }
    return engine, messages


def fetch(engine: StowageEngineCore, **args) -> dict:
    return json.loads(engine.handle_tool_call("stowage_fetch", args))


def placeholders(messages: list[dict]) -> list[str]:
    return [
        part["text"]
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and "image removed" in str(part.get("text"))
    ]


def test_an_image_removed_from_the_first_request_is_fetched_back_by_its_handle(tmp_path, figures):
    engine, messages = session(tmp_path)
    compacted = engine.compress(messages, current_tokens=120_000, force=True)
    (placeholder,) = placeholders(compacted)
    assert URL not in json.dumps(compacted)  # the image left the context
    (handle,) = HANDLE.findall(placeholder)
    assert f'stowage_fetch(handle="{handle}", mode="full")' in placeholder and "image/png" in placeholder

    whole = fetch(engine, handle=handle, mode="full")
    assert whole["media_type"] == "image/png" and whole["encoding"] == "base64" and whole["data_url"] == URL
    stat = fetch(engine, handle=handle)
    assert stat["media_type"] == "image/png" and stat["size_bytes"] == len(PNG) and stat["kind"] == "part"
    text, start, calls = "", 0, 0
    while start is not None:  # the base64 paged by characters, as a model would past the full-fetch limit
        page = fetch(engine, handle=handle, mode="range", unit="chars", start=start, count=7999)
        text, start, calls = text + page["text"], page["next_start"], calls + 1
    assert "data:image/png;base64," + text == URL
    assert "error" in fetch(engine, handle=handle, mode="grep", pattern="PNG")
    store = engine.state.store.store
    sha = store.resolve(handle)
    with store.index.read() as tx:
        assert sha in tx.pins_of("pictures")  # the size cap spares it while the request shows the placeholder
    figures.update(image_bytes=len(PNG), data_url_chars=len(URL), range_calls=calls)


def test_the_full_fetch_limit_points_to_paging_for_a_large_image(tmp_path):
    engine, messages = session(tmp_path)
    engine.state.store.limits = type(engine.state.store.limits)(8000, 10_000)
    (placeholder,) = placeholders(engine.compress(messages, current_tokens=120_000, force=True))
    (handle,) = HANDLE.findall(placeholder)
    refused = fetch(engine, handle=handle, mode="full")
    assert "over the full-fetch limit of 10,000" in refused["error"] and 'unit="chars"' in refused["error"]


def test_a_store_that_cannot_write_still_compacts_with_the_plain_placeholder(tmp_path, monkeypatch):
    engine, messages = session(tmp_path)
    store = engine.state.store.store
    monkeypatch.setattr(store, "put", lambda *a, **k: (_ for _ in ()).throw(StoreWriteError("disk full")))
    compacted = engine.compress(messages, current_tokens=120_000, force=True)
    assert placeholders(compacted) == [IMAGE_PLACEHOLDER]


WINDOW_IMAGES = re.compile(r"image\(s\) are stored on their own[^:]*: ([^.]+)\.")


def test_an_image_inside_the_summarized_window_is_its_own_blob_fetched_as_an_image(tmp_path, figures):
    """The attack: the image survived only as base64 inside the window's blob, which mode=full refused."""
    engine = StowageEngineCore(
        load_settings({}), summary_model=lambda prompt, runtime, timeout=None: "## Goal\nLook at the chart."
    )
    engine.update_model("m", 128_000)
    engine.on_session_start("pictures", hermes_home=str(tmp_path))
    messages = make_transcript(30, seed=5)
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    middle = users[len(users) // 3]  # neither the protected first request nor the kept tail
    messages[middle] = {
        "role": "user",
        "content": [
            {"type": "text", "text": "the chart from the run"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    }
    compacted = engine.compress(messages, current_tokens=120_000, force=True)
    text = json.dumps(compacted)
    assert URL not in text
    (listed,) = WINDOW_IMAGES.findall(text)  # the window's reference names the image's handle
    (image,) = re.findall(r"([0-9a-f]{16,64}) \(image/png, 30,016 bytes\)", listed)
    whole = fetch(engine, handle=image, mode="full")
    assert whole["media_type"] == "image/png" and whole["data_url"] == URL
    (window,) = re.findall(r"stored whole, one JSON message per line, under handle ([0-9a-f]{16,64})", text)
    store = engine.state.store.store
    lines = store.read_bytes(store.resolve(window)).decode()
    assert f"stored under handle {image} (image/png" in lines and URL[:200] not in lines
    found = fetch(engine, handle=window, mode="grep", pattern=f"stored under handle {image}")
    assert found["matches"], found
    figures.update(image_bytes=len(PNG), window_chars=len(lines), image_fetched_whole=True)
