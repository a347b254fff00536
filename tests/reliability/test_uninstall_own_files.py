"""``stowage uninstall`` touches only what Stowage wrote (issue 41 item 1, issue 45 item 7).

The attack on the landed main: ``store.path`` pointed at a folder of the
user's own files (Stowage stored into it without a word) and ``--purge
--yes`` deleted the whole folder; a symlinked store crashed the purge after
``config.yaml`` was rewritten; a symlinked ``config.yaml`` was replaced by a
plain file; the config was re-dumped (comments, anchors, flow style, CRLF
lost); the purge left the backup and Hermes's stale previews unnamed.
Each case here is driven through the ``stowage`` command line or the
engine's public calls, as a user would meet it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
import yaml

from stowage.blobstore import BlobStore
from stowage.command import main
from stowage.command.uninstall import config_without_stowage
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.session_status import SessionStatus
from stowage.context_engine.records.status_file import write_session_status
from stowage.context_engine.store_session.session import writer_for

pytestmark = pytest.mark.reliability

MARKER_NAME = "stowage-store.json"  # docs/store.md: the store's marker (read here as a user would, not imported)
BIG = "".join(f"line {i} of a long build log\n" for i in range(4000))  # spilled: over the preview size


def read_marker(folder: Path) -> dict | None:
    path = folder / MARKER_NAME
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def user_files(folder: Path) -> dict[str, bytes]:
    """The user's own files, planted where the attack planted them."""
    files = {"notes.txt": b"my notes\n", "thesis/chapter1.tex": b"\\chapter{One}\n"}
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return files


def legacy_store(folder: Path) -> None:
    """A store as an earlier version left it (no marker): index, a blob, grants, a status file."""
    store = BlobStore(folder)
    store.put(b"old output\n" * 500, session_id="s1", tool_name="terminal", tool_args="make", kind="spill")
    store.grant_session("s1", "s2")
    store.close()
    write_session_status(folder, "s1", SessionStatus(session_id="s1"))
    assert not (folder / MARKER_NAME).exists()


def hermes_config(home: Path, store_path: Path | None = None, text: str | None = None) -> Path:
    config = text or (
        "# my Hermes\n"
        "model:\n  default: x  # keep me\n"
        "context:\n  engine: stowage\n"
        "plugins:\n  enabled:\n    - stowage\n"
        "stowage:\n" + (f"  store:\n    path: {store_path}\n" if store_path else "  view: {compact_at: 0.4}\n")
    )
    path = home / "config.yaml"
    path.write_text(config, encoding="utf-8")
    return path


def engine_on(home: Path, store_path: Path) -> StowageEngineCore:
    settings = load_settings({"stowage": {"store": {"path": str(store_path)}, "view": {"enabled": False}}})
    engine = StowageEngineCore(settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 200_000)
    engine.on_session_start("s-new", hermes_home=str(home))
    return engine


# -- the store knows its own files ------------------------------------------------------------------------


def test_purge_of_a_store_sharing_the_users_folder_deletes_only_stowages_files(home, capsys, figures):
    data = home.parent / "data"
    data.mkdir()
    mine = user_files(data)
    legacy_store(data)  # what today's main did with store.path pointed at data/
    hermes_config(home, data)

    assert main(["uninstall", "--purge", "--yes"]) == 0
    out = capsys.readouterr().out
    kept = {name: (data / name).read_bytes() for name in mine if (data / name).is_file()}
    figures.update(user_files=len(mine), user_files_kept=len(kept), left_over=sorted(p.name for p in data.iterdir()))
    assert kept == mine  # every file of the user's, byte for byte
    assert sorted(p.name for p in data.iterdir()) == ["notes.txt", "thesis"]  # and nothing of Stowage's
    assert "not written by Stowage: notes.txt, thesis" in out and "the folder stays" in out


def test_the_engine_never_starts_a_store_in_a_folder_of_the_users_files(home, caplog, capsys, figures):
    data = home.parent / "data"
    data.mkdir()
    user_files(data)
    before = sorted(str(p.relative_to(data)) for p in data.rglob("*"))

    engine = engine_on(home, data)
    spilled = engine.spill_tool_result("terminal", '{"command": "make"}', BIG)
    status = engine.get_status()

    after = sorted(str(p.relative_to(data)) for p in data.rglob("*"))
    figures.update(entries_before=len(before), entries_after=len(after))
    assert after == before  # not one file written into the user's folder
    assert spilled.text is None and spilled.spilled is None  # the output passes through whole: nothing is lost
    shown = json.dumps(status)
    assert str(data) in shown and "holds files Stowage did not write" in shown
    assert "notes.txt" in caplog.text  # the log line names what is in the way
    hermes_config(home, data)
    assert main(["status"]) == 0 and main(["doctor", "--no-verify"]) in (0, 1)
    out = capsys.readouterr().out
    assert out.count(f"the store folder {data} already holds files Stowage did not write (notes.txt, thesis)") == 2


