"""``stowage uninstall --purge`` in the real host: a commented config and a store that is a link to another disk.

A real ``hermes chat`` spills an output into the store (the default
``$HERMES_HOME/stowage``, here a link to another folder), then the real
``stowage`` console script purges: the config keeps every line that does not
name Stowage, Stowage's files go from the link's target while the link and
the folder stay, the output names what it leaves (the backup, Hermes's
``state.db`` previews), and the next ``hermes chat`` runs the built-in
compressor without a fallback line.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml

from stowage_dev.fake_llm import FakeLLMServer, Match
from stowage_dev.hermes_home import STOWAGE_DIST
from stowage_dev.runner import chat_once, run_stowage

from .stowage_session import script_warm_up, stowage_home

pytestmark = pytest.mark.e2e


def test_purge_keeps_the_users_config_lines_and_follows_a_symlinked_store(
    fake_llm: FakeLLMServer, make_home, e2e_tmp: Path
) -> None:
    home = stowage_home(make_home, config={"stowage": {"spill": {"threshold_tokens": 1000}}})
    disk = e2e_tmp / "other-disk" / "stowage-store"
    disk.mkdir(parents=True)
    link = home.path / "stowage"
    link.symlink_to(disk, target_is_directory=True)
    written = home.config_path.read_text(encoding="utf-8")
    text = (
        "# my Hermes setup, kept in git\n"
        + written.replace("context:\n", "# the context engine\ncontext:\n", 1)
        + "shared: &shared {retries: 2}  # an anchor\nreuse: *shared\n"
    )
    home.config_path.write_text(text, encoding="utf-8")
    script_warm_up(fake_llm, 1)

    chat = chat_once(home, "WARM-0 please inspect the big output", "-Q")
    assert chat.returncode == 0 and chat.probe["engine"]["class"] == "StowageContextEngine", chat.output
    assert (disk / "stowage-store.json").is_file() and any((disk / "blobs").rglob("*.prov")), sorted(disk.iterdir())

    done = run_stowage(home, "uninstall", "--purge", "--yes")
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr

    after = home.config_path.read_text(encoding="utf-8")
    added = [line[2:] for line in difflib.ndiff(text.splitlines(), after.splitlines()) if line.startswith("+ ")]
    assert set(added) <= {"  engine: compressor", "  enabled: []"}, added  # nothing else rewritten
    for kept in ("# my Hermes setup, kept in git", "# the context engine", "reuse: *shared"):
        assert kept in after
    data = yaml.safe_load(after)
    assert data["context"]["engine"] == "compressor" and "stowage" not in data and data["reuse"] == {"retries": 2}
    assert link.is_symlink() and disk.is_dir() and not any(disk.iterdir())  # the link followed, not crashed on
    out = done.stdout
    assert f"is a link to {disk}" in out
    assert f"left: {home.config_path}{'.before-stowage-uninstall'}" in out
    previews = re.search(r"state\.db, where (\d+) message\(s\) hold", out)
    assert previews and int(previews.group(1)) >= 1, out  # the spilled preview Hermes kept in its transcript

    again = chat_once(
        home, "WARM-0 please inspect the big output", "-Q", env={"STOWAGE_HARNESS_HIDE_DISTS": STOWAGE_DIST}
    )
    assert again.returncode == 0 and again.probe["engine"]["class"] == "ContextCompressor", again.output
    assert "Context engine 'stowage' not found" not in (home.path / "logs" / "agent.log").read_text(encoding="utf-8")
    assert not any(disk.iterdir())  # nothing stored again


def test_a_store_path_at_a_folder_of_the_users_files_is_refused_and_the_chat_goes_on(
    fake_llm: FakeLLMServer, make_home, e2e_tmp: Path
) -> None:
    """``store.path`` at a folder of the user's files: nothing written there, the output reaches the model whole."""
    data = e2e_tmp / "data"
    (data / "thesis").mkdir(parents=True)
    (data / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (data / "thesis" / "chapter1.tex").write_text("\\chapter{One}\n", encoding="utf-8")
    before = sorted(str(p.relative_to(data)) for p in data.rglob("*"))
    home = stowage_home(
        make_home, config={"stowage": {"spill": {"threshold_tokens": 1000}, "store": {"path": str(data)}}}
    )
    script_warm_up(fake_llm, 1)

    chat = chat_once(home, "WARM-0 please inspect the big output", "-Q")

    assert chat.returncode == 0 and chat.probe["engine"]["class"] == "StowageContextEngine", chat.output
    assert sorted(str(p.relative_to(data)) for p in data.rglob("*")) == before  # not one file written there
    (after_tool,) = fake_llm.matching(Match.after_tool_result("call_warm_0"))
    output = next(m["content"] for m in after_tool.messages if m.get("tool_call_id") == "call_warm_0")
    assert "[stowage:" not in output  # passed through whole, not a preview of a blob that was never stored
    log = (home.path / "logs" / "agent.log").read_text(encoding="utf-8")
    assert f"the store folder {data} already holds files Stowage did not write" in log
    status = run_stowage(home, "status")
    assert "holds files Stowage did not write (notes.txt, thesis)" in status.stdout, status.stdout
