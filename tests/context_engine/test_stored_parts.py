"""Images compaction removes: the bytes kept for them and the placeholder naming their handle."""

from __future__ import annotations

import base64
import json

import pytest

from stowage.context_engine.store_session.message_parts import PART_JSON, data_url, part_placeholder, stored_part

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
B64 = base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}", "detail": "high"}},
        {"type": "input_image", "image_url": f"data:image/png;base64,{B64}"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
    ],
)
def test_an_inline_image_is_kept_as_its_decoded_bytes_and_given_back_as_the_same_data_url(part):
    stored = stored_part(part)
    assert stored.data == PNG and stored.content_type == "image/png" and stored.is_media
    assert data_url(stored.content_type, stored.data) == f"data:image/png;base64,{B64}"


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image_url", "image_url": {"url": "https://example.test/cat.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,not base64!!"}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64[:-2]}\n{B64[-2:]}"}},
        {"type": "image", "source": {"type": "base64", "media_type": 7, "data": B64}},
        {"type": "image_url"},
    ],
)
def test_any_other_part_is_kept_as_its_exact_json(part):
    stored = stored_part(part)
    assert stored.content_type == PART_JSON and not stored.is_media
    assert json.loads(stored.data) == part


def test_the_placeholder_names_the_handle_what_is_kept_and_how_to_fetch_it():
    media = part_placeholder(
        "3f2a9c0d1e2b4a5f", stored_part({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}})
    )
    assert media == (
        "[stowage: image removed from older context; stored under handle 3f2a9c0d1e2b4a5f (image/png, 208 bytes): "
        'stowage_fetch(handle="3f2a9c0d1e2b4a5f", mode="full") returns it as a base64 data URL]'
    )
    by_url = part_placeholder(
        "3f2a9c0d1e2b4a5f", stored_part({"type": "image_url", "image_url": {"url": "https://x.test/a.png"}})
    )
    assert "the message part as JSON" in by_url and by_url.endswith('mode="full") returns it]')
