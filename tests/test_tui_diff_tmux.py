"""End to end in a real terminal: `pgio-tui diff A B` (no --format) in tmux shows the diff screen,
switches tabs on keys and quits on q. Skips when tmux is not installed.

Uses a private tmux server (-L), so it never touches anyone's sessions, and `timeout` so the app
cannot outlive the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from test_diff_fixtures import write_pair

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _wait_for(tmux, predicate, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        out = subprocess.run([*tmux, "capture-pane", "-p", "-t", "diff"], capture_output=True, text=True)
        screen = out.stdout
        if out.returncode == 0 and predicate(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"screen never matched; last capture:\n{screen}")


def _gone(tmux, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if subprocess.run([*tmux, "has-session", "-t", "diff"], capture_output=True).returncode != 0:
            return True
        time.sleep(0.2)
    return False


def test_diff_screen_in_tmux(tmp_path):
    a, b = write_pair(tmp_path)
    tmux = ["tmux", "-L", f"pgio-diff-test-{os.getpid()}"]
    # pytest exports COLUMNS/LINES (80x24), which the app would take over the tmux window's size
    env = f"-u COLUMNS -u LINES XDG_CONFIG_HOME={tmp_path / 'config'} TEXTUAL_THEME= "
    cmd = f"cd {tmp_path} && env {env}timeout 30 {sys.executable} -m pgio_tui diff {a.name} {b.name} --align workload"
    subprocess.run([*tmux, "new-session", "-d", "-s", "diff", "-x", "120", "-y", "40", cmd], check=True)
    try:
        # the summary table (the first paint may come before the terminal's 120 x 40 size arrives)
        screen = _wait_for(tmux, lambda s: "1 Summary" in s and "backend buffers" in s)
        assert "■A a.pgio (lab-a)" in screen and "■B b.pgio (lab-b)" in screen
        assert "-80.0 %" in screen and "changed" in screen
        assert "29s from the workload start" in screen
        subprocess.run([*tmux, "send-keys", "-t", "diff", "2"], check=True)
        screen = _wait_for(tmux, lambda s: "Latency percentiles" in s and "ckpt│" in s)  # painted, not just titled
        assert "Dirty / Writeback" in screen and "Devices by role" in screen
        subprocess.run([*tmux, "send-keys", "-t", "diff", "3"], check=True)
        screen = _wait_for(tmux, lambda s: "settings that differ" in s)
        assert "backend_flush_after" in screen and "mq-deadline" in screen
        subprocess.run([*tmux, "send-keys", "-t", "diff", "q"], check=True)
        assert _gone(tmux), "q did not end pgio-tui diff"
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
