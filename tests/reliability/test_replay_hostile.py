"""``stowage replay`` on hostile recordings: one bad row or line never costs the other sessions or the report.

The state.db is written by hermes-agent 0.19.0's own ``SessionDB``; the
hostile parts are then put in its columns directly, as a damaged or crafted
database would hold them.  Replayed the way a user runs it (``stowage replay``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stowage.command import main
from stowage_dev.state_db import write_sessions

pytestmark = pytest.mark.reliability
pytest.importorskip("hermes_state")
DEEP = "[" * 100_000 + "]" * 100_000


def call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": json.dumps({"command": "ls"})}}


def conversation(output: str = "a.txt\nb.txt\n" * 200) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "", "tool_calls": [call("c1")]},
        {"role": "tool", "content": output, "tool_call_id": "c1", "tool_name": "terminal"},
        {"role": "assistant", "content": "two files"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "welcome"},
    ]


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["replay", "--quiet", "--json", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    return code, json.loads(captured.out), captured.err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("context:\n  engine: compressor\n", encoding="utf-8")
    return home


def test_deep_rows_and_a_far_future_start_cost_only_themselves(
    home: Path, tmp_path: Path, capsys, figures: dict
) -> None:
    names = ["good-1", "deep-calls", "deep-content", "far-future", "good-2"]
    write_sessions(home / "state.db", {name: conversation() for name in names})
    conn = sqlite3.connect(home / "state.db")
    conn.execute(
        "UPDATE messages SET tool_calls = ? WHERE session_id = 'deep-calls' AND tool_calls IS NOT NULL", (DEEP,)
    )
    conn.execute(
        "UPDATE messages SET content = ? WHERE session_id = 'deep-content' AND role = 'user'", ("\x00json:" + DEEP,)
    )
    conn.execute("UPDATE sessions SET started_at = 1e300 WHERE id = 'far-future'")
    conn.commit()
    conn.close()
    html = tmp_path / "report.html"
    code, report, _ = replay(capsys, "--hermes-home", str(home), "--html", str(html))
    replayed = {s["session"]: s for s in report["sessions"]}
    skipped = {s["session"]: s["reason"] for s in report["skipped"]}
    figures.update(
        {
            "rows_tried": len(names),
            "sessions_replayed": len(replayed),
            "sessions_skipped": len(skipped),
            "report_written": html.is_file(),
        }
    )
    assert code == 0 and html.is_file() and "good-1" in html.read_text(encoding="utf-8")
    assert {"good-1", "good-2", "far-future"} <= set(replayed)
    assert set(replayed) | set(skipped) == set(names)
    for name in ("deep-calls", "deep-content"):  # replayed without the bad part, the part named
        problems = " ".join(replayed[name]["problems"]) if name in replayed else skipped[name]
        assert "nested deeper" in problems
    assert replayed["far-future"]["started_at"] is None
    assert "not a date" in " ".join(replayed["far-future"]["problems"])


def test_a_junk_or_deep_line_skips_that_line_only(tmp_path: Path, capsys, figures: dict) -> None:
    source = tmp_path / "transcripts.jsonl"
    good = [json.dumps({"id": f"t{i}", "messages": conversation()}) for i in range(3)]
    source.write_text("\n".join([good[0], "this is not json {", good[1], DEEP, good[2]]) + "\n", encoding="utf-8")
    code, report, _ = replay(capsys, "--from", str(source), "--no-html")
    replayed = [s["session"] for s in report["sessions"]]
    skipped = {s["session"]: s["reason"] for s in report["skipped"]}
    figures.update({"lines_tried": 5, "replayed": len(replayed), "skipped": len(skipped)})
    assert code == 0 and replayed == ["t0", "t1", "t2"]
    assert set(skipped) == {"transcripts.jsonl line 2", "transcripts.jsonl line 4"}
    assert "not valid JSON" in skipped["transcripts.jsonl line 2"]
    assert "nested deeper" in skipped["transcripts.jsonl line 4"]


@pytest.mark.parametrize("source", ["jsonl", "state.db"])
def test_a_30_mb_message_is_replayed_in_bounded_memory(home: Path, tmp_path: Path, source: str, figures: dict) -> None:
    huge = ("drwxr-xr-x 2 user user 4096 file-name.txt\n" * 750_000)[:30_000_000]
    if source == "jsonl":
        path = tmp_path / "huge.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "small", "messages": conversation()}) + "\n")
            handle.write(json.dumps({"id": "huge", "messages": conversation(huge)}) + "\n")
        args = ["--from", str(path)]
    else:
        write_sessions(home / "state.db", {"small": conversation(), "huge": conversation(huge)})
        args = ["--hermes-home", str(home)]
    del huge
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.returncode)\nprint(done.stdout)\nsys.stderr.write(done.stderr)\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            sys.executable,
            "-m",
            "stowage.command",
            "replay",
            *args,
            "--no-html",
            "--quiet",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    peak_kib, code, body = out.stdout.split("\n", 2)
    report = json.loads(body)
    peak_mib = int(peak_kib) // 1024
    figures.update({"message_mb": 30, "peak_rss_mib": peak_mib})
    assert "Traceback" not in out.stderr
    assert int(code) == 0 and sorted(s["session"] for s in report["sessions"]) == ["huge", "small"]
    huge_problems = " ".join(next(s for s in report["sessions"] if s["session"] == "huge")["problems"])
    assert "30,000,000 characters cut" in huge_problems
    assert peak_mib < 450, f"replaying one 30 MB message peaked at {peak_mib} MiB"
