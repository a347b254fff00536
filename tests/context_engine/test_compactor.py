"""compact(): the four phases together, without the engine."""

from __future__ import annotations

import copy
import json

from stowage.context_engine.chat.markers import PRUNED_PREFIX, STORED_PREFIX, FailureKind
from stowage.context_engine.chat.messages import SUMMARY_MARKER, is_summary, message_text
from stowage.context_engine.chat.stubs import PrunedOutput
from stowage.context_engine.chat.tokens import TokenCounter
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.compaction.compactor import compact
from stowage.context_engine.compaction.inputs import CompactionInputs, CompactionPlan
from stowage.context_engine.summary.deadline import HOST_SUMMARY_TIMEOUT_SECONDS, MIN_CALL_SECONDS, SummaryDeadline
from stowage.context_engine.summary.reply import SummaryFailure
from stowage_dev.transcripts import make_transcript

GOOD = "## Goal\nFix the parser.\n\n## Progress\n### Done\n- ran tests\n\n## Next Steps\n- continue"
COUNTER = TokenCounter()
PLAN = CompactionPlan(protect_first_n=3, tail_budget_tokens=4000, tail_min_messages=4, context_length=64_000)


def run(messages, summarize=lambda prompt: GOOD, plan=PLAN, **kwargs):
    return compact(
        messages, CompactionInputs(plan, count=COUNTER.count_message, summarize=summarize, today="2026-11-22", **kwargs)
    )


def test_compaction_shrinks_and_is_valid_and_does_not_mutate():
    msgs = make_transcript(20, seed=2)
    before = copy.deepcopy(msgs)
    outcome = run(msgs)
    assert msgs == before
    assert outcome.changed and not outcome.aborted and not outcome.fallback_used
    assert validate_messages(outcome.messages) == []
    assert COUNTER.count_messages(outcome.messages) < COUNTER.count_messages(msgs) / 2
    assert sum(is_summary(m) for m in outcome.messages) == 1
    assert outcome.messages[0] == msgs[0]  # the first request stays verbatim in the head
    stats = outcome.stats
    assert stats.messages_before == len(msgs) and stats.messages_after == len(outcome.messages)
    assert stats.window_messages > 0 and stats.pruned_outputs > 0
    assert "Fix the parser." in outcome.summary_body


def test_empty_and_tiny_inputs_are_noops_returning_the_same_list():
    for msgs in (
        [],
        [{"role": "user", "content": "hi"}],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    ):
        outcome = run(msgs)
        assert outcome.messages is msgs and not outcome.changed and not outcome.aborted


def test_single_request_in_head_then_long_tool_work_is_summarized():
    big = json.dumps({"output": "\n".join(f"line {i} of the build log" for i in range(400)), "exit_code": 0})
    msgs = [{"role": "user", "content": "one request"}]
    for i in range(12):
        msgs += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"b{i}",
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps({"command": f"make {i}"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"b{i}", "content": big + str(i)},
        ]
    msgs.append({"role": "assistant", "content": "done"})
    called = []
    outcome = run(
        msgs,
        summarize=lambda p: called.append(p) or GOOD,
        plan=CompactionPlan(protect_first_n=3, tail_budget_tokens=100, tail_min_messages=2, context_length=64_000),
    )
    assert outcome.changed and len(called) == 1
    assert validate_messages(outcome.messages) == []
    assert outcome.messages[0] == msgs[0]
    assert "> one request" in outcome.summary_body
    assert len(outcome.messages) < len(msgs) / 2


def test_prune_only_when_there_is_nothing_to_summarize():
    big = json.dumps({"output": "\n".join(f"line {i} of the build log" for i in range(400)), "exit_code": 0})
    msgs = [
        {"role": "user", "content": "one request"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "b", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "b", "content": big},
        {"role": "assistant", "content": "done"},
    ]
    called = []
    outcome = run(
        msgs,
        summarize=lambda p: called.append(p) or GOOD,
        plan=CompactionPlan(protect_first_n=3, tail_budget_tokens=100, tail_min_messages=1, context_length=64_000),
    )
    # the head is the whole conversation but its old tool output is still pruned
    assert outcome.changed and called == [] and outcome.stats.window_messages == 0
    assert validate_messages(outcome.messages) == [] and len(outcome.messages) == len(msgs)
    assert outcome.messages[2]["content"].startswith(PRUNED_PREFIX)
    assert outcome.messages[3] is msgs[3]


class Archive:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.outputs: list[PrunedOutput] = []
        self.windows: list[list] = []

    def render_pruned(self, output):
        if self.fail:
            raise OSError("disk full")
        self.outputs.append(output)
        return f"{STORED_PREFIX} blob:{output.tool_call_id}"

    def keep_window(self, window):
        if self.fail:
            raise OSError("disk full")
        self.windows.append(window)
        return lambda: "stowage_fetch(window='w1')"


