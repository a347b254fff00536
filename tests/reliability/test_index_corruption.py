"""A damaged or lost index degrades to clean errors, and the doctor rebuilds it from the blobs.

Every page of a real index is zeroed in turn: fetch and grep must answer with
JSON, ``doctor`` must report (not crash), and ``doctor --repair`` must bring
back every blob with the provenance that lets its own session read it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest
import yaml

from stowage.blobstore import BlobStore
from stowage.context_engine.store_session.fetch_tools import FETCH, GREP, FetchLimits, FetchTools
from stowage_dev.hermes_home import lifted_caps

pytestmark = pytest.mark.reliability
PAGE = 4096


def build(root, n=60):
    store = BlobStore(root)
    contents = {}
    for i in range(n):
        text = f"output {i}\n" + "".join(f"row {i}-{j}\n" for j in range(40))
        res = store.put(text, session_id="owner", tool_name="terminal", kind="spill", tool_args=json.dumps({"i": i}))
        contents[res.sha256] = text.encode()
    store.grant_session("owner", "rotated")
    store.close()
    conn = sqlite3.connect(root / "index.sqlite3")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return contents


def zero_page(path, page):
    data = bytearray(path.read_bytes())
    data[PAGE * page : PAGE * (page + 1)] = bytes(PAGE)
    path.write_bytes(bytes(data))


def readable_by(store, session, contents):
    ok = 0
    tools = FetchTools(store, lambda: session, FetchLimits(full_fetch_max_chars=10_000_000))
    for sha, data in contents.items():
        reply = json.loads(tools.handle(FETCH, {"handle": sha[:16], "mode": "full"}))
        ok += reply.get("text", "").encode() == data
    return ok


def test_every_zeroed_index_page_gives_clean_errors_and_a_rebuild(tmp_path, figures):
    pristine = tmp_path / "pristine"
    contents = build(pristine)
    pages = (pristine / "index.sqlite3").stat().st_size // PAGE
    raised, doctor_crashes, not_rebuilt, lost = [], [], [], 0
    for page in range(1, pages):  # page 0 holds the header: that is the "unreadable file" case
        root = tmp_path / f"p{page}"
        shutil.copytree(pristine, root)
        zero_page(root / "index.sqlite3", page)
        store = BlobStore(root)
        tools = FetchTools(store, lambda: "owner", FetchLimits())
        for name, args in (
            (FETCH, {"handle": next(iter(contents))[:16]}),
            (GREP, {"pattern": "row 7-"}),
            (FETCH, {"handle": next(iter(contents))[:16], "mode": "grep", "pattern": "row"}),
        ):
            try:
                json.loads(tools.handle(name, args))
            except Exception as exc:  # noqa: BLE001 - counted
                raised.append(f"page {page} {name}: {type(exc).__name__}: {exc}")
        try:
            store.doctor()
            report = store.doctor(repair=True)
        except Exception as exc:  # noqa: BLE001 - counted
            doctor_crashes.append(f"page {page}: {type(exc).__name__}: {exc}")
            continue
        if not report.consistent:
            not_rebuilt.append(f"page {page}: {[(i.kind, i.detail[:80]) for i in report.open_issues]}")
        missing = len(contents) - readable_by(store, "owner", contents)
        lost += missing
        if missing:
            not_rebuilt.append(f"page {page}: {missing} blobs unreadable by their session after repair")
        store.close()
    figures.update(
        pages=pages - 1,
        raised=len(raised),
        doctor_crashes=len(doctor_crashes),
        unrepaired=len(not_rebuilt),
        blobs_lost=lost,
    )
    assert not raised, "\n".join(raised[:10])
    assert not doctor_crashes, "\n".join(doctor_crashes[:10])
    assert not not_rebuilt, "\n".join(not_rebuilt[:10])


@pytest.mark.parametrize("damage", ["deleted", "garbage"])
def test_lost_index_is_rebuilt_with_provenance_and_grants(tmp_path, damage, figures):
    root = tmp_path / "store"
    contents = build(root)
    index = root / "index.sqlite3"
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(index) + suffix):
            os.unlink(str(index) + suffix)
    if damage == "deleted":
        index.unlink()
    else:
        index.write_bytes(b"this is not a database" * 500)
    store = BlobStore(root)
    before = store.doctor()
    assert before.blobs_checked == len(contents)  # the doctor sees the blob files, not "nothing to check"
    assert not before.clean
    store.doctor(repair=True)
    after = store.doctor()
    assert after.clean, [(i.kind, i.detail) for i in after.issues]
    owner, rotated = readable_by(store, "owner", contents), readable_by(store, "rotated", contents)
    figures.update(blobs=len(contents), readable_by_owner=owner, readable_by_granted=rotated)
    assert owner == rotated == len(contents)
    info = store.stat(next(iter(contents)))
    assert info.provenance[0].tool_name == "terminal" and info.provenance[0].session_id == "owner"


def test_cli_doctor_sees_blobs_when_the_index_is_gone(tmp_path):
    from stowage.command import main

    root = tmp_path / "store"
    build(root, n=5)
    (root / "index.sqlite3").unlink()
    # a Hermes that runs Stowage: doctor's engine checks pass, so its exit status is the store's
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}, **lifted_caps()}),
        encoding="utf-8",
    )
    code = main(["--hermes-home", str(tmp_path), "--store", str(root), "--json", "doctor", "--no-verify"])
    assert code == 1  # problems: five unindexed blobs
    code = main(["--hermes-home", str(tmp_path), "--store", str(root), "--json", "doctor", "--repair"])
    assert code == 0
