"""``store_root`` and ``retention_policy``: the config's units mapped onto the store's."""

from __future__ import annotations

from pathlib import Path

import pytest

from stowage.blobstore import RetentionPolicy
from stowage.context_engine.config.settings import default_settings, load_settings
from stowage.context_engine.store_session.store_config import retention_policy, store_root


def settings(**store):
    return load_settings({"stowage": {"store": store}})


def test_defaults_match_the_stores_own_defaults():
    policy = retention_policy(default_settings())
    assert policy == RetentionPolicy()  # 168 h, 1024 MB = 1 GiB, 1 h grace, 30 days of tombstones


def test_units_are_converted():
    policy = retention_policy(settings(ttl_hours=0.5, max_store_mb=1.5, fetch_grace_hours=0, tombstone_ttl_days=0))
    assert policy.ttl_seconds == 1800.0
    assert policy.max_total_bytes == int(1.5 * 1024 * 1024)
    assert policy.fetch_grace_seconds == 0.0 and policy.tombstone_ttl_seconds == 0.0
    assert isinstance(policy.max_total_bytes, int)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("", "HOME/stowage"),
        ("   ", "HOME/stowage"),
        ("blobs", "HOME/blobs"),
        ("/srv/stowage", "/srv/stowage"),
        ("$STOWAGE_TEST_DIR/x", "/data/x"),
        ("~/s", "USER/s"),
    ],
)
def test_store_root(tmp_path, monkeypatch, raw, expected):
    monkeypatch.setenv("STOWAGE_TEST_DIR", "/data")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    home = tmp_path / "hermes"
    want = Path(expected.replace("HOME", str(home)).replace("USER", str(tmp_path / "user")))
    assert store_root(settings(path=raw), home) == want


def test_store_settings_imports_nothing_from_hermes():
    import ast

    import stowage.context_engine.store_session.store_config as mod

    tree = ast.parse(Path(mod.__file__).read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert all(
        m is None or m.split(".")[0] not in {"agent", "hermes_cli", "hermes_constants", "stowage"} for m in modules
    ), modules
