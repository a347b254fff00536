"""Headless Chromium driven over the DevTools protocol on a pipe: pages seen as a user sees them.

The e2e tests render the dashboard tab and the replay report in Debian's
``chromium`` at a laptop's window size, measure the laid-out page with
JavaScript (row heights, overflow, SVG strokes) and keep a screenshot.
``--remote-debugging-pipe`` needs no port and no extra library: the browser
reads commands from fd 3 and writes replies to fd 4, each a JSON object
ended by a NUL byte.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

LAPTOP = (1366, 768)  # the most common laptop screen
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return found or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page (a tab); use as a context manager."""

    def __init__(self, size: tuple[int, int] = LAPTOP, executable: str | None = None) -> None:
        self.size = size
        self.executable = executable or chromium_path()
        if self.executable is None:
            raise BrowserError("chromium is not installed (Debian: apt-get install chromium)")
        self._next_id = 0
        self._buffer = b""
        self.session: str | None = None

    def __enter__(self) -> "Browser":
        self.profile = tempfile.mkdtemp(prefix="stowage-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends on the fds the browser expects
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [
                self.executable,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                f"--window-size={self.size[0]},{self.size[1]}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )  # kept open past close_fds, which runs after preexec_fn
        os.close(to_browser_r)
        os.close(from_browser_w)
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t["targetId"] for t in targets if t.get("type") == "page")
        self.session = self.send("Target.attachToTarget", targetId=page, flatten=True)["sessionId"]
        self.send("Page.enable")
        self._window(self.size[1])
        return self

    def _window(self, height: int) -> None:
        """The window is ``self.size`` wide and ``height`` CSS px tall, at one device pixel per CSS px."""
        self.send(
            "Emulation.setDeviceMetricsOverride", width=self.size[0], height=height, deviceScaleFactor=1, mobile=False
        )

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", browser_level=True)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- protocol -------------------------------------------------------------------
    def send(self, method: str, browser_level: bool = False, **params: Any) -> dict[str, Any]:
        """One command; its result (events that arrive meanwhile are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session and not browser_level and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    # -- what tests use --------------------------------------------------------------
    def open(self, url: str, ready: str, timeout: float = 60) -> None:
        """Load ``url`` and wait until the JavaScript expression ``ready`` is true (a wait, not a timing test)."""
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(f"Boolean({ready})"):
                self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                return
            time.sleep(0.25)
        raise BrowserError(
            f"{url}: the page never got ready ({ready}); body: "
            + str(self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''"))
        )

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if result.get("exceptionDetails"):
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def screenshot(self, path: Path, full_page: bool = True, clip: dict[str, float] | None = None) -> Path:
        """A PNG of the page (the whole scrollable page by default, or ``clip``: x, y, width, height in CSS px)."""
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params.update(captureBeyondViewport=True, clip={**clip, "scale": 1})
        elif full_page:
            # Apps such as the Hermes dashboard scroll an inner pane, not the document: the window grows to the
            # tallest scrolling content for the picture (widths, and so the layout across, stay the same).
            height = int(
                self.evaluate("Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
                or self.size[1]
            )
            self._window(max(height, self.size[1]))
            self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        try:
            data = base64.b64decode(self.send("Page.captureScreenshot", **params)["data"])
        finally:
            if full_page and clip is None:
                self._window(self.size[1])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA bytes) of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
    if header is None:
        raise ValueError(f"{path}: no IHDR")
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, color type {color}, interlace {interlace})")
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        previous = line
        if channels == 3:
            rows.append(bytes(b for px in range(width) for b in (*line[px * 3 : px * 3 + 3], 255)))
        else:
            rows.append(bytes(line))
    return width, height, rows


def count_color(path: Path, box: tuple[int, int, int, int], rgb: tuple[int, int, int], tolerance: int = 40) -> int:
    """Pixels within ``tolerance`` (per channel) of ``rgb`` inside ``box`` = (x, y, width, height)."""
    width, height, rows = read_png(path)
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(width, box[0] + box[2]), min(height, box[1] + box[3])
    found = 0
    for y in range(y0, y1):
        row = rows[y]
        for x in range(x0, x1):
            r, g, b = row[4 * x], row[4 * x + 1], row[4 * x + 2]
            if abs(r - rgb[0]) <= tolerance and abs(g - rgb[1]) <= tolerance and abs(b - rgb[2]) <= tolerance:
                found += 1
    return found
