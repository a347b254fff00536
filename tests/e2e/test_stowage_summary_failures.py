"""The summary model fails: nothing is lost silently, the session goes on.

HTTP 500, a timeout, an empty reply and garbage give the deterministic
fallback summary (built from the history itself, quoting the newest request)
plus the host's visible warning; a 401 aborts the compaction and keeps the
messages unchanged.  After a failure the summary model cools down.
"""

from __future__ import annotations

import json

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e


def _run_failing_compaction(fake_llm: FakeLLMServer, make_home, reply: Reply):
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), reply, times=None)
    scenario = warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after BIG", id="after")
    return run_scenario(home, scenario, check=True)


@pytest.mark.parametrize(
    "reply,kind",
    [
        (Reply.http_error(500, "upstream exploded"), "http"),
        (Reply.timeout(8), "timeout"),
        (Reply.empty(), "empty"),
        (Reply.say("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), "garbage"),
    ],
    ids=["http500", "timeout", "empty", "garbage"],
)
def test_summary_failure_falls_back_without_losing_context(
    fake_llm: FakeLLMServer, make_home, reply: Reply, kind: str
) -> None:
    result = _run_failing_compaction(fake_llm, make_home, reply)

    assert fake_llm.summary_requests(), "the summary model was asked"
    big = result.step("big")["engine"]
    assert big["compression_count"] == 1
    last = big["status"]["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith(kind), last
    assert big["status"]["governor"]["summary_failures"] == 1
    assert big["status"]["governor"]["summary_cooldown_seconds"] > 0

    follow_up = fake_llm.main_requests()[-2]  # the request after the BIG tool call
    summary = next(m for m in follow_up.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m))
    text = json.dumps(summary)
    assert "without the summary model" in text and "BIG now" in text
    assert "harness_big_output" in text  # the actions of the summarized turns are listed
    assert_valid_request(follow_up)
    assert any("Compression summary failed" in w for w in result.warnings()), result.warnings()
    assert result.step("after")["final_response"] == "OK (default reply)"


def test_summary_auth_failure_aborts_and_keeps_every_message(fake_llm: FakeLLMServer, make_home) -> None:
    result = _run_failing_compaction(fake_llm, make_home, Reply.http_error(401, "invalid api key"))

    big = result.step("big")
    assert big["engine"]["compression_count"] == 0
    assert big["engine"]["status"]["last_compaction"]["result"] == "aborted"
    assert any("Compression aborted" in w and "No messages were dropped" in w for w in result.warnings())
    texts = json.dumps(big["messages"])
    for i in range(5):
        assert f"END-WARM{i}" in texts  # every big output is still there, unpruned
    assert "STOWAGE CONTEXT SUMMARY" not in texts
    assert_valid_request(fake_llm.last_main_request())
