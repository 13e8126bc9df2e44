"""The first frame goes out whole when Textual's start-up is over, not at the screen's update timer
(why: textual_private/terminal.py, `paint_pending`).

Run for real: `pgio-tui replay` on a pseudo-terminal of 80x24, with Textual's frame rate at 1 a
second (TEXTUAL_FPS), so a frame left to the timer comes a second after the panes. With the fast
path off (Textual's own way) it does, which shows the test tells the two apart.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]")

PANES = b"% of "  # the checkpoint pane's timed bar: in every layout
FOOTER = b"Play/Pause"  # replay's footer
LATE_S = 0.5  # the timer's frame comes 1 s after the batch at TEXTUAL_FPS=1; a painted one at once


def _own_terminal() -> None:
    """In the child: a session of its own, the pty (its stdin) as its controlling terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _panes_then_footer(recording, fast_path: str, tmp_path) -> tuple[float, bytes]:
    """Seconds from the panes on the terminal to the footer, and the text the terminal got."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "TEXTUAL_FPS": "1", "PGIO_TUI_FAST_PATH": fast_path, "TERM": "xterm-256color",
           "XDG_CONFIG_HOME": str(tmp_path), "COLUMNS": "80", "LINES": "24"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pgio_tui", "replay", str(recording)], stdin=slave,
                            stdout=slave, stderr=slave, env=env, cwd=tmp_path, preexec_fn=_own_terminal)
    os.close(slave)
    out, panes_at, footer_at = b"", None, None
    try:
        deadline = start + 60
        while footer_at is None and time.monotonic() < deadline and proc.poll() is None:
            if not select.select([master], [], [], 0.05)[0]:
                continue
            try:
                out += os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            now, text = time.monotonic(), ESCAPES.sub(b"", out)  # the text, its colours and moves left out
            if panes_at is None and PANES in text:
                panes_at = now
            if panes_at is not None and FOOTER in text[text.find(PANES):]:
                footer_at = now
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    assert panes_at is not None and footer_at is not None, f"no first frame; the terminal got:\n{out[-2000:]!r}"
    return footer_at - panes_at, ESCAPES.sub(b"", out)


@pytest.mark.parametrize("fast_path", ["on", "off"])
def test_first_frame_has_its_footer_at_once(fixture_file, tmp_path, fast_path):
    footer_after, out = _panes_then_footer(fixture_file, fast_path, tmp_path)
    assert b"tick " in out and b"PG " in out  # the timeline and the header came with the panes
    if fast_path == "on":
        assert footer_after < LATE_S, f"the footer came {footer_after:.3f} s after the panes: at the update timer"
    else:  # Textual's way: the whole frame at the update timer, a second after the batch
        assert footer_after >= LATE_S, f"the footer came {footer_after:.3f} s after the panes"
