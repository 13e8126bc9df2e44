"""The quiet terminal driver, in a real terminal (tmux): its input thread sleeps while nothing is
typed, yet keys, a lone Esc (the parser's timeout), a resize and quitting all work.

Textual's own Linux driver wakes its input thread ten times a second; on an idle screen that is the
app's whole CPU. Skips when tmux is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

APP = """
from textual.app import App
from textual.widgets import Static
from pgio_tui.tui.textual_private import QuietInput

class Keys(QuietInput, App):
    BINDINGS = [("escape", "key('esc')", "esc"), ("x", "key('x')", "x"), ("q", "quit", "quit")]
    seen = []

    def compose(self):
        yield Static("starting", id="s")

    def show(self, width, height):
        self.query_one("#s").update(f"{type(self._driver).__name__} keys={self.seen} {width}x{height}")

    def on_resize(self, event):
        self.show(event.size.width, event.size.height)

    def action_key(self, name):
        self.seen.append(name)
        self.show(self.size.width, self.size.height)

Keys().run()
"""


def _switches(pid: int) -> dict[int, int]:
    """Voluntary context switches (wake-ups after sleeping) of each thread but the main one."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        if int(tid) != pid:
            with open(f"/proc/{pid}/task/{tid}/status") as fh:
                out[int(tid)] = int(next(ln for ln in fh if ln.startswith("voluntary_ctxt_switches")).split()[1])
    return out


def test_input_thread_sleeps_while_idle_and_keys_still_arrive(tmp_path):
    script = tmp_path / "keys.py"
    script.write_text(APP)
    tmux = ["tmux", "-L", f"pgio-driver-test-{os.getpid()}"]
    env = f"-u COLUMNS -u LINES PYTHONPATH={os.pathsep.join(sys.path)} "
    subprocess.run([*tmux, "new-session", "-d", "-s", "k", "-x", "100", "-y", "30",
                    f"exec env {env}timeout 60 {sys.executable} {script}"], check=True)

    def screen() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-t", "k"], capture_output=True, text=True).stdout

    def wait_for(text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (s := screen()):
                return s
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never shown; last screen:\n{screen()}")

    try:
        wait_for("QuietDriver keys=[] 100x30")
        pane = int(subprocess.run([*tmux, "display", "-p", "-t", "k", "#{pane_pid}"], capture_output=True,
                                  text=True).stdout)
        with open(f"/proc/{pane}/task/{pane}/children") as fh:
            pid = int(fh.read().split()[0])  # the app, under `timeout`
        time.sleep(0.5)
        before = _switches(pid)
        time.sleep(3)
        after = _switches(pid)
        woken = {tid: after[tid] - before.get(tid, 0) for tid in after}
        assert len(woken) >= 2, woken  # Textual's input and writer threads
        # Textual's own driver: about 30 wake-ups of its input thread in these 3 s
        assert all(n <= 2 for n in woken.values()), woken

        subprocess.run([*tmux, "send-keys", "-t", "k", "Escape"], check=True)  # a lone Esc: the timeout
        wait_for("keys=['esc']")
        subprocess.run([*tmux, "send-keys", "-t", "k", "x"], check=True)
        wait_for("keys=['esc', 'x']")
        subprocess.run([*tmux, "resize-window", "-t", "k", "-x", "90", "-y", "25"], check=True)
        wait_for("90x25")
        t0 = time.monotonic()
        subprocess.run([*tmux, "send-keys", "-t", "k", "q"], check=True)
        while os.path.exists(f"/proc/{pid}") and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{pid}"), "the app did not quit on q"
        assert time.monotonic() - t0 < 3
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
