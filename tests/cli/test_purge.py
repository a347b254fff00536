"""``stowage blobs rm`` and ``stowage purge``: bytes gone, tombstones left, nothing removed on bad input."""

from __future__ import annotations

import json

from stowage.blobstore import BlobStore
from stowage.command import main
from stowage.command.env import Env
from stowage.command.purge import purge
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import status_path, write_session_status
from stowage.context_engine.store_session.fetch_tools import FetchLimits, FetchTools


def fetch(root, session: str, handle: str) -> str:
    store = BlobStore(root)
    try:
        return FetchTools(store, lambda: session, FetchLimits()).handle("stowage_fetch", {"handle": handle})
    finally:
        store.close()


def test_rm_removes_bytes_and_fetch_explains_the_tombstone(filled, capsys):
    path = filled.store.blob_path(filled.log_sha)
    assert path.exists()
    assert main(["blobs", "rm", filled.log]) == 0
    out = capsys.readouterr().out
    assert f"removed {filled.log}" in out and "1 blob(s)" in out
    assert not path.exists()
    answer = fetch(filled.root, "s-live", filled.log)
    assert "an operator removed it" in answer and "stowage blobs rm" in answer and "terminal" in answer
    assert main(["blobs", "show", filled.log]) == 0 and "removed with `stowage blobs rm`" in capsys.readouterr().out


def test_rm_with_one_bad_handle_removes_nothing(filled, capsys):
    assert main(["blobs", "rm", filled.binary, "0" * 16]) == 2
    assert "stowage: error:" in capsys.readouterr().err
    assert filled.store.blob_path(filled.store.resolve(filled.binary)).exists()
    assert main(["blobs", "rm", "../etc/passwd"]) == 2


def test_purge_refuses_without_yes_when_stdin_is_not_a_terminal(filled, capsys):
    assert main(["purge", "--session", "s-old"]) == 1  # pytest's stdin is not a TTY: never blocks
    assert "refusing without --yes" in capsys.readouterr().err
    assert filled.store.stat(filled.old_sha)


def test_purge_a_session_asks_and_leaves_tombstones(filled, capsys):
    env = Env.resolve(filled.home, None)
    try:
        cancelled = purge(
            env, session="s-old", older_than=None, yes=False, force=False, ask=lambda q: False, interactive=lambda: True
        )
        assert cancelled.code == 1 and filled.store.stat(filled.old_sha)
        asked = []
        done = purge(
            env,
            session="s-old",
            older_than=None,
            yes=False,
            force=False,
            ask=lambda q: asked.append(q) or True,
            interactive=lambda: True,
        )
    finally:
        env.close()
    assert "1 blob(s)" in asked[0] and done.code == 0 and done.data["removed"][0]["sha256"] == filled.old_sha
    answer = fetch(filled.root, "s-old", filled.old)
    assert "stowage purge --session s-old" in answer and "terminal" in answer


def test_purge_of_a_live_session_is_refused_unless_forced(filled, capsys):
    write_session_status(filled.root, "s-live", SessionStatus())
    assert main(["purge", "--session", "s-live", "--yes"]) == 1
    assert "is live" in capsys.readouterr().err and filled.store.stat(filled.log_sha)
    assert main(["--json", "purge", "--session", "s-live", "--yes", "--force"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["removed"]) == 3 and data["bytes"] > 0
    assert not status_path(filled.root, "s-live").exists()


def test_purge_unknown_session_and_bad_usage(filled, capsys):
    assert main(["purge", "--session", "nobody", "--yes"]) == 2
    assert "unknown session 'nobody'" in capsys.readouterr().err
    assert main(["purge", "--yes"]) == 2
    assert main(["purge", "--session", "s-old", "--older-than", "3", "--yes"]) == 2
    assert main(["purge", "--older-than", "-1", "--yes"]) == 2
    assert filled.store.stat(filled.old_sha)


def test_purge_older_than_spares_live_sessions(filled, capsys):
    assert main(["purge", "--older-than", "5", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "removed 1 blob(s)" in out
    assert "terminal" in fetch(filled.root, "s-old", filled.old)
    assert main(["purge", "--older-than", "0", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "removed 0 blob(s)" in out and "3 blob(s) of live sessions spared" in out
