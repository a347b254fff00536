"""The lean request view through the real host: what each request carries, and what it costs.

Warm-up turns each run the probe's ``harness_big_output`` (about 4k tokens).
With a small hot zone the older outputs reach the model as one-line stubs
with handles, while the session's own history keeps them whole; a stub read
back with ``stowage_fetch`` stays verbatim afterwards; requests between two
steps extend each other byte for byte; and a history whose full size is over
the working budget but whose request as sent is not makes no summary.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

VIEW = {"view": {"hot_tokens": 1000, "step_tokens": 6000, "pin_turns": 4}}
STUB_HANDLE = re.compile(r'stowage_fetch\(handle="([0-9a-f]{16,64})"\)')


def _tool_contents(request: Any) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.messages if m.get("role") == "tool"}


def test_old_outputs_are_stubs_in_requests_while_the_history_keeps_them(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": VIEW})
    script_warm_up(fake_llm, 8)
    result = run_scenario(
        home,
        warm_up(Scenario(), 8, secret_turn=None).python("result = engine.get_status()['view']", id="status"),
        check=True,
    )

    last = _tool_contents(fake_llm.last_main_request())
    stubs = {cid: text for cid, text in last.items() if text.startswith(VIEW_STUB_PREFIX)}
    assert len(stubs) >= 4 and "call_warm_7" not in stubs  # old ones stubbed, the newest verbatim
    history = {m["tool_call_id"]: m["content"] for m in result.step("status")["messages"] if m.get("role") == "tool"}
    for cid, stub in stubs.items():
        assert len(history[cid]) > 10_000 and not history[cid].startswith(VIEW_STUB_PREFIX)
        assert stub.startswith(f"{VIEW_STUB_PREFIX} harness_big_output -> ") and STUB_HANDLE.search(stub)
    status = result.step("status")["result"]
    assert status["tokens_saved"] > 0 and status["last_request"]["stubbed_outputs"] == len(stubs)
    for request in fake_llm.main_requests():
        assert_valid_request(request)

    # Between steps each request extends the previous one byte for byte; a step breaks it only at a stub.
    requests = fake_llm.main_requests()
    extended = broken = 0
    for before, after in zip(requests, requests[1:], strict=False):
        if after.messages[: len(before.messages)] == before.messages:
            extended += 1
        else:
            broken += 1
            first = next(i for i, (a, b) in enumerate(zip(before.messages, after.messages, strict=False)) if a != b)
            assert after.messages[first]["content"].startswith(VIEW_STUB_PREFIX)
    assert extended >= 8 and 1 <= broken <= status["steps"]

    # What the session did is visible to `stowage status` (another process) from the store folder.
    from stowage.command.env import Env
    from stowage.command.status import status as cli_status

    shown = cli_status(Env.resolve(home.path, None))
    (session,) = shown.data["sessions"]  # a fresh home: this session only
    assert session["view"]["tokens_saved"] >= status["tokens_saved"] > 0
    assert "recent sessions" in shown.text and f"{session['view']['tokens_saved']:,} tokens saved" in shown.text


def test_a_stub_read_back_by_handle_stays_verbatim_afterwards(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": VIEW})
    script_warm_up(fake_llm, 6)

    def fetch_the_oldest(request: Any) -> Reply:  # the model reads the handle off a stub it sees
        stub = _tool_contents(request)["call_warm_0"]
        handle = STUB_HANDLE.search(stub).group(1)
        return Reply.tool(
            ToolCall("stowage_fetch", {"handle": handle, "mode": "range", "start": 1, "count": 40}, id="call_fetch")
        )

    fake_llm.on(Match.user_turn("READ"), fetch_the_oldest)
    fake_llm.on(Match.after_tool_result("call_fetch"), Reply.say("read it"))
    script_warm_up(fake_llm, 2, prefix="LATER")

    scenario = warm_up(Scenario(), 6, secret_turn=None).turn("READ the first output again", id="read")
    warm_up(scenario, 2, prefix="LATER", secret_turn=None)
    run_scenario(home, scenario, check=True)

    fetched = json.loads(_tool_contents(fake_llm.matching(Match.after_tool_result("call_fetch"))[0])["call_fetch"])
    assert (
        fetched["text"].splitlines()[0].lstrip().startswith("1| line 000000")
    )  # the stub's handle reads the stored output
    later = fake_llm.main_requests()[-4:]  # the LATER turns: older outputs are stubs, the read-back is not
    assert all(_tool_contents(r)["call_warm_1"].startswith(VIEW_STUB_PREFIX) for r in later)
    assert all(json.loads(_tool_contents(r)["call_fetch"]) == fetched for r in later)


def _budget_session(fake_llm: FakeLLMServer, make_home, view: dict[str, Any]) -> dict[str, Any]:
    # 16 outputs of ~4k tokens: the whole history (~64k) passes a 0.4 x 128k budget, the lean request does not.
    home = stowage_home(make_home, config={"stowage": {"compaction": {"threshold": 0.4}, "view": view}})
    script_warm_up(fake_llm, 16)
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nInspect outputs.\n\n## Next Steps\n- more"), times=None)
    result = run_scenario(
        home, warm_up(Scenario(), 16, secret_turn=None).python("result = engine.get_status()", id="status"), check=True
    )
    return result.step("status")["result"]


def test_the_host_preflight_makes_no_summary_while_the_sent_request_fits(fake_llm: FakeLLMServer, make_home) -> None:
    status = _budget_session(fake_llm, make_home, {**VIEW["view"], "compact_at": 0.4})
    assert status["compression_count"] == 0 and fake_llm.matching(Match.summary_request()) == []
    assert max(len(r.raw_body) // 4 for r in fake_llm.main_requests()) < status["threshold_tokens"]  # as sent


@pytest.fixture(scope="module")
def view_off_session(shared_llm: FakeLLMServer, shared_home) -> tuple[FakeLLMServer, dict[str, Any]]:
    """The budget session with the view off, run once: read by the two checks below."""
    return shared_llm, _budget_session(shared_llm, shared_home, {"enabled": False})


def test_with_the_view_off_requests_carry_every_output(view_off_session: tuple[FakeLLMServer, dict[str, Any]]) -> None:
    llm, _ = view_off_session
    # after the sixth output (~24k tokens, far below the 0.4 x 128k trigger): every output whole
    (sixth,) = llm.matching(Match.after_tool_result("call_warm_5"))
    outputs = _tool_contents(sixth)
    assert len(outputs) == 6 and all(len(text) > 10_000 for text in outputs.values())


def test_without_the_view_the_same_session_needs_a_summary(
    view_off_session: tuple[FakeLLMServer, dict[str, Any]],
) -> None:
    llm, status = view_off_session
    assert status["compression_count"] >= 1 and llm.matching(Match.summary_request())


QUOTED_LINE = "line 000007: the quick brown fox jumps over the lazy dog"  # first seen in the first output


def _quoting_session(fake_llm: FakeLLMServer, make_home, view: dict[str, Any]) -> Any:
    """Six turns of big outputs; every answer quotes a line the first output showed (the agent works with it)."""
    home = stowage_home(make_home, config={"stowage": {"view": {**VIEW["view"], **view}}})
    for i in range(6):
        call_id = f"call_warm_{i}"
        fake_llm.on(
            Match.user_turn(f"WARM-{i} "),
            Reply.tool(ToolCall("harness_big_output", {"chars": 16_000, "token": f"WARM{i}"}, id=call_id)),
        )
        fake_llm.on(Match.after_tool_result(call_id), Reply.say(f"warm {i} done; still relevant:\n{QUOTED_LINE}"))
    run_scenario(home, warm_up(Scenario(), 6, secret_turn=None), check=True)
    return _tool_contents(fake_llm.last_main_request())


def test_an_output_the_agent_keeps_quoting_stays_verbatim_while_older_ones_become_stubs(
    fake_llm: FakeLLMServer, make_home
) -> None:
    last = _quoting_session(fake_llm, make_home, {})
    assert QUOTED_LINE in last["call_warm_0"] and not last["call_warm_0"].startswith(VIEW_STUB_PREFIX)
    stubbed = [cid for cid, text in last.items() if text.startswith(VIEW_STUB_PREFIX)]
    assert {"call_warm_1", "call_warm_2"} <= set(stubbed)  # younger, never quoted: stubs
    for request in fake_llm.main_requests():
        assert_valid_request(request)


def test_without_quote_pins_the_quoted_output_is_stubbed_like_the_others(fake_llm: FakeLLMServer, make_home) -> None:
    last = _quoting_session(fake_llm, make_home, {"pin_quoted": False})
    assert last["call_warm_0"].startswith(VIEW_STUB_PREFIX)


PREVIEW_HANDLE = re.compile(r"^handle: ([0-9a-f]{16,64})$", re.MULTILINE)  # a preview's first one is the original's


def test_a_stub_of_a_spilled_output_fetches_the_original_in_one_call(fake_llm: FakeLLMServer, make_home) -> None:
    """The stub of a spill preview names the spilled output, not the preview: one fetch reads a line only it holds."""
    home = stowage_home(make_home, config={"stowage": {**VIEW, "spill": {"threshold_tokens": 20_000}}})
    fake_llm.on(
        Match.user_turn("SPILL"),
        Reply.tool(ToolCall("harness_big_output", {"chars": 200_000, "token": "SPILL"}, id="call_spill")),
    )
    fake_llm.on(Match.after_tool_result("call_spill"), Reply.say("spill inspected"))
    script_warm_up(fake_llm, 5)

    def fetch_the_middle(request: Any) -> Reply:  # the model reads the handle off the stub it sees
        handle = STUB_HANDLE.search(_tool_contents(request)["call_spill"]).group(1)
        return Reply.tool(
            ToolCall("stowage_fetch", {"handle": handle, "mode": "range", "start": 2000, "count": 1}, id="call_fetch")
        )

    fake_llm.on(Match.user_turn("READ"), fetch_the_middle)
    fake_llm.on(Match.after_tool_result("call_fetch"), Reply.say("read it"))
    scenario = Scenario().turn("SPILL a big output", id="spill")
    run_scenario(home, warm_up(scenario, 5, secret_turn=None).turn("READ the spilled output again"), check=True)

    preview = _tool_contents(fake_llm.matching(Match.after_tool_result("call_spill"))[0])["call_spill"]
    original_handle = PREVIEW_HANDLE.search(preview).group(1)
    assert "line 001999" not in preview  # the middle of the output is not in the preview
    (read,) = fake_llm.matching(Match.user_turn("READ"))
    stub = _tool_contents(read)["call_spill"]
    assert stub.startswith(f"{VIEW_STUB_PREFIX} harness_big_output -> ") and "\n" not in stub
    assert STUB_HANDLE.findall(stub) == [original_handle]  # the original's handle, not the stored preview's
    fetched = json.loads(_tool_contents(fake_llm.matching(Match.after_tool_result("call_fetch"))[0])["call_fetch"])
    assert fetched["text"].splitlines()[0].lstrip().startswith("2000| line 001999")  # one fetch: the original's line
