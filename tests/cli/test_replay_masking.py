"""``stowage replay`` shows what a recorded session holds: a secret in it is masked in the text, the JSON and the page.

A session title is the user's words and a problem line quotes the recorded
message; both reach the report.  The report passes the shown-text gate
(``shown_record``) once, before its text, JSON and HTML are made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stowage.command import main
from stowage_dev.state_db import write_sessions
from stowage_dev.transcripts import make_transcript

pytest.importorskip("hermes_state")

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape, not a live one
TITLE = f"deploy with {TOKEN} tonight"


def _home_with_a_titled_session(home: Path) -> None:
    import hermes_state

    home.mkdir(parents=True)
    db_path = home / "state.db"
    write_sessions(db_path, {"s-secret": make_transcript(6, seed=3, output_chars=3000)})
    db = hermes_state.SessionDB(db_path=db_path)
    try:
        assert db.set_session_title("s-secret", TITLE)
    finally:
        db.close()


def test_a_secret_in_a_recorded_session_is_masked_in_every_form_of_the_report(tmp_path: Path, capsys) -> None:
    home = tmp_path / "home"
    _home_with_a_titled_session(home)
    html = tmp_path / "report.html"
    common = ["replay", "--hermes-home", str(home), "--window", "32000", "--quiet", "--html", str(html)]

    assert main([*common, "--json"]) == 0
    report_json = capsys.readouterr().out
    (session,) = json.loads(report_json)["sessions"]
    assert session["title"] == "deploy with [REDACTED] tonight"  # the title travels, masked
    page = html.read_text(encoding="utf-8")

    assert main(common) == 0
    report_text = capsys.readouterr().out

    for form, shown in (("json", report_json), ("page", page), ("text", report_text)):
        assert TOKEN not in shown and TOKEN[:12] not in shown, form