def test_a_store_of_an_earlier_version_keeps_working_and_is_adopted(home):
    store_dir = home / "stowage"
    legacy_store(store_dir)
    engine = engine_on(home, store_dir)
    spilled = engine.spill_tool_result("terminal", '{"command": "make"}', BIG)
    assert spilled.text != BIG and "[stowage:" in spilled.text  # stored, as before
    marker = read_marker(store_dir)
    assert marker is not None and marker["created_folder"] is True  # its folder held only Stowage's files


def test_a_new_store_carries_its_marker_and_purge_removes_the_folder_it_made(home, capsys):
    store_dir = home / "elsewhere" / "store"
    engine = engine_on(home, store_dir)
    assert engine.spill_tool_result("terminal", '{"command": "make"}', BIG).text != BIG
    assert read_marker(store_dir)["created_folder"] is True
    # Hermes has exited before the user uninstalls: the session is over and its background writes are done
    # (under load a status or index write still in flight left a temporary file that purge rightly refused)
    engine.on_session_end("s-new", [])
    root = engine.state.store.root
    assert root is not None
    writer_for(root).drain()
    hermes_config(home, store_dir)
    code = main(["uninstall", "--purge", "--yes"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert not store_dir.exists() and (home / "elsewhere").is_dir()  # its parent was never Stowage's
    assert f"the store folder {store_dir} removed" in out


# -- links: followed or refused, decided before anything changes ------------------------------------------


def test_purge_with_a_symlinked_store_follows_the_link_and_finishes(home, capsys, figures):
    real = home.parent / "disk" / "stowage-store"
    legacy_store(real)
    link = home / "stowage"  # the default place, a link to another disk
    link.symlink_to(real, target_is_directory=True)
    hermes_config(home)

    code = main(["uninstall", "--purge", "--yes"])
    captured = capsys.readouterr()
    figures.update(exit=code, left_in_target=sorted(p.name for p in real.iterdir()) if real.is_dir() else None)
    assert code == 0 and "Traceback" not in captured.err, captured.err
    assert link.is_symlink() and real.is_dir() and not any(real.iterdir())  # Stowage's files gone, link kept
    assert "is a link to" in captured.out
    assert yaml.safe_load((home / "config.yaml").read_text())["context"]["engine"] == "compressor"


def test_a_symlinked_config_is_edited_through_its_link(home, capsys):
    dotfiles = home.parent / "dotfiles" / "hermes"
    dotfiles.mkdir(parents=True)
    target = hermes_config(dotfiles)
    (home / "config.yaml").symlink_to(target)

    assert main(["uninstall", "--yes"]) == 0
    assert (home / "config.yaml").is_symlink() and (home / "config.yaml").resolve() == target
    assert yaml.safe_load(target.read_text())["context"]["engine"] == "compressor"  # the dotfile no longer selects it
    backup = home / "config.yaml.before-stowage-uninstall"
    assert not backup.is_symlink() and "engine: stowage" in backup.read_text()
    assert not (dotfiles / "config.yaml.before-stowage-uninstall").exists()  # no copy into the user's dotfiles
    assert str(target) in capsys.readouterr().out


def test_an_edit_that_cannot_be_made_whole_changes_nothing(home, capsys):
    """The engine name shares an anchor with another key: cutting it would change that key too."""
    store_dir = home / "stowage"
    legacy_store(store_dir)
    text = "defaults: &eng stowage\ncontext:\n  engine: *eng\nplugins:\n  enabled: [stowage]\n"
    hermes_config(home, text=text)
    before = sorted(p.name for p in store_dir.iterdir())

    assert main(["uninstall", "--purge", "--yes"]) == 1
    assert "nothing was changed" in capsys.readouterr().err
    assert (home / "config.yaml").read_text() == text
    assert sorted(p.name for p in store_dir.iterdir()) == before  # the store untouched too
    assert not (home / "config.yaml.before-stowage-uninstall").exists()


def test_the_code_removal_step_of_a_linked_plugin_folder_removes_the_link_only(home, capsys):
    checkout = home.parent / "src" / "stowage"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "plugin.yaml").write_text("name: stowage\n")
    (checkout / "__init__.py").write_text("")
    (home / "plugins").mkdir()
    (home / "plugins" / "stowage").symlink_to(checkout, target_is_directory=True)
    hermes_config(home)
    assert main(["--json", "uninstall", "--yes"]) == 0
    step = json.loads(capsys.readouterr().out)["remove_code"]
    assert step.split(" && ")[0] == f"rm {home / 'plugins' / 'stowage'}"  # not `rm -r`, not Hermes's remove
    assert "hermes plugins remove" not in step


# -- the config edit keeps every other byte ---------------------------------------------------------------

SHAPES = {
    "comments and a context section with other keys": (
        "# Hermes config, kept in git\n"
        "model:\n"
        "  default: gpt-x   # the model\n"
        "context:\n"
        "  engine: stowage  # Stowage's engine\n"
        "  threshold: 0.5\n"
        "plugins:\n"
        "  enabled:\n"
        "    - other\n"
        "    - stowage   # ours\n"
        "  # plugin settings\n"
        "  entries:\n"
        "    stowage:\n"
        "      allow_tool_override: false\n"
        "    other: {a: 1}\n"
        "stowage:\n"
        "  view: {compact_at: 0.4}\n"
        "# the end\n"
        "terminal: {backend: local}\n",
        "# Hermes config, kept in git\n"
        "model:\n"
        "  default: gpt-x   # the model\n"
        "context:\n"
        "  engine: compressor  # Stowage's engine\n"
        "  threshold: 0.5\n"
        "plugins:\n"
        "  enabled:\n"
        "    - other\n"
        "  # plugin settings\n"
        "  entries:\n"
        "    other: {a: 1}\n"
        "# the end\n"
        "terminal: {backend: local}\n",
    ),
    "anchors and aliases elsewhere": (
        "base: &base\n  timeout: 30\n  retries: 2\nmodel:\n  <<: *base\n  default: x\n"
        "auxiliary: {compression: *base}\ncontext:\n  engine: stowage\nplugins:\n  enabled: [stowage]\n"
        "stowage:\n  view:\n    compact_at: 0.4\n",
        "base: &base\n  timeout: 30\n  retries: 2\nmodel:\n  <<: *base\n  default: x\n"
        "auxiliary: {compression: *base}\ncontext:\n  engine: compressor\nplugins:\n  enabled: []\n",
    ),
    "flow style throughout": (
        "context: {engine: stowage, threshold: 0.5}\n"
        "plugins: {enabled: [other, stowage, third], entries: {stowage: {allow_tool_override: false}, x: {}}}\n"
        "stowage: {view: {compact_at: 0.4}}\nmodel: {default: x}\n",
        "context: {engine: compressor, threshold: 0.5}\n"
        "plugins: {enabled: [other, third], entries: {x: {}}}\nmodel: {default: x}\n",
    ),
    "CRLF line ends": (
        "model: x\r\ncontext:\r\n  engine: stowage\r\nplugins:\r\n  enabled:\r\n  - stowage\r\n  - other\r\n"
        "stowage:\r\n  store:\r\n    max_store_mb: 500\r\nlast: 1\r\n",
        "model: x\r\ncontext:\r\n  engine: compressor\r\nplugins:\r\n  enabled:\r\n  - other\r\nlast: 1\r\n",
    ),
    "stowage keys in flow style under block sections": (
        "plugins:\n  enabled: [stowage]   # only ours\n  entries: {stowage: {allow_tool_override: false}}\n"
        'context:\n  engine: "stowage"\n  protect_last_n: 20\n',
        "plugins:\n  enabled: []   # only ours\ncontext:\n  engine: compressor\n  protect_last_n: 20\n",
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_uninstall_edits_only_the_lines_that_name_stowage(home, capsys, figures, shape):
    before, expected = SHAPES[shape]
    (home / "config.yaml").write_bytes(before.encode("utf-8"))
    os.chmod(home / "config.yaml", 0o640)

    assert main(["uninstall", "--purge", "--yes"]) == 0, capsys.readouterr().err
    after = (home / "config.yaml").read_bytes().decode("utf-8")
    figures.update(shape=shape, lines_before=before.count("\n"), lines_after=after.count("\n"))
    assert after == expected  # every byte that does not name Stowage is where it was
    assert yaml.safe_load(after) == config_without_stowage(yaml.safe_load(before), purge=True)[0]
    assert (home / "config.yaml").stat().st_mode & 0o777 == 0o640
    assert (home / "config.yaml.before-stowage-uninstall").read_bytes() == before.encode("utf-8")


# -- purge names what it leaves ---------------------------------------------------------------------------


def test_purge_names_the_backup_and_hermess_stale_previews(home, capsys):
    legacy_store(home / "stowage")
    hermes_config(home)
    with sqlite3.connect(home / "state.db") as db:  # Hermes's session database, as its messages table holds them
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT)")
        db.executemany(
            "INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)",
            [
                ("s1", "tool", "[stowage: preview of a large tool output — this is NOT the whole output] handle 1a2b"),
                ("s1", "tool", "[stowage: output stored] 3c4d"),
                ("s1", "user", "hello"),
            ],
        )
    db.close()

    assert main(["uninstall", "--purge", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"left: {home / 'config.yaml.before-stowage-uninstall'}" in out and "still names Stowage" in out
    assert f"{home / 'state.db'}, where 2 message(s) hold" in out and "point at nothing" in out
