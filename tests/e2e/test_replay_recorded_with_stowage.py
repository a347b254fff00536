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

import contextlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from stowage.command import main
from stowage.command.replay.report import text_summary
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.hermes_home import HermesHome
from stowage_dev.tempdirs import scratch_dir

from .recorded_sessions import record_big_outputs

pytestmark = pytest.mark.e2e
OUTPUTS_PER_TURN = 3
DISTINCT_TURNS = 3  # turns 3 and 4 read again what turns 0 and 1 read: 15 outputs, 9 distinct texts (blobs)
BIG_TURNS = 5
SPILLED = BIG_TURNS * OUTPUTS_PER_TURN


def replay(*args: str, html: str = "") -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "replay", "--json", "--quiet", *(["--html", html] if html else ["--no-html"])])
    assert code == 0, err.getvalue()
    assert "Traceback" not in err.getvalue()
    return json.loads(out.getvalue())


def close(a: float, b: float, within: float = 0.02) -> bool:
    return abs(a - b) <= within * max(a, b)


@dataclass(frozen=True)
class Replays:
    with_stowage: HermesHome
    base: dict[str, Any]  # the plain recording replayed
    rebuilt: dict[str, Any]  # the Stowage recording replayed with the user's store
    shortened: dict[str, Any]  # the Stowage recording replayed with an empty store
    page: Path  # the HTML report of ``rebuilt``


@pytest.fixture(scope="module")
def replays(shared_llm: FakeLLMServer, shared_home) -> Iterator[Replays]:
    """Both recordings and their three replays, made once for the module (the checks only read them)."""
    shared_llm.on(Match.summary_request(), Reply.say("## Goal\nSUMMARY the big outputs"), times=None)
    plain = shared_home(engine="compressor")
    record_big_outputs(
        shared_llm,
        plain,
        warm_ups=2,
        big_turns=BIG_TURNS,
        outputs_per_turn=OUTPUTS_PER_TURN,
        distinct_turns=DISTINCT_TURNS,
    )
    with_stowage = shared_home(engine="stowage", plugins=["stowage"])
    record_big_outputs(
        shared_llm,
        with_stowage,
        warm_ups=2,
        big_turns=BIG_TURNS,
        outputs_per_turn=OUTPUTS_PER_TURN,
        distinct_turns=DISTINCT_TURNS,
    )
    for scratch in scratch_dir("stowage-replay-"):
        page = scratch / "report.html"
        empty = scratch / "empty-store"
        empty.mkdir()
        yield Replays(
            with_stowage,
            base=replay("--hermes-home", str(plain.path)),
            rebuilt=replay("--hermes-home", str(with_stowage.path), html=str(page)),
            shortened=replay("--hermes-home", str(with_stowage.path), "--store", str(empty)),
            page=page,
        )


def test_the_stowage_recording_holds_previews_not_outputs(replays: Replays) -> None:
    recorded = replays.with_stowage.path / "state.db"
    assert "[stowage: preview of a large tool output" in recorded.read_bytes().decode("utf-8", "replace")


def test_the_report_names_the_session_that_ran_stowage_and_counts_what_it_rebuilt(replays: Replays) -> None:
    assert replays.base["recorded_with_stowage"]["sessions"] == []
    seen = replays.rebuilt["recorded_with_stowage"]
    assert seen["sessions"] == [s["session"] for s in replays.rebuilt["sessions"]] and len(seen["sessions"]) == 1
    assert seen["rebuilt"] == SPILLED and seen["not_rebuilt"] == 0
    assert "recorded with Stowage" in " ".join(replays.rebuilt["sessions"][0]["problems"])


def test_the_html_report_says_so_too(replays: Replays) -> None:
    text = replays.page.read_text(encoding="utf-8")
    assert "1 session(s) were recorded with Stowage running" in text
    assert f"ran Stowage: {SPILLED} of {SPILLED} outputs rebuilt" in text


def test_the_report_gives_one_set_of_output_figures(replays: Replays) -> None:
    """What the recording held as previews, what the replay rebuilt, spilled and can recover: one count.

    The outputs repeat (the store keeps one blob per distinct text), so a count of blobs would say 9 where
    15 outputs were spilled; every figure counts outputs."""
    report = replays.rebuilt
    seen, stowage = report["recorded_with_stowage"], report["totals"]["stowage"]
    (session,) = report["sessions"]
    assert seen["rebuilt"] == SPILLED and seen["not_rebuilt"] == 0
    assert stowage["spilled_outputs"] == stowage["recoverable_outputs"] == seen["rebuilt"], (seen, stowage)
    assert session["engines"]["stowage"]["spilled_outputs"] == session["engines"]["stowage"]["recoverable_outputs"]
    assert session["stowage_recorded"]["previews"] + session["stowage_recorded"]["stubs"] == SPILLED
    # the terminal summary and the HTML page print those same figures
    text = text_summary(report, None)
    assert re.search(rf"outputs spilled / recoverable\s+-\s+{SPILLED} / {SPILLED}\b", text), text
    assert f"{SPILLED} of {SPILLED} output(s)" in text
    page = replays.page.read_text(encoding="utf-8")
    totals = page.split('<table id="totals">', 1)[1].split("</table>", 1)[0]
    assert f"<td>tool outputs spilled to the store</td><td>0</td><td>{SPILLED}</td>" in totals
    assert f"recoverable from the store</td><td>0</td><td>{SPILLED}</td>" in totals
    assert f"<td>{SPILLED} ({SPILLED})</td>" in page


def test_rebuilt_from_the_store_it_replays_like_the_plain_recording(replays: Replays) -> None:
    base, rebuilt = replays.base, replays.rebuilt
    assert rebuilt["recorded"] == base["recorded"]
    print(
        "billed tokens (built-in / stowage): plain",
        [base["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
        "stowage-recorded rebuilt",
        [rebuilt["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
        "not rebuilt",
        [replays.shortened["totals"][e]["billed_tokens"] for e in ("built-in", "stowage")],
    )
    for engine in ("built-in", "stowage"):
        for key in ("billed_tokens", "prompt_tokens", "cost", "peak_request_tokens"):
            a, b = base["totals"][engine][key], rebuilt["totals"][engine][key]
            assert close(a, b), f"{engine} {key}: plain recording {a:,}, Stowage recording rebuilt {b:,}"
        assert base["totals"][engine]["compactions"] == rebuilt["totals"][engine]["compactions"]


def test_without_the_store_nothing_is_rebuilt_and_the_figures_are_far_apart(replays: Replays) -> None:
    shortened = replays.shortened["recorded_with_stowage"]
    assert shortened["not_rebuilt"] == SPILLED and shortened["rebuilt"] == 0
    # without the originals the built-in replays the previews: far from the plain recording
    a = replays.base["totals"]["built-in"]["billed_tokens"]
    b = replays.shortened["totals"]["built-in"]["billed_tokens"]
    assert not close(a, b, 0.10), (a, b)
