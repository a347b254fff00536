"""Escape sequences in stored or model text never reach the user's terminal.

A tool output, a summary, an error message or a session name can carry
terminal escape sequences (an OSC 52 sets the clipboard, CSI sequences move
the cursor and erase what was printed).  Each command that prints such text
(``stowage summary``, ``status``, ``blobs show``, ``blobs cat`` on a
terminal, ``replay``, ``/stowage``) is run the way a user runs it, on a store
holding them, and its output must hold no control character but tab and newline.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from stowage.blobstore import BlobStore
from stowage.command import main
from stowage.command.blobs import cat
from stowage.command.env import Env
from stowage.command.terminal import safe_text
from stowage.context_engine.records.compaction_record import CompactionRecord
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import write_session_status
from stowage.context_engine.records.summary_log import append_summary
from stowage.host.slash_command import stowage_command
from stowage_dev.records import compaction_record

pytestmark = pytest.mark.reliability

# Synthetic payloads: the clipboard would receive "pwned", the title bar "owned", the line would be erased.
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
OSC_TITLE_ST = "\x1b]0;owned\x1b\\"
CSI_ERASE = "\x1b[2K\x1b[1A"
C1_CSI = "\x9b31m"
HOSTILE = f"before {OSC52}{OSC_TITLE_ST}{CSI_ERASE}{C1_CSI}bell\x07 back\x08 cr\r after"
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_clean(text: str, *visible: str, payloads: bool = False) -> None:
    """No control character but tab and newline; the readable words around the sequences survive."""
    found = sorted({f"U+{ord(ch):04X}" for ch in UNSAFE.findall(text)})
    assert not found, f"control characters reached the terminal: {found}"
    if not payloads:  # the payloads go with their sequences
        assert "cHduZWQ=" not in text and "owned" not in text
    for word in visible:
        assert word in text


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, str]:
    """A Hermes home whose store holds hostile text in a summary, a status file and a blob's provenance."""
    home = tmp_path / "hermes"
    home.mkdir()
    root = home / "stowage"
    store = BlobStore(root)
    blob = store.put(
        f"output line {OSC52}\nsecond {CSI_ERASE}line\n".encode(),
        session_id="s1",
        tool_name=f"terminal{OSC_TITLE_ST}",
        tool_args=f"cat notes {HOSTILE}",
        kind="spill",
    )
    store.close()
    append_summary(root, "s1", compaction_record(body=f"## Goal\nShip it {HOSTILE}\n", at=time.time()))
    status = SessionStatus(
        session_id="s1",
        compression_count=1,
        compactions=[CompactionRecord(at=time.time(), result="fallback", summary_error=f"model said {HOSTILE}")],
    )
    status.store.spill_failures = 1
    status.store.last_store_error = f"disk {HOSTILE}"
    write_session_status(root, "s1", status)
    return home, blob.handle


def test_safe_text_drops_sequences_and_controls_keeps_text() -> None:
    assert safe_text(HOSTILE) == "before bell back cr after"
    assert safe_text("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert safe_text("unterminated \x1b]52;c;cHduZWQ=") == "unterminated "
    assert safe_text("é ü \u4e2d \U0001f600") == "é ü \u4e2d \U0001f600"  # printable non-ASCII is kept


def test_summary_status_and_blobs_show_print_no_escape(planted, capsys, figures) -> None:
    home, handle = planted
    common = ("--hermes-home", str(home))
    outputs = {
        "summary": run(capsys, "summary", *common),
        "status": run(capsys, "status", *common),
        "blobs show": run(capsys, "blobs", "show", handle, *common),
        "unknown session": run(capsys, "summary", "--session", f"x{OSC52}", *common),
    }
    figures["commands"] = len(outputs)
    code, out, _ = outputs["summary"]
    assert code == 0
    assert_clean(out, "Ship it before bell back cr after")
    code, out, _ = outputs["status"]
    assert code == 0
    assert_clean(out, "model said before bell")
    code, out, _ = outputs["blobs show"]
    assert code == 0
    assert_clean(out, "cat notes before bell")
    code, _, err = outputs["unknown session"]
    assert code == 2
    assert_clean(err, "unknown session", payloads=True)  # quoted with repr(): printable escapes
    # --json keeps the text exact: JSON escapes every control character, so a terminal gets none either
    code, out, _ = run(capsys, "summary", "--json", *common)
    assert code == 0 and not UNSAFE.search(out)
    assert OSC52 in json.loads(out)["summaries"][0]["body"]


def test_blobs_cat_cleans_a_terminal_and_keeps_bytes_for_a_file(planted) -> None:
    home, handle = planted
    env = Env.resolve(str(home), None)
    try:
        tty = io.BytesIO()
        cat(env, handle, None, force=False, as_json=False, out=tty, is_tty=True)
        assert_clean(tty.getvalue().decode(), "output line", "second line")
        lines = io.BytesIO()
        cat(env, handle, "2:2", force=False, as_json=False, out=lines, is_tty=True)
        assert lines.getvalue() == b"second line\n"
        pipe = io.BytesIO()
        cat(env, handle, None, force=False, as_json=False, out=pipe, is_tty=False)
        assert OSC52.encode() in pipe.getvalue()  # a redirect gets the blob byte for byte
    finally:
        env.close()


def test_slash_command_returns_clean_text(planted) -> None:
    home, _ = planted
    for words in ("summary", "status"):
        assert_clean(stowage_command(words, hermes_home=lambda: home), "before bell")


def test_replay_prints_no_escape_from_a_recording(tmp_path: Path, capsys) -> None:
    pytest.importorskip("hermes_state")
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("context:\n  engine: compressor\n", encoding="utf-8")
    source = tmp_path / "sessions.jsonl"
    source.write_text(
        json.dumps({"id": f"rec{OSC52}", "messages": [{"role": "user", "content": f"hi {OSC52}"}]})
        + "\n"
        + f"not json {OSC52}\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "replay", "--hermes-home", str(home), "--from", str(source), "--no-html")
    assert "Traceback" not in out + err
    assert_clean(out + err, "stowage replay", "sessions, ")  # the progress line names the session
