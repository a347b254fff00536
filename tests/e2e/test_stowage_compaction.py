"""Four-phase compaction inside the real host, offline.

The threshold crossing is the shared session of ``compacted_session.py``;
the other sessions script their own. Each session runs warm-up turns with real ~4k-token tool outputs, then a
turn whose tool-call response reports 100k prompt tokens (over the 96k
threshold of the 128k window), so the host's post-tool check asks Stowage to
compact before the follow-up request.
"""

from __future__ import annotations

import json

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply
from stowage_dev.runner import Scenario, run_scenario

from .compacted_session import CompactedSession
from .stowage_session import SECRET, assert_valid_request, script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

SUMMARY_1 = (
    "## Goal\nInspect the big outputs (SUMMARY-ONE).\n\n## Progress\n### Done\n- inspected outputs\n\n"
    "## Next Steps\n- continue"
)
SUMMARY_2 = (
    "## Goal\nInspect more outputs (SUMMARY-TWO).\n\n## Progress\n### Done\n- all outputs\n\n## Next Steps\n- report"
)


# -- the shared session that crossed the threshold once (compacted_session.py) ----------------------------


def test_the_summary_prompt_is_structured_and_never_carries_the_planted_secret(
    compacted_session: CompactedSession,
) -> None:
    (summary_call,) = compacted_session.llm.summary_requests()
    prompt = summary_call.messages[0]["content"]
    assert SECRET not in summary_call.text and "[REDACTED]" in prompt  # planted secret never left the process
    assert "## Goal" in prompt and "## Next Steps" in prompt and "WARM-1" in prompt
    assert "FOCUS TOPIC" not in prompt  # no focus unless /compress <focus>


def follow_up_of_the_summary(session: CompactedSession) -> RecordedRequest:
    (summary_call,) = session.llm.summary_requests()
    main = session.llm.main_requests()
    return main[[r.index for r in main].index(summary_call.index + 1)]


def test_the_next_request_carries_the_masked_summary_and_the_newest_turn(compacted_session: CompactedSession) -> None:
    follow_up = follow_up_of_the_summary(compacted_session)
    summary_message = next(m for m in follow_up.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m))
    assert "SUMMARY-ONE" in json.dumps(summary_message), summary_message
    assert SECRET not in json.dumps(summary_message)  # the reply echoed it; Stowage masked it
    assert "BIG now" in follow_up.text  # newest user turn kept verbatim


def test_the_requests_after_the_compaction_are_valid(compacted_session: CompactedSession) -> None:
    assert_valid_request(follow_up_of_the_summary(compacted_session))
    assert_valid_request(compacted_session.llm.last_main_request())


def test_the_engine_reports_one_compaction_and_the_session_goes_on(compacted_session: CompactedSession) -> None:
    result = compacted_session.result
    big = result.step("big")["engine"]
    assert big["compression_count"] == 1
    status = big["status"]
    assert status["engine"] == "stowage" and status["last_compaction"]["result"] == "compacted"
    assert status["last_compaction"]["pruned_outputs"] >= 1
    assert result.warnings() == []
    assert result.step("after")["final_response"] == "OK (default reply)"


# -- sessions of their own ---------------------------------------------------------------------------------


def test_manual_compress_focus_reaches_the_summary_prompt(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    fake_llm.on(Match.summary_request(contains='FOCUS TOPIC: "database migrations"'), Reply.say(SUMMARY_1))

    scenario = warm_up(Scenario(), 5).compress(focus="database migrations", id="manual").turn("next", id="next")
    result = run_scenario(home, scenario, check=True)

    manual = result.step("manual")
    assert manual["messages_after"] < manual["messages_before"]
    assert manual["engine"]["compression_count"] == 1
    (summary_call,) = fake_llm.summary_requests()
    assert "two thirds of the summary" in summary_call.text
    assert "SUMMARY-ONE" in fake_llm.last_main_request().text
    assert_valid_request(fake_llm.last_main_request())


def test_second_compaction_updates_the_first_summary(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_warm_up(fake_llm, 4, prefix="MORE")
    script_big_turn(fake_llm, "BIG1")
    script_big_turn(fake_llm, "BIG2")
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_1))
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_2))

    scenario = warm_up(Scenario(), 5).turn("BIG1 go", id="big1")
    warm_up(scenario, 4, prefix="MORE", secret_turn=None).turn("BIG2 go", id="big2")
    result = run_scenario(home, scenario, check=True)

    first, second = fake_llm.summary_requests()
    assert "PREVIOUS SUMMARY" not in first.text
    assert "PREVIOUS SUMMARY" in second.text and "SUMMARY-ONE" in second.text
    assert "NEW TURNS TO INCORPORATE" in second.text and "MORE-1" in second.text
    final = fake_llm.last_main_request()
    assert "SUMMARY-TWO" in final.text and "SUMMARY-ONE" not in final.text  # updated, not nested
    assert sum("STOWAGE CONTEXT SUMMARY" in json.dumps(m) for m in final.messages) == 1
    assert result.step("big2")["engine"]["compression_count"] == 2
    assert_valid_request(final)


def test_second_compaction_after_resume_finds_the_previous_summary(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_warm_up(fake_llm, 4, prefix="MORE")
    script_big_turn(fake_llm, "BIG1")
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_1))
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_2))

    first_run = run_scenario(home, warm_up(Scenario(), 5).turn("BIG1 go").end_session(), check=True)
    session_id = first_run.agents[0]["session_id"]
    resumed = warm_up(Scenario(resume_session=session_id), 4, prefix="MORE", secret_turn=None)
    resumed.compress(focus=None, id="again")
    result = run_scenario(home, resumed, check=True)

    assert result.engine["class"] == "StowageContextEngine"
    _, second = fake_llm.summary_requests()
    assert "PREVIOUS SUMMARY" in second.text and "SUMMARY-ONE" in second.text
    assert "SUMMARY-TWO" in json.dumps(result.step("again")["messages"])
