"""``stowage replay`` on bad input: a clear message naming the problem, the other sessions still replayed,
the user's files unchanged (checksums before and after).

The state.db files are written by hermes-agent 0.19.0's own ``SessionDB`` (its schema, its encoding).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stowage.command import main
from stowage_dev.state_db import checksums, write_sessions

pytest.importorskip("hermes_state")


def call(cid: str, name: str = "terminal") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps({"command": "ls"})}}


GOOD = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": "", "tool_calls": [call("c1")]},
    {"role": "tool", "content": "a.txt\nb.txt\n" * 200, "tool_call_id": "c1", "tool_name": "terminal"},
    {"role": "assistant", "content": "two files"},
    {"role": "user", "content": "thanks"},
    {"role": "assistant", "content": "welcome"},
]
MALFORMED = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    },
    {"role": "tool", "content": "stray output", "tool_call_id": "orphan-1", "tool_name": "terminal"},
    {"role": "assistant", "content": "", "tool_calls": [call("c9")]},
    {"role": "assistant", "content": "I see a picture"},
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes"
    home.mkdir()
    write_sessions(home / "state.db", {"good-1": GOOD, "bad-1": MALFORMED, "good-2": GOOD[:4]})
    (home / "config.yaml").write_text("context:\n  engine: compressor\n", encoding="utf-8")
    return home


def replay(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, str, str]:
    code = main(["replay", "--hermes-home", str(home), "--no-html", "--quiet", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    return code, captured.out, captured.err


def test_malformed_messages_are_named_and_other_sessions_replayed(home: Path, capsys) -> None:
    before = checksums(home)
    code, out, _ = replay(capsys, home, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["sessions_replayed"] == 3
    bad = next(s for s in report["sessions"] if s["session"] == "bad-1")
    problems = " ".join(bad["problems"])
    assert "non-text content" in problems and "orphan" in problems and "without a result" in problems
    good = next(s for s in report["sessions"] if s["session"] == "good-1")
    assert good["problems"] == [] and good["recorded"] == {
        "messages": 7,
        "user": 2,
        "assistant": 3,
        "tool": 1,
        "tool_calls": 1,
    }
    assert good["engines"]["built-in"]["requests"] == 3 == good["engines"]["stowage"]["requests"]
    assert checksums(home) == before


def test_missing_state_db(tmp_path: Path, capsys) -> None:
    code, _, err = replay(capsys, tmp_path / "nowhere")
    assert code == 1 and "no Hermes state.db at" in err and "--from FILE" in err


def test_unknown_session(home: Path, capsys) -> None:
    before = checksums(home)
    code, out, _ = replay(capsys, home, "--session", "nope", "--json")
    assert code == 2
    error = json.loads(out)["error"]
    assert error["code"] == "unknown_session" and "no session 'nope'" in error["message"]
    assert checksums(home) == before


def test_newer_schema(home: Path, capsys) -> None:
    conn = sqlite3.connect(home / "state.db")
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    before = checksums(home)
    code, _, err = replay(capsys, home)
    assert code == 1 and "schema version 99" in err and "newer" in err
    assert checksums(home) == before


def test_corrupt_state_db(home: Path, capsys) -> None:
    db = home / "state.db"
    for suffix in ("-wal", "-shm"):
        (home / f"state.db{suffix}").unlink(missing_ok=True)
    data = bytearray(db.read_bytes())
    data[0:100] = b"\xff" * 100  # the header is gone
    db.write_bytes(bytes(data))
    before = checksums(home)
    code, _, err = replay(capsys, home)
    assert code == 1 and "corrupt" in err and str(db) in err
    assert checksums(home) == before


def test_not_a_database(home: Path, capsys) -> None:
    for suffix in ("-wal", "-shm"):
        (home / f"state.db{suffix}").unlink(missing_ok=True)
    (home / "state.db").write_text("this is not sqlite", encoding="utf-8")
    code, _, err = replay(capsys, home)
    assert code == 1 and "not a readable Hermes state.db" in err


def test_locked_state_db_is_still_read(home: Path, capsys) -> None:
    """A Hermes process in the middle of a write transaction neither blocks the replay nor is disturbed."""
    writer = sqlite3.connect(home / "state.db", isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("INSERT INTO state_meta (key, value) VALUES ('in-flight', 'x')")
    try:
        before = checksums(home)
        code, out, _ = replay(capsys, home, "--json")
        assert code == 0 and json.loads(out)["sessions_replayed"] == 3
        assert checksums(home) == before
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_since_and_limit(home: Path, capsys) -> None:
    code, out, _ = replay(capsys, home, "--json", "--limit", "1")
    assert code == 0 and [s["session"] for s in json.loads(out)["sessions"]] == ["good-2"]
    code, out, _ = replay(capsys, home, "--json", "--since", "2999-01-01")
    assert code == 1 and json.loads(out)["sessions_replayed"] == 0
    code, _, err = replay(capsys, home, "--since", "yesterday")
    assert code == 2 and "--since 'yesterday' is not a date" in err


def test_bad_price_and_setting(home: Path, capsys) -> None:
    code, _, err = replay(capsys, home, "--set", "view.compact_at=7")
    assert code == 2 and "bad Stowage setting" in err and "view.compact_at" in err
    code, _, err = replay(capsys, home, "--cache-read", "-1")
    assert code == 2 and "must not be negative" in err
    code, out, _ = replay(capsys, home, "--json", "--cache-read", "0.2", "--cache-write", "1.5")
    assert code == 0 and json.loads(out)["price_model"]["cache_read"] == 0.2


def test_bad_transcript_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "t.jsonl"
    good = {"id": "t1", "messages": GOOD}
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({"id": "t2", "messages": GOOD[:4]}) + "\n{broken\n", encoding="utf-8"
    )
    code, out, _ = replay(capsys, tmp_path, "--from", str(path), "--json")
    report = json.loads(out)
    assert code == 0 and report["sessions_replayed"] == 2 and report["sessions_skipped"] == 1
    assert report["skipped"][0]["session"] == "t.jsonl line 3" and "not valid JSON" in report["skipped"][0]["reason"]
    code, _, err = replay(capsys, tmp_path, "--from", str(tmp_path / "none.jsonl"))
    assert code == 1 and "no transcript file" in err
