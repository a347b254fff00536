"""``stowage_grep`` finds an early output of a long session, in the real host.

The session's first turn spills a tool output; then more than a thousand
later outputs are stored through the engine's own spill path (a long session,
without driving a thousand model calls); the scripted model then searches for
the early output's last line with ``stowage_grep``, following ``next_cursor``
while the reply has one.  It must come back with the early output's handle,
and the counts must add up to everything the session stored.
"""

from __future__ import annotations

import json
import re

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import stowage_home

pytestmark = pytest.mark.e2e

HANDLE = re.compile(r"handle: ([0-9a-f]{16,64})")
LATER = 620
FILL = f"""
import json
for i in range({LATER}):
    text = "".join(f"later output {{i}} line {{j}}\\n" for j in range(60))
    assert engine.spill_tool_result("terminal", json.dumps({{"command": f"step {{i}}"}}), text).text is not None
result = engine.state.store.spills
"""


def test_an_early_output_of_a_long_session_is_found_by_stowage_grep(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 200}}})
    fake_llm.on(
        Match.user_turn("EARLY"),
        Reply.tool(ToolCall("harness_big_output", {"chars": 3000, "token": "EARLYBUG"}, id="call_early")),
    )
    fake_llm.on(Match.after_tool_result("call_early"), Reply.say("noted"))
    fake_llm.on(
        Match.user_turn("FIND"),
        Reply.tool(ToolCall("stowage_grep", {"pattern": "END-EARLYBUG", "literal": True}, id="call_grep_0")),
    )
    for page in range(7):  # the harness's iteration budget per turn is 8

        def next_page(request, page=page):
            reply = json.loads(request.tool_results[f"call_grep_{page}"])
            if not reply.get("next_cursor"):
                return Reply.say("found it")
            args = {"pattern": "END-EARLYBUG", "literal": True, "cursor": reply["next_cursor"]}
            return Reply.tool(ToolCall("stowage_grep", args, id=f"call_grep_{page + 1}"))

        fake_llm.on(Match.after_tool_result(f"call_grep_{page}"), next_page)

    scenario = Scenario().turn("EARLY output please", id="early").python(FILL, id="fill").turn("FIND it", id="find")
    result = run_scenario(home, scenario, check=True)

    preview = fake_llm.matching(Match.after_tool_result("call_early"))[0].tool_results["call_early"]
    early_handle = HANDLE.findall(preview)[0]
    assert result.step("fill")["result"] == LATER + 1
    final = fake_llm.last_main_request()
    replies = [
        json.loads(text) for call_id, text in sorted(final.tool_results.items()) if call_id.startswith("call_grep")
    ]
    assert replies and all("error" not in r for r in replies)
    found = {hit["handle"] for r in replies for hit in r["results"]}
    assert early_handle in found, [(r["searched"], r["of"]) for r in replies]
    last = replies[-1]
    assert last["remaining"] == 0 and "next_cursor" not in last
    assert last.get("searched_before", 0) + last["searched"] == last["of"] > LATER  # every stored item searched
    assert sum(r["searched"] for r in replies) >= last["of"]
