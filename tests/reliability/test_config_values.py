"""Bad config values are refused at start with the key named, and the doctor agrees.

Every number key gets YAML's ``.nan``/``.inf``, huge integers and other junk;
each must either be accepted as a finite value in range or raise
:class:`StowageConfigError` naming the key, never a bare ValueError or
OverflowError and never a silently accepted NaN.
"""

from __future__ import annotations

import json
import math

import pytest
import yaml

from stowage.context_engine.config.schema import INTEGER, KEYS, NUMBER
from stowage.context_engine.config.settings import StowageConfigError, load_settings

pytestmark = pytest.mark.reliability

BAD_NUMBERS = [
    ".nan",
    ".inf",
    "-.inf",
    ".NaN",
    ".Inf",
    "1e309",
    "-1e309",
    "1" + "0" * 400,
    "-" + "9" * 400,
    "2.5",
    "1e-320",
    "[1]",
    "{a: 1}",
    "''",
    "null",
    "yes",
    "0x10",
]


def parse(value: str):
    return yaml.safe_load(f"v: {value}")["v"]


def test_every_number_key_refuses_non_finite_and_junk_values(figures):
    cases = accepted = refused = 0
    failures = []
    for key in [k for k in KEYS if k.kind in (NUMBER, INTEGER)]:
        for raw in BAD_NUMBERS:
            cases += 1
            value = parse(raw)
            config = {"stowage": {key.section: {key.name: value}}}
            try:
                settings = load_settings(config)
            except StowageConfigError as exc:
                refused += 1
                if f"stowage.{key.path}" not in str(exc):
                    failures.append(f"{key.path}={raw}: error does not name the key: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - counted
                failures.append(f"{key.path}={raw}: {type(exc).__name__}: {exc}")
                continue
            accepted += 1
            got = getattr(getattr(settings, key.section), key.name)
            if not (isinstance(got, (int, float)) and math.isfinite(got) and key.minimum <= got <= key.maximum):
                failures.append(f"{key.path}={raw}: accepted as {got!r}")
    figures.update(cases=cases, refused=refused, accepted=accepted, failures=len(failures))
    assert not failures, "\n".join(failures[:20])


def test_inherited_compression_nan_names_the_key():
    with pytest.raises(StowageConfigError, match="compression.target_ratio"):
        load_settings({"compression": {"target_ratio": float("nan")}})


def test_a_file_as_store_path_is_refused_at_start(tmp_path):
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    for path in (str(afile), str(afile / "below")):
        with pytest.raises(StowageConfigError, match="store.path"):
            load_settings({"stowage": {"store": {"path": path}}})
    load_settings({"stowage": {"store": {"path": str(tmp_path / "new-folder")}}})


@pytest.mark.parametrize("raw", [".nan", ".inf", "1e309"])
def test_doctor_agrees_with_start_time_validation(tmp_path, raw, capsys):
    from stowage.command import main

    (tmp_path / "config.yaml").write_text(f"stowage:\n  compaction:\n    target_ratio: {raw}\n")
    code = main(["--hermes-home", str(tmp_path), "--json", "doctor", "--no-verify"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["config"]["valid"] is False
    assert any("stowage.compaction.target_ratio" in p for p in data["config"]["problems"])
