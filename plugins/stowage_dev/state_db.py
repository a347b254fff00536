"""A Hermes ``state.db`` written by the installed hermes-agent's own ``SessionDB`` (its schema, its encoding), and
checksums of a folder, for the tests of ``stowage replay`` (which must leave the user's files unchanged)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping, Sequence


def write_sessions(db_path: Path, sessions: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Each session id's messages (``role``, ``content``, ``tool_calls``, ``tool_call_id``, ``tool_name``), in order."""
    import hermes_state  # the host's module: only where hermes-agent is installed

    db = hermes_state.SessionDB(db_path=db_path)
    try:
        for sid, messages in sessions.items():
            db.create_session(sid, source="cli", model="test-model", system_prompt="You are a test agent.")
            for message in messages:
                db.append_message(
                    sid,
                    message["role"],
                    content=message.get("content"),
                    tool_calls=message.get("tool_calls"),
                    tool_call_id=message.get("tool_call_id"),
                    tool_name=message.get("tool_name"),
                )
    finally:
        db.close()


def checksums(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
