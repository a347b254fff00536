"""Doctor says what is so, through the real host (issue 40, item 5).

A requirement is hidden by the harness (its imports raise ``ModuleNotFoundError``, as in a Python without it),
so the real ``hermes chat`` and the real ``stowage`` console script meet a missing requirement: the plugin still
loads without tiktoken (doctor names the degraded count, not a failed load), and does not load without regex
(Hermes logs the failure; doctor re-checks it instead of replaying the log once the requirement is back).
Each home has the host's caps lifted (``whole_outputs``: what ``stowage setup`` sets), so doctor's exit status
speaks only of what each test breaks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import chat_once, run_stowage

pytestmark = pytest.mark.e2e


def shadowed(module: str) -> dict[str, str]:
    """An environment in which ``import <module>`` fails as where it is not installed (the harness's
    ``sitecustomize`` hides the distribution and refuses its imports, in Hermes and in every ``stowage`` command;
    a package shadowing it on ``PYTHONPATH`` would not do: Hermes puts site-packages first on ``sys.path``)."""
    return {"STOWAGE_HARNESS_HIDE_DISTS": module}


def test_without_tiktoken_the_session_runs_and_doctor_names_the_degraded_count(
    fake_llm: FakeLLMServer, make_home, tmp_path: Path
) -> None:
    home = make_home(engine="stowage", plugins=["stowage"], whole_outputs=True)
    without = shadowed("tiktoken")
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))

    chat = chat_once(home, "HELLO", "-Q", env=without)
    assert chat.returncode == 0 and "hi there" in chat.stdout, chat.output
    assert chat.probe["engine"]["class"] == "StowageContextEngine", chat.probe  # it loads: no "does not load"
    assert chat.output.count("stowage: Stowage runs degraded: without tiktoken>=0.7, token counts fall back") == 1

    doctor = run_stowage(home, "--json", "doctor", "--no-verify", env=without)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    issues = {issue["kind"]: issue for issue in json.loads(doctor.stdout)["issues"]}
    missing = issues["requirement-missing"]
    assert missing["subject"] == "tiktoken" and "does not load" not in missing["detail"]
    assert "token counts fall back to characters/4" in missing["detail"] and "3x on Chinese" in missing["detail"]
    assert "tokenizer-offline" in issues
    status = run_stowage(home, "--json", "status", env=without)
    assert status.returncode == 0, status.stderr
    (session,) = json.loads(status.stdout)["sessions"]
    assert session["tokenizer"] == "estimate"  # what the session really counted with, in its status file

    mended = run_stowage(home, "--json", "doctor", "--no-verify")  # tiktoken back: the old session is a note
    issues = {issue["kind"]: issue for issue in json.loads(mended.stdout)["issues"]}
    assert mended.returncode == 0, mended.stdout
    assert set(issues) == {"session-counted-estimates"} and issues["session-counted-estimates"]["advisory"]


def test_a_load_failure_is_rechecked_not_replayed_from_the_log(
    fake_llm: FakeLLMServer, make_home, tmp_path: Path
) -> None:
    home = make_home(engine="stowage", plugins=["stowage"], whole_outputs=True)
    without = shadowed("regex")
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))

    chat = chat_once(home, "HELLO", "-Q", env=without)
    assert chat.returncode == 0, chat.output
    assert chat.probe["engine"]["class"] == "ContextCompressor", chat.probe  # the host fell back
    assert "Failed to load plugin 'stowage': No module named 'regex'" in (home.path / "logs" / "agent.log").read_text()

    broken = run_stowage(home, "doctor", "--no-verify", env=without)
    assert broken.returncode == 1 and "Traceback" not in broken.stdout + broken.stderr, broken.stdout + broken.stderr
    assert "plugin-load-failed" in broken.stdout and "No module named 'regex'" in broken.stdout
    assert "(re-checked now; agent.log:" in broken.stdout

    # regex is back; Hermes has not started since, so agent.log still ends on the failure
    mended = run_stowage(home, "--json", "doctor", "--no-verify")
    data = json.loads(mended.stdout)
    assert mended.returncode == 0, mended.stdout
    assert [issue["kind"] for issue in data["issues"]] == ["plugin-load-fixed"]
    assert data["identity"]["running"] == "stowage (via the entry point)"


def test_a_misspelt_section_fails_doctor(make_home) -> None:
    home = make_home(engine="stowage", plugins=["stowage"], whole_outputs=True, config={"stowge": {"view": {}}})
    doctor = run_stowage(home, "doctor", "--no-verify")
    assert doctor.returncode == 1, doctor.stdout
    assert "config-section-typo" in doctor.stdout and "rename 'stowge' to 'stowage'" in doctor.stdout
