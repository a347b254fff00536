"""The dashboard's blob read is bounded in bytes, not only in lines.

The attack: ``GET /blobs/{handle}?count=1`` returned a one-line 8 MB blob
whole.  The route is served here by FastAPI exactly as the Hermes dashboard
mounts it (the plugin file loaded on its own, as Hermes loads it); a read
now stops at ``MAX_TEXT_BYTES`` with a marker and the offset to continue
from, and continuing from there walks the whole line without a gap.
"""

from __future__ import annotations

import importlib.util

import pytest

from stowage.blobstore import BlobStore
from stowage_dev.hermes_home import _user_plugin_installer

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

pytestmark = pytest.mark.reliability


@pytest.fixture
def client(tmp_path, monkeypatch):
    home = tmp_path / "hermes"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    plugin = _user_plugin_installer().install(home, link=True)  # the route Hermes's dashboard scans
    spec = importlib.util.spec_from_file_location(
        "stowage_dashboard_api_under_test", plugin / "dashboard" / "plugin_api.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = fastapi.FastAPI()
    app.include_router(module.router, prefix="/api/plugins/stowage")
    return TestClient(app), home / "stowage", module.MAX_TEXT_BYTES


def test_one_long_line_is_cut_with_the_offset_to_continue(client, figures):
    http, root, limit = client
    line = "".join(f"{i:07d}," for i in range(1_000_000))  # 8 MB, one line
    store = BlobStore(root)
    handle = store.put(line.encode() + b"\nsecond line\n", session_id="s", tool_name="t", kind="spill").handle
    store.close()
    answer = http.get(f"/api/plugins/stowage/blobs/{handle}", params={"start": 1, "count": 1})
    assert answer.status_code == 200
    body = answer.json()
    assert len(body["text"].encode()) <= limit + 200 and body["cut"] is True
    assert "cut at" in body["text"] and f"offset={body['next_offset']}" in body["text"]
    assert (body["next_start"], body["end"]) == (1, 1) and body["next_offset"] > 0
    read, reads, biggest = line[: body["next_offset"]], 1, len(answer.content)
    start, offset = body["next_start"], body["next_offset"]
    while start == 1:  # continuing walks the whole line, without a gap or an overlap
        answer = http.get(f"/api/plugins/stowage/blobs/{handle}", params={"start": start, "count": 1, "offset": offset})
        body, reads, biggest = answer.json(), reads + 1, max(biggest, len(answer.content))
        shown = body["text"].split("\n… cut at")[0] if body["cut"] else body["text"]
        read += shown
        start, offset = body["next_start"], body["next_offset"]
    assert read == line and start == 2
    assert http.get(f"/api/plugins/stowage/blobs/{handle}", params={"start": 2}).json()["text"] == "second line"
    figures.update(blob_bytes=len(line), reads=reads, biggest_reply_bytes=biggest, limit=limit)
    assert biggest <= limit + 1000


def test_many_short_lines_still_page_by_lines(client):
    http, root, _limit = client
    store = BlobStore(root)
    handle = store.put(b"".join(b"row %d\n" % i for i in range(1, 301)), session_id="s", tool_name="t").handle
    store.close()
    body = http.get(f"/api/plugins/stowage/blobs/{handle}", params={"start": 10, "count": 5}).json()
    assert body["text"] == "row 10\nrow 11\nrow 12\nrow 13\nrow 14" and body["cut"] is False
    assert (body["end"], body["next_start"], body["next_offset"]) == (14, 15, 0)
    assert http.get(f"/api/plugins/stowage/blobs/{handle}", params={"start": 999}).status_code == 400
    assert http.get(f"/api/plugins/stowage/blobs/{handle}", params={"offset": -1}).status_code == 422
