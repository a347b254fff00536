"""Status files and the summary log: private modes, one file per session id, hostile lines skipped.

Written the way the engine writes them (``write_session_status``,
``append_summary``) and read back the way a user does (``stowage summary``,
``stowage status``, ``stowage doctor``, the dashboard's session list).
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path

import pytest

from stowage.blobstore import BlobStore
from stowage.command import main
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import read_session_statuses, status_path, write_session_status
from stowage.context_engine.records.summary_log import append_summary, summaries_path
from stowage_dev.records import compaction_record

pytestmark = pytest.mark.reliability
DEEP = "[" * 100_000 + "]" * 100_000
RECORD = compaction_record()
LONG_A = "gateway-session-" + "x" * 150 + "-A"
LONG_B = "gateway-session-" + "x" * 150 + "-B"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return code, out.out, out.err


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_folders_0700_and_files_0600_under_a_permissive_umask(home: Path, figures: dict) -> None:
    root = home / "stowage"
    old = os.umask(0o022)
    try:
        write_session_status(root, "s1", SessionStatus(compression_count=1))
        append_summary(root, "s1", {**RECORD, "body": "B"})
    finally:
        os.umask(old)
    modes = {
        "status_dir": mode(root / "session-status"),
        "summary_dir": mode(root / "session-summaries"),
        "status_file": mode(status_path(root, "s1")),
        "summary_file": mode(summaries_path(root, "s1")),
    }
    figures.update({key: f"{value:o}" for key, value in modes.items()})
    assert modes == {"status_dir": 0o700, "summary_dir": 0o700, "status_file": 0o600, "summary_file": 0o600}


@pytest.mark.parametrize("first, second", [("team:alpha", "team/alpha"), (LONG_A, LONG_B)])
def test_ids_that_sanitize_alike_never_share_a_file(home: Path, capsys, first: str, second: str, figures: dict) -> None:
    root = home / "stowage"
    append_summary(root, first, {**RECORD, "body": "SUMMARY OF THE FIRST"})
    append_summary(root, second, {**RECORD, "body": "SUMMARY OF THE SECOND"})
    write_session_status(root, first, SessionStatus(compression_count=1))
    write_session_status(root, second, SessionStatus(compression_count=2))
    assert summaries_path(root, first) != summaries_path(root, second)
    assert status_path(root, first) != status_path(root, second)
    assert len(status_path(root, first).name) <= 80
    code, out, _ = run(capsys, "summary", "--session", first)
    assert code == 0 and "SUMMARY OF THE FIRST" in out and "SECOND" not in out
    code, out, _ = run(capsys, "summary", "--session", second)
    assert code == 0 and "SUMMARY OF THE SECOND" in out and "FIRST" not in out
    ids = sorted(s.session_id for s in read_session_statuses(root, limit=10))
    figures.update({"files": len(list((root / "session-summaries").iterdir())), "sessions": len(ids)})
    assert ids == sorted([first, second])


def test_a_record_of_another_session_in_the_file_is_not_shown(home: Path, capsys) -> None:
    root = home / "stowage"
    append_summary(root, "mine", {**RECORD, "body": "MINE"})
    with open(summaries_path(root, "mine"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps({**RECORD, "body": "FOREIGN", "session_id": "theirs"}) + "\n")
    code, out, _ = run(capsys, "summary", "--session", "mine", "--all")
    assert code == 0 and "MINE" in out and "FOREIGN" not in out


def test_deeply_nested_lines_are_skipped_by_summary_status_and_dashboard(home: Path, capsys, figures: dict) -> None:
    root = home / "stowage"
    BlobStore(root).put(b"an output", session_id="s1", tool_name="terminal", kind="spill")  # status needs a store
    append_summary(root, "s1", {**RECORD, "body": "GOOD SUMMARY"})
    with open(summaries_path(root, "s1"), "a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n")
    append_summary(root, "s1", {**RECORD, "compaction": 2, "body": "LATER SUMMARY"})
    write_session_status(root, "s1", SessionStatus(compression_count=3))
    status_path(root, "s2").write_text(DEEP)  # a hostile status file beside a good one
    os.chmod(status_path(root, "s2"), 0o600)
    code, out, _ = run(capsys, "summary", "--session", "s1", "--all")
    assert code == 0 and "GOOD SUMMARY" in out and "LATER SUMMARY" in out and "1 unreadable line" in out
    code, out, _ = run(capsys, "--json", "status")
    assert code == 0
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["s1"]
    # the dashboard tab's session list, through the dashboard's own API module (loaded as the dashboard loads it)
    spec = importlib.util.spec_from_file_location(
        "stowage_dashboard_api_under_test", Path(__file__).resolve().parents[2] / "dashboard" / "plugin_api.py"
    )
    assert spec is not None and spec.loader is not None
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    assert [s.session_id for s in api._statuses(type("Env", (), {"store_root": root})())] == ["s1"]
    figures.update({"hostile_lines": 2, "crashes": 0})


def test_doctor_names_loose_modes_old_names_and_bad_files_and_repairs_modes(home: Path, capsys) -> None:
    root = home / "stowage"
    write_session_status(root, "s1", SessionStatus(compression_count=1))
    append_summary(root, "s1", {**RECORD, "body": "B"})
    os.chmod(root / "session-status", 0o755)
    os.chmod(status_path(root, "s1"), 0o644)
    (root / "session-summaries" / "team_alpha.jsonl").write_text(json.dumps({**RECORD, "body": "old"}) + "\n")
    os.chmod(root / "session-summaries" / "team_alpha.jsonl", 0o600)
    with open(summaries_path(root, "s1"), "a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n")
    code, out, _ = run(capsys, "--json", "doctor", "--no-verify")
    issues = json.loads(out)["issues"]
    kinds = sorted({(i["kind"], Path(i["subject"]).name) for i in issues if "session" in i["subject"]})
    assert ("bad-permissions", "session-status") in kinds
    assert ("bad-permissions", status_path(root, "s1").name) in kinds
    assert ("misnamed-session-file", "team_alpha.jsonl") in kinds
    assert ("unreadable-session-file", summaries_path(root, "s1").name) in kinds
    code, out, _ = run(capsys, "--json", "doctor", "--no-verify", "--repair")
    assert mode(root / "session-status") == 0o700 and mode(status_path(root, "s1")) == 0o600


def test_purge_removes_the_session_from_an_old_shared_file_and_spares_the_other(home: Path, capsys) -> None:
    root = home / "stowage"
    store = BlobStore(root)
    store.put(b"output of alpha", session_id="team:alpha", tool_name="terminal", kind="spill")
    store.close()
    old = root / "session-summaries" / "team_alpha.jsonl"  # the name both ids got before names were hashed
    old.parent.mkdir(parents=True)
    old.write_text(
        json.dumps({**RECORD, "body": "ALPHA COLON", "session_id": "team:alpha"})
        + "\n"
        + json.dumps({**RECORD, "body": "ALPHA SLASH", "session_id": "team/alpha"})
        + "\n"
    )
    append_summary(root, "team:alpha", {**RECORD, "body": "ALPHA NEW"})
    code, _, _ = run(capsys, "purge", "--session", "team:alpha", "--yes", "--force")  # put() marks it live
    assert code == 0
    assert not summaries_path(root, "team:alpha").exists()
    left = old.read_text()
    assert "ALPHA COLON" not in left and "ALPHA SLASH" in left
