"""``stowage replay --from FILE``: the report's figures, the sweep, the HTML page, and a clean Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stowage.command import main
from stowage.command.replay.options import sweep_configs
from stowage.command.replay.reconstruct import reconstruct
from stowage.command.replay.report import config_lines
from stowage.context_engine.config.schema import KEYS_BY_PATH
from stowage_dev.transcripts import make_transcript

pytest.importorskip("agent.context_compressor")


def write_jsonl(path: Path, sessions: int, turns: int = 12, output_chars: int = 6000) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(sessions):
            messages = [
                {"role": "system", "content": "You are a coding agent."},
                *make_transcript(turns, seed=number, output_chars=output_chars),
            ]
            handle.write(json.dumps({"id": f"t{number}", "messages": messages}) + "\n")
    return path


def test_json_and_html_carry_the_same_figures(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "t.jsonl", 3)
    html = tmp_path / "out" / "report.html"
    code = main(
        [
            "replay",
            "--from",
            str(data),
            "--chain",
            "2",
            "--window",
            "32000",
            "--html",
            str(html),
            "--json",
            "--quiet",
            "--hermes-home",
            str(tmp_path / "home"),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["sessions_replayed"] == 2  # 3 transcripts chained by 2: sessions of 2 and 1
    assert report["window"] == 32000 and report["price_model"]["name"] == "anthropic"
    total = report["totals"]["stowage"]
    assert total["cost"] == pytest.approx(sum(s["engines"]["stowage"]["cost"] for s in report["sessions"]))
    text = html.read_text(encoding="utf-8")
    for engine in ("built-in", "stowage"):
        assert f"{report['totals'][engine]['billed_tokens']:,}" in text
        assert f"{report['totals'][engine]['peak_request_tokens']:,}" in text
    assert report["html"] == str(html) and not (tmp_path / "home").exists()  # the user's home never created


def test_sweep_names_the_cheapest_setting_with_config_lines(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "t.jsonl", 2, turns=10)
    code = main(
        [
            "replay",
            "--from",
            str(data),
            "--window",
            "32000",
            "--sweep",
            "--no-html",
            "--json",
            "--quiet",
            "--hermes-home",
            str(tmp_path / "home"),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    sweep = report["sweep"]
    assert len(sweep["points"]) == len(sweep_configs({}))
    fitting = [p for p in sweep["points"] if p["over_window_requests"] == 0]
    assert sweep["best"] == min(fitting, key=lambda p: (p["cost"], p["label"]))
    assert sweep["config"].startswith("stowage:\n  view:\n    compact_at: ")
    assert sweep["current"]["settings"]["view.compact_at"] == KEYS_BY_PATH["view.compact_at"].default


def test_config_lines() -> None:
    assert config_lines({"view.hot_tokens": 2000, "view.enabled": True}) == (
        "stowage:\n  view:\n    enabled: true\n    hot_tokens: 2000"
    )


def test_reconstruct_drops_a_compaction_block() -> None:
    rows = [
        {"role": "user", "content": "a", "_ts": 1.0},
        {"role": "assistant", "content": "ok", "_ts": 2.0},
        {"role": "user", "content": "b", "_ts": 3.0},
        {"role": "assistant", "content": "ok", "_ts": 4.0},
        # the compaction: head copy, summary, tail copy, the turn's new user message, written together
        {"role": "user", "content": "a", "_ts": 5.0},
        {"role": "assistant", "content": "[CONTEXT COMPACTION] s", "_ts": 5.000001},
        {"role": "assistant", "content": "ok", "_ts": 5.000002},
        {"role": "user", "content": "c", "_ts": 5.000003},
        {"role": "assistant", "content": "ok", "_ts": 6.0},
    ]
    messages, compactions = reconstruct(rows)
    assert compactions == 1
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "a"),
        ("assistant", "ok"),
        ("user", "b"),
        ("assistant", "ok"),
        ("user", "c"),
        ("assistant", "ok"),
    ]


def test_ctrl_c_writes_a_partial_report(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "many.jsonl", 60, turns=14)
    html = tmp_path / "partial.html"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stowage.command",
            "replay",
            "--from",
            str(data),
            "--html",
            str(html),
            "--hermes-home",
            str(tmp_path / "home"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until the first session is done, then press Ctrl-C
        if line.startswith("replay: 1 sessions"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "INTERRUPTED" in out
    text = html.read_text(encoding="utf-8")
    assert "Partial report" in text
    replayed = int(out.split("stowage replay: ")[1].split(" ")[0])
    assert 1 <= replayed < 60


def test_jobs_give_the_same_figures(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "t.jsonl", 4, turns=8)
    reports = []
    for jobs in ("1", "2"):
        code = main(
            [
                "replay",
                "--from",
                str(data),
                "--window",
                "32000",
                "--jobs",
                jobs,
                "--no-html",
                "--json",
                "--quiet",
                "--hermes-home",
                str(tmp_path / "home"),
            ]
        )
        assert code == 0
        reports.append(json.loads(capsys.readouterr().out))
    one, two = reports
    assert [s["session"] for s in one["sessions"]] == [s["session"] for s in two["sessions"]]
    for engine in ("built-in", "stowage"):
        for key in ("billed_tokens", "requests", "compactions", "peak_request_tokens"):
            assert one["totals"][engine][key] == two["totals"][engine][key]


def test_replay_prints_no_plugin_notice_for_its_own_engines(tmp_path: Path) -> None:
    """The user's Hermes runs the built-in compressor (the common case before trying Stowage); the replay builds
    its own temporary engines, so Stowage's 'loaded but not selected' notice is not for this terminal."""
    data = write_jsonl(tmp_path / "two.jsonl", 2, turns=6)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("context:\n  engine: compressor\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "stowage.command",
            "replay",
            "--from",
            str(data),
            "--no-html",
            "--quiet",
            "--hermes-home",
            str(home),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HERMES_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr
    assert "stowage replay: 2 session(s) replayed" in done.stdout
    assert "not selected" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.strip() == ""
