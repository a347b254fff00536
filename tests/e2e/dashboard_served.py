"""Serving Hermes's web dashboard for a Hermes home, and asking its Stowage API (the dashboard e2e tests share it)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from stowage_dev.browser import chromium_path
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import HERMES

CHROMIUM = chromium_path() or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TOKEN = "stowage-dashboard-test-token-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, token: str | None = TOKEN, method: str = "GET") -> tuple[int, Any]:
    """Status and JSON body (or text) of one request to the dashboard, with its session token."""
    request = urllib.request.Request(url, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, body.decode("utf-8", "replace")


@contextmanager
def dashboard_served(home: HermesHome, log_path: Path) -> Iterator[str]:
    """``hermes dashboard`` for ``home`` on a free port until it serves the Stowage API; yields its base URL."""
    port = free_port()
    log = log_path.open("w")
    proc = subprocess.Popen(
        [HERMES, "dashboard", "--host", "127.0.0.1", "--port", str(port), "--no-open", "--skip-build"],
        env=home.env({"HERMES_DASHBOARD_SESSION_TOKEN": TOKEN}),
        cwd=home.work_dir,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):  # until it answers (or dies)
            if proc.poll() is not None:
                break
            try:
                if get(f"{base}/api/plugins/stowage/sessions")[0] == 200:
                    break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        if proc.poll() is not None or get(f"{base}/api/plugins/stowage/sessions")[0] != 200:
            log.flush()
            pytest.fail("the dashboard did not serve the Stowage API:\n" + log_path.read_text()[-4000:])
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
