"""``stowage replay`` of a session that already ran Stowage: the originals come back from the store.

The same scripted conversation is recorded twice by real hermes-agent 0.19.0
sessions: once with Hermes's built-in compressor, once with Stowage (whose
spill previews then stand in the recorded history instead of the outputs).
Replayed, both recordings must give the same figures within 2%, because the
replay rebuilds every preview from the user's store; the report names the
session that ran Stowage and counts what it rebuilt.  Without the store (an
empty one given with ``--store``) nothing can be rebuilt, the report says so,
and the figures are far apart: the check is not vacuous.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stowage.command import main
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

pytestmark = pytest.mark.e2e
OUTPUT_CHARS = 16_000  # ~4k tokens: over Stowage's spill threshold
OUTPUTS_PER_TURN = 3
BIG_TURNS = 5


def record(make_home, fake_llm: FakeLLMServer, engine: str):  # noqa: ANN001, ANN201
    home = make_home(engine=engine, plugins=["stowage"] if engine == "stowage" else [])
    home.install_harness_probe()
    for index in range(BIG_TURNS):
        fake_llm.on(
            Match.user_turn(f"BIG{index}"),
            Reply.tool(
                *[
                    ToolCall(
                        "harness_big_output",
                        {"chars": OUTPUT_CHARS, "token": f"T{index}x{k}"},
                        id=f"call_big{index}x{k}",
                    )
                    for k in range(OUTPUTS_PER_TURN)
                ]
            ),
        )
    scenario = Scenario()
    for index in range(2):
        scenario.turn(f"warm-up turn {index}")
    for index in range(BIG_TURNS):
        scenario.turn(f"BIG{index} read it", id=f"big{index}")
    scenario.end_session()
    run_scenario(home, scenario, check=True)
    return home


def replay(capsys: pytest.CaptureFixture[str], *args: str, html: str = "") -> dict[str, Any]:
    code = main([*args, "replay", "--json", "--quiet", *(["--html", html] if html else ["--no-html"])])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    return json.loads(captured.out)


def close(a: float, b: float, within: float = 0.02) -> bool:
    return abs(a - b) <= within * max(a, b)


def test_a_stowage_recording_replays_like_a_plain_one(
    make_home, fake_llm: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nSUMMARY the big outputs"), times=None)
    plain = record(make_home, fake_llm, "compressor")
    with_stowage = record(make_home, fake_llm, "stowage")
    recorded = with_stowage.path / "state.db"
    assert "[stowage: preview of a large tool output" in recorded.read_bytes().decode("utf-8", "replace")

    base = replay(capsys, "--hermes-home", str(plain.path))
    page = tmp_path / "report.html"
    rebuilt = replay(capsys, "--hermes-home", str(with_stowage.path), html=str(page))
    empty = tmp_path / "empty-store"
    empty.mkdir()
    shortened = replay(capsys, "--hermes-home", str(with_stowage.path), "--store", str(empty))

    assert base["recorded_with_stowage"]["sessions"] == []
    seen = rebuilt["recorded_with_stowage"]
    assert seen["sessions"] == [s["session"] for s in rebuilt["sessions"]] and len(seen["sessions"]) == 1
    assert seen["rebuilt"] == BIG_TURNS * OUTPUTS_PER_TURN and seen["not_rebuilt"] == 0
    assert "recorded with Stowage" in " ".join(rebuilt["sessions"][0]["problems"])
    text = page.read_text(encoding="utf-8")
    assert "1 session(s) were recorded with Stowage running" in text
    assert f"ran Stowage: {seen['rebuilt']} of {seen['rebuilt']} outputs rebuilt" in text
    assert shortened["recorded_with_stowage"]["not_rebuilt"] == BIG_TURNS * OUTPUTS_PER_TURN
    assert shortened["recorded_with_stowage"]["rebuilt"] == 0

    assert rebuilt["recorded"] == base["recorded"]
    print(
        "billed tokens (built-in / stowage): plain",
        [base["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
        "stowage-recorded rebuilt",
        [rebuilt["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
        "not rebuilt",
        [shortened["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
    )
    for engine in ("built-in", "stowage"):
        for key in ("billed_tokens", "prompt_tokens", "cost", "peak_request_tokens"):
            a, b = base["totals"][engine][key], rebuilt["totals"][engine][key]
            assert close(a, b), f"{engine} {key}: plain recording {a:,}, Stowage recording rebuilt {b:,}"
        assert base["totals"][engine]["compactions"] == rebuilt["totals"][engine]["compactions"]
    # without the originals the built-in replays the previews: far from the plain recording
    a, b = base["totals"]["built-in"]["billed_tokens"], shortened["totals"]["built-in"]["billed_tokens"]
    assert not close(a, b, 0.10), (a, b)
