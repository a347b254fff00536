"""Message parts compaction takes out of the context (images), as stored bytes and a placeholder.

An image sent inline is a base64 data URL (OpenAI ``image_url``/``input_image``)
or a base64 source (Anthropic ``image``): its decoded bytes are stored under
their media type, so the handle is the image's own SHA-256 and ``stowage_fetch``
gives the same data URL back.  Any other part (an image by URL, an unknown
shape) is stored as the part's JSON, byte for byte what the message held.
Pure: no store, no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from ..chat.markers import IMAGE_PLACEHOLDER

PART_JSON = "json"  # the content type of a part stored as its JSON
_DATA_URL = re.compile(r"data:([a-z0-9.+-]{1,40}/[a-z0-9.+-]{1,80})((?:;[^;,]{0,100}){0,8});base64,", re.I)


@dataclass(frozen=True)
class StoredPart:
    data: bytes
    content_type: str  # the media type of decoded bytes (image/png ...), or PART_JSON

    @property
    def is_media(self) -> bool:
        return self.content_type != PART_JSON


def stored_part(part: Any) -> StoredPart:
    """The bytes to keep for ``part``: a data URL's or base64 source's decoded bytes, else the part's JSON."""
    media = _inline_media(part)
    if media is not None:
        return media
    return StoredPart(json.dumps(part, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"), PART_JSON)


def _inline_media(part: Any) -> StoredPart | None:
    if not isinstance(part, dict):
        return None
    source = part.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        media_type, data = source.get("media_type"), source.get("data")
        if isinstance(media_type, str) and isinstance(data, str):
            return _decoded(media_type, data)
        return None
    url = part.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if not isinstance(url, str):
        return None
    match = _DATA_URL.match(url)
    if match is None:
        return None
    return _decoded(match.group(1), url[match.end() :])


def _decoded(media_type: str, data: str) -> StoredPart | None:
    try:
        raw = base64.b64decode(data.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None  # not clean base64: kept as the part's JSON, exactly as it was
    if base64.b64encode(raw).decode("ascii") != data.strip():
        return None  # would not round-trip (padding, line breaks): the JSON keeps it exact
    return StoredPart(raw, media_type.lower())


def part_placeholder(handle: str, stored: StoredPart) -> str:
    """What the model sees instead of the part: that it was removed, its handle, and how to read it."""
    head = IMAGE_PLACEHOLDER[:-1]  # "[stowage: image removed from older context"
    if stored.is_media:
        what = f"{stored.content_type}, {len(stored.data):,} bytes"
        how = "returns it as a base64 data URL"
    else:
        what = f"the message part as JSON, {len(stored.data):,} bytes"
        how = "returns it"
    return f'{head}; stored under handle {handle} ({what}): stowage_fetch(handle="{handle}", mode="full") {how}]'


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64," + base64.b64encode(data).decode("ascii")
