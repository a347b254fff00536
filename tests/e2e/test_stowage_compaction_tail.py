"""The verbatim tail a compaction keeps with the lean view on (``view.compact_tail_tokens``), through the real host.

Five warm-up turns each print a 16,000-character output (about 4,300
tokens); a turn reporting usage over the trigger compacts.  The same
scripted session runs twice, driven as the CLI drives it: with the tail at
0 the compaction keeps only the hot zone, so the history after it holds
none of the warm-up outputs whole (the newest turn is small; the outputs
are in the store); with a 10,000-token tail it holds the two newest whole,
and the summary prompt leaves them out.  The view still shapes the requests
after the compaction, but the history the host keeps is whole.
"""

from __future__ import annotations

from typing import Any

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.plugins.harness_probe import big_output
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e

WARM = 5
TAIL = 10_000  # tokens: two warm-up outputs (about 4,300 tokens each) and the turns around them, not three
SUMMARY = "## Goal\nInspect the warm-up outputs.\n\n## Progress\n### Done\n- inspected\n\n## Next Steps\n- go on"


def _compact(fake_llm: FakeLLMServer, make_home: Any, tail_tokens: int) -> tuple[dict[str, str], list[str]]:
    """The tool outputs of the history after the compaction, and the summary prompts sent."""
    home = stowage_home(make_home, config={"stowage": {"view": {"compact_tail_tokens": tail_tokens}}})
    script_warm_up(fake_llm, WARM)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY))
    scenario = warm_up(Scenario(cli_task_id=True), WARM).turn("BIG now", id="big").turn("after", id="after")
    result = run_scenario(home, scenario, check=True)
    status = result.step("big")["engine"]["status"]
    assert status["compression_count"] == 1 and status["last_compaction"]["result"] == "compacted", status
    outputs = {
        str(m.get("tool_call_id")): str(m.get("content")) for m in result.final_messages if m.get("role") == "tool"
    }
    prompts = [r.text for r in fake_llm.summary_requests()]
    fake_llm.clear()  # the recordings; the next run scripts its own replies
    return outputs, prompts


def test_a_longer_compaction_tail_keeps_more_of_the_newest_outputs_whole(
    fake_llm: FakeLLMServer, make_home: Any
) -> None:
    hot_only, hot_prompts = _compact(fake_llm, make_home, 0)
    tail, tail_prompts = _compact(fake_llm, make_home, TAIL)
    whole = {f"call_warm_{i}": big_output(16_000, f"WARM{i}") for i in range(WARM)}

    # The hot zone only: the newest turn (the small BIG one) is kept; every warm-up output went into the window.
    assert not [cid for cid, text in whole.items() if hot_only.get(cid) == text], sorted(hot_only)
    assert len(hot_prompts) == 1 and f"(call call_warm_{WARM - 1})" in hot_prompts[0]

    # The longer tail: the two newest warm-up outputs are kept whole and left out of the summary prompt (which
    # names each result's call); the older ones still go (the first, in the protected head, as a stub).
    kept = [cid for cid, text in whole.items() if tail.get(cid) == text]
    assert kept == [f"call_warm_{WARM - 2}", f"call_warm_{WARM - 1}"], sorted(tail)
    assert len(tail_prompts) == 1
    assert f"(call call_warm_{WARM - 1})" not in tail_prompts[0]
    assert f"(call call_warm_{WARM - 2})" not in tail_prompts[0]
    assert f"(call call_warm_{WARM - 3})" in tail_prompts[0]
