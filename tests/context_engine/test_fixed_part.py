"""What every request carries before any history, and the warning when the trigger is not above it."""

from __future__ import annotations

from stowage.context_engine.policy.fixed_part import FixedPart, below_fixed_part
from stowage.context_engine.records.session_status import FixedPartFigures, SessionStatus


def test_measure_counts_the_system_prompt_once_per_text():
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return len(text)

    part = FixedPart()
    messages = [{"role": "system", "content": "x" * 100}, {"role": "user", "content": "hi"}]
    assert part.measure(messages, 900, count) == 1000
    assert part.measure(messages, 900, count) == 1000 and len(calls) == 1
    parts = [{"role": "system", "content": [{"type": "text", "text": "abc"}]}]
    assert part.measure(parts, 0, count) == 3
    assert part.measure([{"role": "user", "content": "no system"}], 7, count) == 7


def test_the_warning_names_both_parts_and_a_trigger_that_clears_them():
    fixed = FixedPartFigures(system_tokens=4_000, tools_tokens=10_000, tokens=14_000)
    text = below_fixed_part(fixed, 12_800, 128_000)
    assert text is not None and "(12,800 tokens)" in text and "system prompt 4,000, tool schemas 10,000" in text
    assert "set view.compact_at to at least 0.25" in text  # 14k/128k = 0.11, plus 0.1 of room, rounded up to 0.05
    assert below_fixed_part(fixed, 14_001, 128_000) is None
    assert below_fixed_part(None, 100, 128_000) is None and below_fixed_part(fixed, 0, 128_000) is None
    assert below_fixed_part(FixedPartFigures(), 100, 128_000) is None  # an older file's empty figures
    assert "compaction.threshold" in (below_fixed_part(fixed, 1_000, 0, "compaction.threshold") or "")


def test_the_figures_are_a_record_and_older_status_files_still_load():
    assert FixedPart().figures() is None  # nothing measured yet
    part = FixedPart()
    part.measure([{"role": "system", "content": "x" * 10}], 5, len)
    assert part.figures() == FixedPartFigures(system_tokens=10, tools_tokens=5, tokens=15)
    old = SessionStatus.from_dict({"fixed_part": {"system_tokens": 1, "tools_tokens": 2, "tokens": 3, "new_key": 9}})
    assert old.fixed_part == FixedPartFigures(1, 2, 3, extra={"new_key": 9})
    assert SessionStatus.from_dict(old.as_dict()).as_dict()["fixed_part"]["new_key"] == 9  # kept on rewrite
    assert SessionStatus.from_dict({"fixed_part": {}}).fixed_part == FixedPartFigures()  # an older empty one
    assert SessionStatus.from_dict({}).fixed_part is None
