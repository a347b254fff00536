"""A long agent turn crosses the trigger in its middle: the summary is prepared during the turn, which does not wait.

One user turn runs ``ROUNDS`` tool rounds; the main model takes
``MAIN_DELAY`` seconds a call and reports a request that grows towards the
trigger and past it; the summary model takes ``SUMMARY_DELAY`` seconds.
Stowage measures the pace on the request path (the ``pre_api_request``
hook), starts the summary in the middle of the turn, and compacts once it is
ready: one summary request on the wire, sent during the turn, used by the
compaction, whose ``compress()`` took far less than the model's delay.
"""

from __future__ import annotations

import json
import re

import pytest

from stowage.command.live import session_rows
from stowage.context_engine.config.schema import KEYS_BY_PATH
from stowage.context_engine.records.session_status import SessionStatus
from stowage_dev.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import MID_TURN, assert_valid_request, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

# ``python3 run.py hosts`` runs this module on every host of the matrix (the full suite on 0.19.0)

SUMMARY_DELAY = 8.0  # seconds the summary model takes
MAIN_DELAY = 1.0  # seconds the main model takes a call
ROUNDS = 30  # tool rounds of the long turn
TRIGGER = int(128_000 * KEYS_BY_PATH["view.compact_at"].default)  # view.compact_at of the 128k window
SUMMARY = (
    "## Goal\nFinish the long task (SUMMARY-MID-TURN).\n\n## Progress\n### Done\n- rounds\n\n## Next Steps\n- go on"
)
ROUND_ID = re.compile(r"call_long_(\d+)")


def rounds_done(request: RecordedRequest) -> int:
    """The long turn's rounds the request shows (the newest call's number + 1; older ones may be compacted)."""
    return max((int(n) + 1 for n in ROUND_ID.findall(json.dumps(request.tool_calls))), default=0)


def long_turn(request: RecordedRequest) -> Reply:
    """The next tool round (or the final answer); the reported request grows 1.2% of the trigger a round."""
    done = rounds_done(request)
    if done >= ROUNDS:
        return Reply.say("LONG finished", delay=MAIN_DELAY)
    tokens = int(TRIGGER * (0.80 + 0.012 * done))  # the band (90%) at round 9, the trigger at round 17
    return Reply.tool(
        ToolCall("harness_echo", {"text": f"round {done}"}, id=f"call_long_{done}"),
        usage={"prompt_tokens": tokens},
        delay=MAIN_DELAY,
    )


@pytest.mark.skipif(not MID_TURN, reason="0.13.0: the pre_api_request hook carries no history")
def test_a_long_turn_compacts_with_the_summary_prepared_during_it(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"compaction": {"summary_timeout_seconds": 60}}})
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY, delay=SUMMARY_DELAY), times=None)
    script_warm_up(fake_llm, 5)
    in_long_turn = Match.main() & Match.where(lambda r: "LONG" in r.last_user_text or rounds_done(r) > 0, "long turn")
    fake_llm.on(in_long_turn, long_turn, times=None)

    scenario = warm_up(Scenario(agent={"max_iterations": ROUNDS + 5}), 5).turn(
        "LONG task: work through all the rounds", id="long"
    )
    result = run_scenario(home, scenario, check=True, timeout=400)  # ~70 s of scripted delays; busy machines

    long = result.step("long")
    status = long["engine"]["status"]
    compactions = [c for c in status["compactions"] if c["result"] in ("compacted", "fallback")]
    print(
        "mid-turn e2e: "
        + ", ".join(f"compaction summary {c['summary_source']!r}, compress() {c['wait_s']} s" for c in compactions)
        + f"; long turn {long['duration_s']} s, summary model {SUMMARY_DELAY} s, main model {MAIN_DELAY} s a call; "
        f"ahead {status['ahead']}"
    )
    (compaction,) = compactions
    assert compaction["result"] == "compacted" and compaction["summary_source"] == "prepared"
    # the host's compress() call took the ready reply: far less than one summary call (a call would be >= 8 s)
    assert compaction["wait_s"] is not None and compaction["wait_s"] < SUMMARY_DELAY / 4
    assert status["ahead"]["prepared"] == 1 and status["ahead"]["used"] == 1 and status["ahead"]["wasted"] == 0
    served = dict(session_rows(SessionStatus.from_dict(status)))["compactions served"]
    # what `stowage status` prints
    assert served.startswith("model summary (written ahead), waited ") and "wasted" not in served

    (summary_call,) = fake_llm.summary_requests()  # never twice for the same window
    long_requests = result.step_requests(fake_llm, "long")
    assert long_requests[0].index < summary_call.index  # prepared during the long turn, not at a turn end
    compacted = [r for r in fake_llm.main_requests() if "SUMMARY-MID-TURN" in r.text]
    assert compacted and compacted[0].index > summary_call.index
    first_after = compacted[0]
    assert 0 < rounds_done(first_after) < ROUNDS  # the compaction came in the middle of the turn
    for request in compacted:
        assert_valid_request(request)
    assert rounds_done(fake_llm.last_main_request()) == ROUNDS  # the turn went on to its end after it
