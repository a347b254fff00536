"""A hung summary model costs a compaction one deadline and one call (issue 23).

The summary prepared ahead is stuck in the model; the compaction waits for it
within ``summary_timeout_seconds`` and then writes the fallback summary.  It
must not call the model a second time, and the failure must start the
governor's cooldown, so the next compaction does not call either.  Before,
the compaction waited the whole timeout for the prepared call and then made
a second call with a fresh timeout (twice the bound, two calls).
"""

from __future__ import annotations

import json
import threading

import pytest

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.summary.reply import SummaryFailure
from stowage_dev.transcripts import make_transcript

pytestmark = pytest.mark.reliability
DEADLINE = 0.3  # seconds: the compaction's whole budget for its summary


def test_a_hung_summary_model_costs_one_deadline_and_one_call(figures):
    release, calls = threading.Event(), []

    def hung(prompt: str, runtime: dict, timeout: float | None = None) -> str:
        calls.append(timeout)
        release.wait(30)
        raise SummaryFailure("timeout", "the host gave up at last")

    engine = StowageEngineCore(
        load_settings({"stowage": {"view": {"enabled": False}, "compaction": {"summary_timeout_seconds": DEADLINE}}}),
        summary_model=hung,
    )
    engine.update_model("m", 64_000)
    history = make_transcript(30, seed=3) + [
        {"role": "user", "content": "Rename parse_header everywhere."},
        {"role": "assistant", "content": "On it."},
    ]
    try:
        engine.last_prompt_tokens = int(engine.threshold_tokens * 0.95)
        engine.prepare_ahead(history)  # the turn ends near the trigger: the summary is prepared, and hangs
        first = engine.compress(history)
        first_log = engine.state.compaction_log[-1]
        later = first + [{"role": "user", "content": "And the tests."}, {"role": "assistant", "content": "Done."}]
        engine.compress(later, current_tokens=engine.context_length)  # a later turn, still cooling down
        governor = engine.get_status()["governor"]
    finally:
        release.set()
    figures.update(
        compactions=len(engine.state.compaction_log),
        model_calls=len(calls),
        fallback=sum(e.result == "fallback" for e in engine.state.compaction_log),
        first_waited_ms=None if first_log.wait_s is None else round(first_log.wait_s * 1000),
        deadline_ms=int(DEADLINE * 1000),
        governor_failures=governor["summary_failures"],
    )
    assert len(calls) == 1 and calls[0] == DEADLINE  # the prepared call, given the configured deadline
    assert first_log.result == "fallback" and first_log.summary_calls == 0
    assert first_log.summary_error.startswith("timeout")
    assert "without the summary model" in json.dumps(first)
    assert governor["summary_failures"] == 1 and governor["summary_cooldown_seconds"] > 0  # counted once
    assert engine.state.compaction_log[-1].summary_calls == 0  # the later compaction did not call the hung model
