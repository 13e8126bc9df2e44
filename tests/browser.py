"""A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe), for
the tests that look at our HTML reports as a browser lays them out.

No driver package and no chromedriver: the protocol is JSON messages ended by a NUL byte on two
pipes (Chromium reads fd 3, writes fd 4), which is less code than a WebSocket client and ties us to
no driver version. `Browser.open(path, width)` loads a page; `evaluate()` runs JavaScript in it;
`errors` collects what the page logged as an error; `screenshot()` writes a PNG.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--hide-scrollbars", "--mute-audio", "--font-render-hinting=none")
TIMEOUT_S = 60.0


def chromium() -> str | None:
    """The Chromium (or Chrome) on PATH, if any."""
    return next((p for name in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(name))), None)


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="pgio-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        def fds() -> None:  # in the child: the pipes as fd 3 (commands in) and fd 4 (replies out)
            a, b = os.dup(cmd_r), os.dup(out_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=fds, close_fds=False)  # Python's own fds are not inheritable
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._id = 0
        self.session: str | None = None
        self.errors: list[str] = []
        self.loaded = False
        target = self.send("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    # --- the protocol -------------------------------------------------------------------------

    def send(self, method: str, params: dict | None = None, browser: bool = False) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self._event(reply)

    def _read(self, deadline: float | None = None) -> dict:
        deadline = deadline or time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise BrowserError("no answer from Chromium")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _event(self, msg: dict) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(p.get("exceptionDetails", {}).get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append(p["entry"].get("text", ""))
        elif method == "Page.loadEventFired":
            self.loaded = True

    # --- what the tests use -------------------------------------------------------------------

    def open(self, path: Path, width: int, height: int = 900, media: str = "screen") -> None:
        """Load a file with the viewport `width` CSS px wide, as `media` (screen or print)."""
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})
        self.send("Emulation.setEmulatedMedia", {"media": media})
        self.loaded = False
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()})
        deadline = time.monotonic() + TIMEOUT_S
        while not self.loaded:
            self._event(self._read(deadline))

    def evaluate(self, js: str):
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"{js[:60]}…: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def screenshot(self, path: Path, max_height: int = 4000) -> Path:
        """The page from its top (at most max_height px of it) as a PNG."""
        width, height = self.evaluate("[document.documentElement.clientWidth, document.documentElement.scrollHeight]")
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
            "x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", browser=True)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._cmd_w, self._out_r):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

