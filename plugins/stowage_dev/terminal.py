"""The interactive ``hermes chat`` on a pseudo-terminal: what a user at a terminal sees.

``hermes chat`` without ``-q`` runs a prompt_toolkit application, which only
draws on a terminal; the tests type into it through a pty and read the
screen's text with the escape sequences removed.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from typing import Mapping

from .hermes_home import HermesHome
from .runner import HERMES

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>]|\r")


def plain(text: str) -> str:
    """Terminal output without escape sequences and carriage returns."""
    return _ESCAPES.sub("", text)


class InteractiveChat:
    """``hermes chat`` in ``home`` on a pty; ``with`` starts it and ends it (``/exit``, then terminate)."""

    def __init__(self, home: HermesHome, env: Mapping[str, str] | None = None, columns: int = 160) -> None:
        self.home, self.columns = home, columns
        self.extra = dict(env or {})
        self._raw = bytearray()

    def __enter__(self) -> "InteractiveChat":
        master, slave = pty.openpty()
        env = self.home.env({"TERM": "xterm-256color", "COLUMNS": str(self.columns), "LINES": "50", **self.extra})
        self.proc = subprocess.Popen(
            [HERMES, "chat"],
            env=env,
            cwd=self.home.work_dir,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.fd = master
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.type("/exit")
            self.read_until(None, 10)
        except OSError:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.fd)

    @property
    def text(self) -> str:
        return plain(self._raw.decode("utf-8", "replace"))

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def read_until(self, needle: str | None, timeout: float) -> bool:
        """Read the screen until ``needle`` shows (True) or ``timeout`` passes (a wait, not a timing test)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.25)
            if ready:
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except OSError:  # the child closed the terminal
                    return needle is not None and needle in self.text
                if not chunk:
                    break
                self._raw += chunk
                if needle is not None and needle in self.text:
                    return True
        return needle is not None and needle in self.text
