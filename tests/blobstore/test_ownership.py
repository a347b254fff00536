"""The store folder's marker: which folder Stowage may keep a store in, and which entries are its own."""

from __future__ import annotations

import pytest

from stowage.blobstore.ownership import MARKER_NAME, ForeignFolderError, check, claim, inventory, read_marker


def test_a_missing_folder_is_created_and_marked_as_made_by_stowage(tmp_path):
    root = tmp_path / "a" / "store"
    claim(root)
    marker = read_marker(root)
    assert marker is not None and marker["created_folder"] is True and marker["adopted"] is False
    assert (root / MARKER_NAME).stat().st_mode & 0o777 == 0o600
    claim(root)  # a second claim changes nothing
    assert read_marker(root) == marker


def test_an_empty_folder_of_the_users_is_used_but_not_counted_as_stowages(tmp_path):
    claim(tmp_path)
    assert read_marker(tmp_path)["created_folder"] is False


def test_a_folder_of_other_files_is_refused_with_nothing_written(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "session-status").mkdir()  # a name Stowage writes does not make the folder Stowage's
    with pytest.raises(ForeignFolderError, match="notes.txt") as refused:
        claim(tmp_path, ["session-status"])
    assert str(tmp_path) in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "session-status"]


def test_an_earlier_versions_store_is_adopted_even_beside_other_files(tmp_path):
    (tmp_path / "index.sqlite3").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("mine")
    claim(tmp_path)
    marker = read_marker(tmp_path)
    assert marker["adopted"] is True and marker["created_folder"] is False  # it shares the folder with the user
    found = inventory(tmp_path)
    assert found.own == ("index.sqlite3", MARKER_NAME) and found.foreign == ("notes.txt",)


def test_a_link_is_never_one_of_the_stores_entries(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "store"
    claim(root)
    (root / "blobs").symlink_to(elsewhere, target_is_directory=True)
    assert inventory(root).foreign == ("blobs",)
    assert check(root) is not None  # marked: still the store's folder


def test_a_file_as_the_store_folder_is_refused(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(ForeignFolderError, match="is a file"):
        claim(path)
