"""``stowage`` run in-process through ``main([...])``: every subcommand, human and JSON."""

from __future__ import annotations

import json
import re

import pytest

from stowage.command import main
from stowage.context_engine.chat.tokens import TokenCounter

from .hermes_config import select_stowage, write_config


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, "--json", *argv)
    return code, json.loads(out)


# -- missing store ----------------------------------------------------------------


def test_status_without_store_says_where_it_looked_and_creates_nothing(home, capsys):
    code, out, _ = run(capsys, "status")
    assert code == 0
    assert str(home / "stowage") in out and "nothing has been stored" in out
    assert not (home / "stowage").exists()


@pytest.mark.parametrize("argv", [["blobs", "ls"], ["blobs", "show", "0" * 16], ["gc", "--dry-run"]])
def test_commands_needing_a_store_explain_that_it_is_missing(home, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert f"no Stowage store at {home / 'stowage'}" in err and "nothing has been stored yet" in err
    assert not (home / "stowage").exists()


def test_doctor_without_store_is_not_a_problem(home, capsys):
    select_stowage(home)
    code, data = run_json(capsys, "doctor")
    assert code == 0 and data["ok"] and data["store"]["exists"] is False


# -- status -----------------------------------------------------------------------


def test_status_counts(filled, capsys):
    filled.store.evict(filled.pruned)
    filled.store.record_fetch(filled.log_sha)
    code, out, _ = run(capsys, "status")
    assert code == 0
    assert re.search(r"size\s+\d+\.\d KB in 3 blobs", out), out
    assert re.search(r"tombstones\s+1 \(manual 1\)", out)
    assert re.search(r"sessions\s+2 \(1 live, 1 ended\)$", out, re.M)
    assert re.search(r"kinds\s+spill 3", out)
    assert re.search(r"fetches\s+1 \(1 blob\(s\) fetched", out)
    assert re.search(r"ttl\s+168 h", out) and re.search(r"size cap\s+1024 MB \(1\.0 GB\)", out)
    assert re.search(r"backend\s+" + re.escape(TokenCounter().backend), out)


def test_status_json(filled, capsys):
    code, data = run_json(capsys, "status")
    assert code == 0
    st = data["store"]
    assert st["path"] == str(filled.root) and st["exists"]
    assert st["blob_count"] == 4 and st["tombstones"] == 0
    assert st["by_kind"] == {"spill": 3, "pruned": 1} and st["spills"] == 3
    assert st["sessions"] == {"total": 2, "live": 1, "ended": 1}
    assert st["total_bytes"] == sum(i.size for i in filled.store.list_blobs())
    pol = data["retention"]["policy"]
    assert pol["ttl_seconds"] == 168 * 3600 and pol["max_total_bytes"] == 1024 * 1024 * 1024
    counter = TokenCounter()
    assert data["tokenizer"]["backend"] == counter.backend
    assert data["tokenizer"]["source"] == counter.loaded.source
    assert data["config"]["valid"] and not data["config"]["exists"]


def test_status_follows_the_config_block(home, capsys):
    write_config(
        home,
        {
            "store": {
                "path": "elsewhere",
                "ttl_hours": 2,
                "max_store_mb": 5,
                "fetch_grace_hours": 0.5,
                "tombstone_ttl_days": 3,
            }
        },
    )
    code, data = run_json(capsys, "status")
    assert code == 0
    assert data["store"]["path"] == str(home / "elsewhere")
    assert data["store"]["source"] == "stowage.store.path"
    assert data["retention"]["policy"] == {
        "ttl_seconds": 7200.0,
        "max_total_bytes": 5 * 1024 * 1024,
        "fetch_grace_seconds": 1800.0,
        "tombstone_ttl_seconds": 3 * 86400.0,
        "session_idle_seconds": 86400.0,
    }


def test_store_option_overrides_config_and_options_work_after_the_subcommand(filled, tmp_path, capsys):
    write_config(filled.home, {"store": {"path": str(tmp_path / "nowhere")}})
    code, data = run_json(capsys, "status", "--store", str(filled.root))
    assert code == 0 and data["store"]["source"] == "--store" and data["store"]["blob_count"] == 4
    code, out, _ = run(capsys, "--hermes-home", str(tmp_path / "other"), "status", "--json")
    assert code == 0 and json.loads(out)["hermes_home"] == str(tmp_path / "other")


# -- blobs ls / show / cat --------------------------------------------------------------


def test_ls_table_and_filters(filled, capsys):
    code, out, _ = run(capsys, "blobs", "ls")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["HANDLE", "SIZE", "LINES"]
    assert {line.split()[0] for line in lines[1:5]} == {filled.log, filled.binary, filled.old, filled.pruned}
    assert lines[-1] == "4 of 4 blobs"
    code, data = run_json(capsys, "blobs", "ls", "--kind", "pruned")
    assert [b["handle"] for b in data["blobs"]] == [filled.pruned]
    code, data = run_json(capsys, "blobs", "ls", "--session", "s-old")
    assert [b["handle"] for b in data["blobs"]] == [filled.old]
    assert data["blobs"][0]["created_at"].endswith("Z")  # absolute times in JSON
    code, out, _ = run(capsys, "blobs", "ls", "--limit", "2")
    assert "2 of 4 blobs (raise --limit to see more)" in out


def test_ls_rejects_a_zero_limit(filled, capsys):
    code, _, err = run(capsys, "blobs", "ls", "--limit", "0")
    assert code == 2 and "--limit" in err


def test_show_metadata_and_provenance(filled, capsys):
    code, out, _ = run(capsys, "blobs", "show", filled.log)
    assert code == 0
    assert f"blob {filled.log} (stored)" in out and filled.log_sha in out
    assert re.search(r"lines\s+500", out) and "pytest -x" in out and "s-live" in out
    code, data = run_json(capsys, "blobs", "show", filled.log.upper())  # hex is case-insensitive
    assert data["state"] == "stored" and data["blob"]["size"] == len(filled.log_bytes)
    assert data["blob"]["provenance"][0]["tool_name"] == "terminal"


def test_show_evicted_blob_shows_its_tombstone(filled, capsys):
    filled.store.evict(filled.log, detail="cleanup")
    code, out, _ = run(capsys, "blobs", "show", filled.log)
    assert code == 0
    assert f"blob {filled.log} (evicted)" in out
    assert "manual: an operator removed it (cleanup)" in out and "pytest -x" in out
    code, data = run_json(capsys, "blobs", "show", filled.log)
    assert data["state"] == "evicted" and data["tombstone"]["reason"] == "manual"
    assert data["tombstone"]["evicted_at"].endswith("Z")
    code, _, err = run(capsys, "blobs", "cat", filled.log)
    assert code == 2 and "is no longer available" in err and "'terminal'" in err


def test_cat_writes_exact_bytes(filled, capsysbinary):
    assert main(["blobs", "cat", filled.log]) == 0
    assert capsysbinary.readouterr().out == filled.log_bytes
    assert main(["blobs", "cat", filled.binary]) == 0  # not a terminal: binary is fine
    assert capsysbinary.readouterr().out == filled.binary_bytes


@pytest.mark.parametrize("spec, first, last", [("2:4", 2, 4), ("499:", 499, 500), (":2", 1, 2), ("7", 7, 7)])
def test_cat_lines(filled, capsysbinary, spec, first, last):
    assert main(["blobs", "cat", filled.log, "--lines", spec]) == 0
    want = b"".join(b"2026-06-01 line %d status=200\n" % i for i in range(first, last + 1))
    assert capsysbinary.readouterr().out == want


@pytest.mark.parametrize("spec", ["a:b", "0:3", "5:2"])
def test_cat_bad_line_range(filled, capsys, spec):
    code, _, err = run(capsys, "blobs", "cat", filled.log, "--lines", spec)
    assert code == 2 and "--lines" in err


def test_cat_refuses_binary_to_a_terminal_unless_forced(filled):
    import io

    from stowage.command.blobs import cat
    from stowage.command.env import CliError, Env

    env = Env.resolve(filled.home, None)
    sink = io.BytesIO()
    with pytest.raises(CliError, match="binary") as info:
        cat(env, filled.binary, None, force=False, as_json=False, out=sink, is_tty=True)
    assert info.value.code == 1 and sink.getvalue() == b""
    cat(env, filled.binary, None, force=True, as_json=False, out=sink, is_tty=True)
    assert sink.getvalue() == filled.binary_bytes
    sink = io.BytesIO()
    cat(env, filled.log, None, force=False, as_json=False, out=sink, is_tty=True)  # text is fine
    assert sink.getvalue() == filled.log_bytes
    env.close()


def test_cat_json(filled, capsys):
    import base64

    _, data = run_json(capsys, "blobs", "cat", filled.binary)
    assert data["binary"] and base64.b64decode(data["content"]) == filled.binary_bytes
    _, data = run_json(capsys, "blobs", "cat", filled.log, "--lines", "1:2")
    assert data["content"] == "2026-06-01 line 1 status=200\n2026-06-01 line 2 status=200\n"


@pytest.mark.parametrize(
    "handle, code_name, text",
    [
        ("../x", "path_like_handle", "looks like a file path"),
        ("/etc/passwd", "path_like_handle", "looks like a file path"),
        ("zzzzzzzzzzzzzzzz", "malformed_handle", "is not hexadecimal"),
        ("abc", "malformed_handle", "at least 16 are needed"),
        ("0123456789abcdef", "unknown_handle", "no stored blob matches"),
    ],
)
@pytest.mark.parametrize("action", ["show", "cat"])
def test_bad_handles_exit_2_with_the_store_message(filled, capsys, handle, code_name, text, action):
    code, out, err = run(capsys, "blobs", action, handle)
    assert code == 2 and out == "" and text in err and err.startswith("stowage: error: ")
    code, data = run_json(capsys, "blobs", action, handle)
    assert code == 2 and data["ok"] is False and data["error"]["code"] == code_name


def test_ambiguous_handle_exits_2(filled, capsys):
    twin = filled.log_sha[:16] + ("0" if filled.log_sha[16] != "0" else "1") * 48
    with filled.store.index.write() as tx:  # a second row sharing the first 16 hex digits
        tx.execute(
            "INSERT INTO blobs(sha,size,line_count,char_count,is_utf8,content_type,created_at,"
            "last_access,last_fetch,fetch_count) VALUES(?,1,1,1,1,'text',0,0,NULL,0)",
            (twin,),
        )
    code, _, err = run(capsys, "blobs", "show", filled.log_sha[:16])
    assert code == 2 and "matches 2 stored blobs" in err
    code, out, _ = run(capsys, "blobs", "show", filled.log_sha)  # the full hash still works
    assert code == 0 and "(stored)" in out


# -- gc ---------------------------------------------------------------------------


def test_gc_dry_run_then_real(filled, capsys):
    code, out, _ = run(capsys, "gc", "--dry-run")
    assert code == 0
    assert out.startswith("gc (dry run): would evict 1 blob(s)")
    row = next(line for line in out.splitlines() if line.startswith(filled.old))
    assert "ttl" in row and "retention TTL is 7.0 days" in row and "terminal" in row
    assert filled.store.stat(filled.old_sha).size == 1500  # nothing removed
    code, data = run_json(capsys, "gc", "--dry-run")
    assert data["dry_run"] is True and [e["handle"] for e in data["evicted"]] == [filled.old]

    code, data = run_json(capsys, "gc")
    assert code == 0 and data["dry_run"] is False
    assert [(e["handle"], e["reason"]) for e in data["evicted"]] == [(filled.old, "ttl")]
    code, data = run_json(capsys, "blobs", "show", filled.old)
    assert data["state"] == "evicted" and data["tombstone"]["reason"] == "ttl"
    code, out, _ = run(capsys, "gc")
    assert out.startswith("gc: evicted 0 blob(s)")


def test_gc_uses_the_configured_size_cap(filled, capsys):
    write_config(filled.home, {"store": {"max_store_mb": 1, "ttl_hours": 87_000}})
    filled.store.put(b"x" * (1 << 20), tool_name="big")
    _, data = run_json(capsys, "gc", "--dry-run")
    assert {e["reason"] for e in data["evicted"]} == {"size-cap"}
    assert data["total_bytes_after"] <= 1 << 20


def test_gc_refuses_an_invalid_config(filled, capsys):
    write_config(filled.home, {"store": {"ttl_hours": -1}})
    code, _, err = run(capsys, "gc")
    assert code == 1 and "invalid configuration" in err and "stowage.store.ttl_hours" in err
    assert filled.store.stat(filled.old_sha)  # nothing evicted under default limits


# -- doctor -----------------------------------------------------------------------


def flip_byte(filled) -> None:
    with open(filled.store.blob_path(filled.log_sha), "r+b") as fh:
        fh.seek(10)
        byte = fh.read(1)
        fh.seek(10)
        fh.write(bytes([byte[0] ^ 0x01]))


def test_doctor_clean(filled, capsys):
    select_stowage(filled.home)
    code, out, _ = run(capsys, "doctor")
    assert code == 0 and "4 blobs checked (hashes verified" in out and "result: no problems" in out
    assert "loads offline" in out and re.search(r"config\s+valid", out)


def test_doctor_finds_a_flipped_byte_and_repair_quarantines_it(filled, capsys):
    select_stowage(filled.home)
    flip_byte(filled)
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert re.search(rf"error\s+corrupt-blob\s+{filled.log_sha[:16]}\s+repairable", out), out
    assert "`stowage doctor --repair` can fix 1" in out
    code, data = run_json(capsys, "doctor", "--no-verify")  # without rehashing the flip goes unseen
    assert code == 0 and data["store"]["verified"] is False

    code, data = run_json(capsys, "doctor", "--repair")
    assert code == 0 and data["remaining"] == 0
    assert [(i["kind"], i["repaired"]) for i in data["issues"]] == [("corrupt-blob", True)]
    assert [p.name[:64] for p in (filled.root / "quarantine").iterdir()] == [filled.log_sha]
    code, out, _ = run(capsys, "blobs", "show", filled.log)
    assert "(evicted)" in out and "corrupt" in out
    code, out, _ = run(capsys, "doctor")
    assert code == 0 and "result: no problems" in out


def test_doctor_reports_an_invalid_config(filled, capsys):
    write_config(filled.home, {"store": {"ttl_hourz": 3}, "compaction": {"threshold": 2}})
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert re.search(r"config\s+INVALID", out)
    assert "stowage.store.ttl_hourz: unknown key (did you mean 'ttl_hours'?)" in out
    assert "stowage.compaction.threshold = 2: out of range" in out
    assert out.count("Stowage configuration error in") == 1, out  # the table's row, not repeated below it
    code, data = run_json(capsys, "doctor")
    assert data["config"]["valid"] is False and len(data["config"]["problems"]) == 2
    assert data["issues"][0]["kind"] == "config-invalid"
    assert data["store"]["blobs_checked"] == 4  # the store is still checked
    code, out, _ = run(capsys, "status")
    assert code == 0 and "INVALID: 2 problem(s)" in out and "retention (defaults" in out


def test_doctor_reports_unreadable_yaml(filled, capsys):
    (filled.home / "config.yaml").write_text("stowage: [unclosed\n", encoding="utf-8")
    code, data = run_json(capsys, "doctor")
    assert code == 1 and "cannot read the config file" in data["config"]["problems"][0]


def test_doctor_reports_a_tokenizer_that_does_not_load_offline(filled, capsys, monkeypatch):
    from stowage.context_engine.chat import tokenizer_loader

    monkeypatch.setattr(
        "stowage.command.env.load_encoding",
        lambda name, allow_download=False: tokenizer_loader.LoadedEncoding(
            None, "unavailable", "bpe-openai (which ships the BPE files) is not installed"
        ),
    )
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "does NOT load offline" in out and "tokenizer-offline" in out


# -- every subcommand speaks JSON ------------------------------------------------------


@pytest.mark.parametrize("argv", [["status"], ["blobs", "ls"], ["gc", "--dry-run"], ["doctor", "--no-verify"]])
def test_json_output_parses(filled, capsys, argv):
    select_stowage(filled.home)
    code, data = run_json(capsys, *argv)
    assert code == 0 and isinstance(data, dict) and data


def test_help_and_usage_errors(capsys):
    assert main(["--help"]) == 0
    assert "blobs" in capsys.readouterr().out
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["blobs"]) == 2
    assert "ls, show, cat or rm" in capsys.readouterr().err
