"""Lossless: spilled, pruned and summarized content stays reachable, in the real host.

A real plugin tool returns a large output; the next model request carries
the preview and handle, not the output; the scripted model then calls
``stowage_fetch`` and ``stowage_grep`` (engine tools dispatched by Hermes) and
gets the right slices.  After a compaction, every pruned output and the
summarized window are read back through their handles and compared byte for
byte with what the session held before.
"""

from __future__ import annotations

import json
import re

import pytest

from stowage.blobstore import BlobStore
from stowage.context_engine.chat.markers import STORED_PREFIX
from stowage.context_engine.store_session.archive import decode_window
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .compacted_session import CompactedSession
from .stowage_session import OUTPUT_CHARS, stowage_home

pytestmark = pytest.mark.e2e

HANDLE = re.compile(r"handle:? ([0-9a-f]{16,64})")
STUB_HANDLE = re.compile(r'stowage_fetch\(handle="([0-9a-f]{16,64})"\)')  # how every stub names its handle
BIG_CHARS = 200_000


def _handles(text: str) -> list[str]:
    return HANDLE.findall(text)


def test_large_output_is_spilled_and_read_back_with_the_agent_tools(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 4000}}})
    fake_llm.on(
        Match.user_turn("SPILL"),
        Reply.tool(ToolCall("harness_big_output", {"chars": BIG_CHARS, "token": "SPILL"}, id="call_big")),
    )

    def fetch_reply(request):
        handle = _handles(request.tool_results["call_big"])[0]
        return Reply.tool(
            ToolCall("stowage_fetch", {"handle": handle, "mode": "range", "start": 2000, "count": 3}, id="call_fetch"),
            ToolCall("stowage_fetch", {"handle": handle, "mode": "grep", "pattern": "END-SPILL"}, id="call_grep_blob"),
            ToolCall("stowage_grep", {"pattern": "line 0017[0-9]{2}", "max_results": 3}, id="call_history"),
            ToolCall("stowage_fetch", {"handle": "../../etc/passwd"}, id="call_bad"),
        )

    fake_llm.on(Match.after_tool_result("call_big"), fetch_reply)
    fake_llm.on(Match.after_tool_result("call_bad"), Reply.say("read it"))

    result = run_scenario(home, Scenario().turn("SPILL it", id="spill"), check=True)

    after_tool = fake_llm.matching(Match.after_tool_result("call_big"))[0]
    preview = after_tool.tool_results["call_big"]
    assert preview.startswith("[stowage: preview of a large tool output — this is NOT the whole output]")
    assert len(preview) < 4000 and f"{BIG_CHARS:,} chars" in preview
    assert "END-SPILL" in preview  # the tail is part of the preview
    assert len(after_tool.text) < BIG_CHARS  # the output itself never reached the model

    final = fake_llm.last_main_request()
    fetched = json.loads(final.tool_results["call_fetch"])
    assert fetched["start"] == 2000 and fetched["end"] == 2002
    assert fetched["text"].splitlines()[0].startswith("2000| line 001999")
    grepped = json.loads(final.tool_results["call_grep_blob"])
    assert grepped["matches"] == 1 and "END-SPILL" in grepped["text"]
    history = json.loads(final.tool_results["call_history"])
    assert history["results"] and history["results"][0]["kind"] == "spill"
    assert "line 0017" in history["results"][0]["text"]
    bad = json.loads(final.tool_results["call_bad"])
    assert "looks like a file path" in bad["error"]
    store_status = result.step("spill")["engine"]["status"]["store"]
    assert store_status["spills"] == 1 and store_status["tool_calls"] == 4


def test_after_compaction_every_pruned_output_and_the_window_are_recoverable(
    compacted_session: CompactedSession,
) -> None:
    """The shared session of ``compacted_session.py``: its history before the compacting turn against after it."""
    result, home = compacted_session.result, compacted_session.home
    before = result.step("before")["result"]  # the session's messages before the compacting turn
    after = result.step("big")["messages"]
    assert result.step("big")["engine"]["compression_count"] == 1
    store = BlobStore(home.path / "stowage")
    originals = {m["tool_call_id"]: m["content"] for m in before if m.get("role") == "tool"}
    assert len(originals) == 5 and all(len(text) >= OUTPUT_CHARS for text in originals.values())

    summary = next(m for m in after if "STOWAGE CONTEXT SUMMARY" in json.dumps(m))
    summary_text = summary["content"] if isinstance(summary["content"], str) else json.dumps(summary["content"])
    (window_handle,) = _handles(summary_text)
    window = decode_window(store.read_bytes(store.resolve(window_handle)))
    start = before.index(window[0])
    assert window == before[start : start + len(window)]  # the whole window, byte for byte, in order

    recovered: dict[str, str] = {}
    for message in after:
        if message.get("role") == "tool" and message["content"].startswith(STORED_PREFIX):
            (handle,) = STUB_HANDLE.findall(message["content"])
            recovered[message["tool_call_id"]] = store.read_bytes(store.resolve(handle)).decode("utf-8")
    assert recovered, "outputs pruned outside the window carry handles"
    in_window = {m["tool_call_id"]: m["content"] for m in window if m.get("role") == "tool"}
    verbatim = {
        m["tool_call_id"]: m["content"]
        for m in after
        if m.get("role") == "tool" and m["content"] == originals.get(m["tool_call_id"])
    }
    for call_id, original in originals.items():
        copies = [text for text in (recovered.get(call_id), in_window.get(call_id), verbatim.get(call_id)) if text]
        assert copies and all(text == original for text in copies), f"{call_id} is not recoverable"
    assert len(verbatim) < len(originals), "compaction removed outputs from the window"
