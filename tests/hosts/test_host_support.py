"""The load-time check: what works on the running Hermes, for any version string."""

from __future__ import annotations

import logging

from stowage.host import host_support
from stowage.host.host_support import assess


def test_current_host_is_fully_supported():
    support = assess("0.19.0")
    assert support.supported and not support.missing


def test_old_hosts_list_what_is_missing():
    support = assess("0.13.0")
    assert support.supported
    assert any("tool search" in m and "needs 0.17.0" in m for m in support.missing)
    assert "summaries" in support.note
    assert not any("tool search" in m for m in assess("0.17.0").missing)


def test_below_the_floor_says_upgrade():
    support = assess("0.12.4")
    assert not support.supported and "upgrade Hermes" in support.note


def test_unknown_future_and_garbage_versions_keep_working():
    future = assess("0.23.1")
    assert future.supported and "newer than the newest tested" in future.note
    assert assess("0.19.3").supported and "fully supported" in assess("0.19.3").note
    for odd in (None, "", "main", "dev-build"):
        support = assess(odd)
        assert support.supported and "unknown" in support.note


def test_check_host_logs_its_note(monkeypatch, caplog):
    monkeypatch.setattr(host_support, "installed_version", lambda: "0.13.0")
    with caplog.at_level(logging.INFO, logger=host_support.__name__):
        support = host_support.check_host()
    assert support.as_status().hermes == "0.13.0"
