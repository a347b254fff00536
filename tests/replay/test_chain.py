"""Chaining transcripts into long sessions: valid, unique ids, deterministic."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from stowage.command.replay.offline.chain import DataMissing, chain_sessions, clean_transcript, read_transcripts


def transcript(n: int, turns: int = 3) -> dict:
    messages = [{"role": "system", "content": f"system {n}"}, {"role": "user", "content": f"task {n}"}]
    for i in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": f"step {i}",
                "tool_calls": str(
                    [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                        }
                    ]
                ),
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"out {n}.{i}"})
    messages.append({"role": "assistant", "content": "bad format"})
    messages.append({"role": "user", "content": "please use one bash block"})
    return {"id": f"traj-{n}", "source": "test", "license": "MIT", "meta": {}, "messages": messages}


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for n in range(5):
            handle.write(json.dumps(transcript(n)) + "\n")
    return path


def test_sessions_are_valid_conversations_with_unique_ids(data: Path) -> None:
    sessions = list(chain_sessions(read_transcripts(data), chain=2))
    assert [len(s.parts) for s in sessions] == [2, 2, 1]
    for session in sessions:
        roles = [m["role"] for m in session.messages]
        assert roles[0] == "system" and roles.count("system") == 1
        assert set(roles) <= {"system", "user", "assistant", "tool"}
        ids = [c["id"] for m in session.messages for c in m.get("tool_calls", [])]
        assert len(ids) == len(set(ids))
        # every result answers a call of the assistant message right before its batch
        open_ids: set[str] = set()
        for message in session.messages:
            if message["role"] == "tool":
                assert message["tool_call_id"] in open_ids
                open_ids.discard(message["tool_call_id"])
            else:
                assert not open_ids
                open_ids = {c["id"] for c in message.get("tool_calls", [])}
    first = sessions[0].messages
    # the second transcript's opening user message is a new user turn; its system message is gone
    assert {"role": "user", "content": "task 1"} in first
    assert first[0]["content"] == "system 0"


def test_chaining_is_deterministic(data: Path) -> None:
    one = [(s.id, s.messages) for s in chain_sessions(read_transcripts(data), chain=3)]
    two = [(s.id, s.messages) for s in chain_sessions(read_transcripts(data), chain=3)]
    assert one == two


def test_limit_and_missing_file(data: Path, tmp_path: Path) -> None:
    assert len(list(read_transcripts(data, limit=2))) == 2
    with pytest.raises(DataMissing):
        list(read_transcripts(tmp_path / "absent.jsonl.gz"))


def test_clean_transcript_drops_orphans_and_parses_literal_tool_calls() -> None:
    messages = clean_transcript(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": "[{'id': 'a', 'function': {'name': 'bash', 'arguments': '{}'}}]",
            },
            {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
            {
                "role": "assistant",
                "content": "x",
                "tool_calls": [{"id": "b", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "b", "content": "ok"},
            {"role": "weird", "content": "?"},
        ]
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["tool_calls"][0]["id"] == "b"
