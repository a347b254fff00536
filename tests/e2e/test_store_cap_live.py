"""The store's size cap holds against a live session, in the real host.

A session whose turn runs eight tools returning 300 KB each (2.4 MB) into a
store capped at 1 MiB: Hermes drives the requests through the plugin's
``llm_request`` middleware, each request tells the store what it shows and
points to, and the cap evicts everything else, the live session's own older
outputs included.  The last request points only to readable blobs, the
store ends near its cap, and the session's status says what was tombstoned.

A view stub names a spilled output's original bytes, but the cap spares only
the small preview for it: the turn's last output, spilled after the last
request, may evict such an original.  Its preview then stays readable (the
next request's stub names it, ``tests/context_engine/test_store_pins.py``).
"""

from __future__ import annotations

import re

import pytest

from stowage.blobstore import BlobStore, EvictedBlobError
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import stowage_home

pytestmark = pytest.mark.e2e

CALLS, CHARS, MIB = 8, 300_000, 1 << 20  # 8: the harness's iteration budget per turn
HANDLE = re.compile(r"handle[\s:=\"']{1,3}([0-9a-f]{16,64})")


def test_a_turn_that_spills_past_the_cap_keeps_the_store_near_it(fake_llm: FakeLLMServer, make_home) -> None:
    # A small hot zone: older previews become one-line stubs, so the request stops pointing to their outputs.
    home = stowage_home(
        make_home,
        config={
            "stowage": {
                "spill": {"threshold_tokens": 4000},
                "view": {"hot_tokens": 1000, "step_tokens": 500},
                "store": {"max_store_mb": 1},
            }
        },
    )
    fake_llm.on(
        Match.user_turn("FLOOD"),
        Reply.tool(ToolCall("harness_big_output", {"chars": CHARS, "token": "F0"}, id="call_0")),
    )
    for i in range(1, CALLS):
        fake_llm.on(
            Match.after_tool_result(f"call_{i - 1}"),
            Reply.tool(ToolCall("harness_big_output", {"chars": CHARS, "token": f"F{i}"}, id=f"call_{i}")),
        )
    fake_llm.on(Match.after_tool_result(f"call_{CALLS - 1}"), Reply.say("all read"))

    result = run_scenario(home, Scenario().turn("FLOOD the store", id="flood"), check=True)

    final = fake_llm.last_main_request()
    named = set(HANDLE.findall(final.text))
    assert named, final.text[-2000:]
    store = BlobStore(home.path / "stowage")
    previews = store.list_blobs(kind="preview", limit=1000)
    pointed = 0
    for handle in named:
        try:
            pointed += store.stat(store.resolve(handle)).size
        except EvictedBlobError as exc:  # only a stub named it: evicted by the spill after the last request
            assert exc.tombstone.reason == "size-cap"
            assert f"handle: {handle}" not in final.text  # not shown by a verbatim preview
            assert re.search(rf'\[stowage: output omitted\][^\n]*stowage_fetch\(handle="{handle}"\)', final.text)
            assert any(f"handle: {handle}".encode() in store.read_bytes(b.sha256) for b in previews)  # its preview
    stats = store.stats()
    assert stats["tombstones_by_reason"].get("size-cap", 0) >= 1
    assert stats["total_bytes"] <= MIB + pointed + CHARS  # the cap, what the request points to, one output
    status = result.step("flood")["engine"]["status"]["store"]
    assert status["spills"] == CALLS and status["cap_evicted"]["blobs"] >= 1
