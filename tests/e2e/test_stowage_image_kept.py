"""An image in the session's first message survives compaction in the store, in the real host.

The conversation opens with a user message holding a chart as an inline PNG;
warm-up turns and a turn over the threshold make Hermes compact.  The first
request keeps its text but the image leaves the context, replaced by a
placeholder naming its handle; the scripted model reads that handle from the
next request and calls ``stowage_fetch`` in mode ``full``: the reply is the
same data URL, byte for byte.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes((i * 53) % 256 for i in range(6000))
URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
HANDLE = re.compile(r"image removed from older context; stored under handle ([0-9a-f]{16,64})")
OPENING = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "CHART: here is the latency chart of the service"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    },
    {"role": "assistant", "content": "The chart shows p99 latency doubling after the deploy."},
]


def test_an_early_image_removed_by_compaction_is_fetched_back_by_its_handle(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"model": {"supports_vision": True}})  # Hermes sends images as parts
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nExplain the latency chart."))

    def fetch_image(request):
        (handle,) = HANDLE.findall(request.text)
        return Reply.tool(ToolCall("stowage_fetch", {"handle": handle, "mode": "full"}, id="call_image"))

    fake_llm.on(Match.user_turn("LOOK"), fetch_image)
    fake_llm.on(Match.after_tool_result("call_image"), Reply.say("same chart"))
    scenario = (
        warm_up(Scenario().set_history(OPENING), 5, secret_turn=None)
        .turn("BIG now", id="big")
        .turn("LOOK at the chart again", id="look")
    )
    result = run_scenario(home, scenario, check=True)

    assert result.step("big")["engine"]["compression_count"] == 1
    first = fake_llm.matching(Match.user_turn("WARM-0"))[0]
    assert URL in json.dumps(first.messages)  # before compaction the image was sent inline
    look = fake_llm.matching(Match.user_turn("LOOK"))[0]
    assert URL not in json.dumps(look.messages) and "CHART: here is the latency chart" in look.text
    (handle,) = HANDLE.findall(look.text)
    fetched = json.loads(fake_llm.last_main_request().tool_results["call_image"])
    assert fetched == {
        "handle": handle,
        "mode": "full",
        "media_type": "image/png",
        "encoding": "base64",
        "bytes": len(PNG),
        "data_url": URL,
    }


WINDOW_IMAGE = re.compile(r"image\(s\) are stored on their own[^:]*: ([0-9a-f]{16,64}) \(image/png")
LATER_CHART = [
    {"role": "user", "content": "We are reviewing the service's latency."},
    {"role": "assistant", "content": "Understood, send the material."},
    {"role": "user", "content": "First the deploy log: nothing unusual."},
    {"role": "assistant", "content": "Noted, the deploy log is clean."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "CHART: here is the latency chart of the service"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    },
    {"role": "assistant", "content": "The chart shows p99 latency doubling after the deploy."},
]


def test_an_image_inside_the_summarized_window_is_fetched_whole_as_an_image(fake_llm: FakeLLMServer, make_home) -> None:
    """The image sits in the window the summary replaces: the summary's reference names its own handle."""
    home = stowage_home(make_home, config={"model": {"supports_vision": True}})
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nExplain the latency chart."))

    def fetch_image(request):
        (handle,) = WINDOW_IMAGE.findall(request.text)
        return Reply.tool(ToolCall("stowage_fetch", {"handle": handle, "mode": "full"}, id="call_image"))

    fake_llm.on(Match.user_turn("LOOK"), fetch_image)
    fake_llm.on(Match.after_tool_result("call_image"), Reply.say("same chart"))
    scenario = (
        warm_up(Scenario().set_history(LATER_CHART), 5, secret_turn=None)
        .turn("BIG now", id="big")
        .turn("LOOK at the chart again", id="look")
    )
    result = run_scenario(home, scenario, check=True)

    assert result.step("big")["engine"]["compression_count"] == 1
    look = fake_llm.matching(Match.user_turn("LOOK"))[0]
    assert URL not in json.dumps(look.messages)
    (handle,) = WINDOW_IMAGE.findall(look.text)
    fetched = json.loads(fake_llm.last_main_request().tool_results["call_image"])
    assert fetched["media_type"] == "image/png" and fetched["data_url"] == URL and fetched["handle"] == handle