def test_archive_renders_stubs_and_keeps_window():
    msgs = make_transcript(15, seed=4)
    archive = Archive()
    outcome = run(msgs, archive=archive)
    assert outcome.changed and archive.outputs and len(archive.windows) == 1
    texts = [message_text(m) for m in outcome.messages]
    assert any(t.startswith(f"{STORED_PREFIX} blob:") for t in texts)
    assert "## Full History\nstowage_fetch(window='w1')" in outcome.summary_body
    assert outcome.window_reference == "stowage_fetch(window='w1')"
    # the archive gets the original (unpruned) window messages
    assert all(m in msgs for m in archive.windows[0])


def test_failing_archive_degrades_to_plain_stubs():
    msgs = make_transcript(15, seed=4)
    outcome = run(msgs, archive=Archive(fail=True))
    assert outcome.changed and validate_messages(outcome.messages) == []
    assert any(message_text(m).startswith(PRUNED_PREFIX) for m in outcome.messages)
    assert outcome.window_reference is None and "## Full History" not in outcome.summary_body


def test_summarizer_none_uses_fallback_with_reason():
    msgs = make_transcript(15, seed=5)
    outcome = run(msgs, summarize=None, cooldown_reason="cooling down")
    assert outcome.changed and outcome.fallback_used and outcome.summary_error == "cooling down"
    assert "without the summary model: cooling down" in outcome.summary_body


def test_abort_kinds_keep_messages():
    msgs = make_transcript(15, seed=5)

    def fail(prompt):
        raise SummaryFailure("auth", "401 invalid api key")

    outcome = run(msgs, summarize=fail)
    assert outcome.aborted and not outcome.changed and outcome.messages is msgs
    assert outcome.summary_error == "auth: 401 invalid api key"


def test_duplicate_call_ids_in_the_tail_are_repaired_not_dropped():
    msgs = make_transcript(15, seed=6)
    dup = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "dup", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "dup", "content": "one"},
    ]
    second = copy.deepcopy(dup)
    second[1]["content"] = "two"
    msgs += dup + second + [{"role": "assistant", "content": "end"}]
    outcome = run(msgs)
    assert outcome.changed and not outcome.aborted
    assert validate_messages(outcome.messages) == []
    results = {m["tool_call_id"]: m["content"] for m in outcome.messages if m.get("role") == "tool"}
    assert results["dup"] == "one" and "two" in results.values()  # both results kept, ids now unique


def test_invalid_result_is_refused_with_reason(monkeypatch):
    # if assembly ever produced an invalid list, the input must come back unchanged
    import stowage.context_engine.compaction.compactor as compactor_module

    msgs = make_transcript(15, seed=6)
    from stowage.context_engine.chat.validate import Problem

    monkeypatch.setattr(compactor_module, "validate_messages", lambda messages, profile: [Problem(0, "x", "broken")])
    outcome = run(msgs)
    assert outcome.aborted and not outcome.changed and outcome.messages is msgs
    assert outcome.summary_error and outcome.summary_error.startswith("internal error")


def test_summary_marker_in_tool_output_is_not_a_summary():
    msgs = make_transcript(10, seed=7)
    msgs[2] = dict(msgs[2], content=SUMMARY_MARKER + " quoted by a tool] " + "x" * 500)
    outcome = run(msgs)
    assert outcome.changed and validate_messages(outcome.messages) == []
    assert sum(is_summary(m) for m in outcome.messages) == 1


# -- one summary deadline per compaction ---------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_summary_deadline_counts_from_the_compaction_start_and_passes_what_is_left():
    clock = _Clock()
    deadline = SummaryDeadline(10, clock=clock)
    clock.now += 4
    assert deadline.remaining() == 6 and not deadline.spent() and deadline.call_timeout() == 6
    clock.now += 7
    assert deadline.spent() and deadline.call_timeout() == MIN_CALL_SECONDS  # never 0 ("no timeout" to a client)
    unconfigured = SummaryDeadline(0, clock=clock)
    assert unconfigured.budget == HOST_SUMMARY_TIMEOUT_SECONDS and unconfigured.call_timeout() is None


def test_a_spent_deadline_writes_the_fallback_without_calling_the_model():
    clock = _Clock()
    deadline = SummaryDeadline(1, clock=clock)
    clock.now += 2  # e.g. spent waiting for a summary prepared ahead
    called: list[str] = []
    outcome = run(make_transcript(20, seed=2), summarize=lambda p: called.append(p) or GOOD, deadline=deadline)
    assert called == [] and outcome.changed and outcome.fallback_used
    assert outcome.summary_error.startswith("timeout") and outcome.failure is FailureKind.MODEL_FAILED


def test_the_record_carries_every_figure_of_the_compactor():
    from dataclasses import fields

    from stowage.context_engine.compaction.inputs import CompactionStats
    from stowage.context_engine.records.compaction_record import CompactionRecord

    outcome = run(make_transcript(20, seed=2))
    record = CompactionRecord.of(outcome, "compacted", current_tokens=1, focus_topic=None, forced=False, tokens_after=2)
    assert outcome.stats.window_messages > 0 and outcome.stats.phase_ms
    for figure in fields(CompactionStats):
        assert getattr(record, figure.name) == getattr(outcome.stats, figure.name), figure.name
