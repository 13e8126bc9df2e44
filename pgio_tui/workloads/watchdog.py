"""The lab cluster's watchdog: the server's life is tied to the tool's.

`python -m pgio_tui.workloads.watchdog FD PID BASE_DIR REMOVE` blocks reading the pipe FD whose
write end only the tool holds. A byte means "stopped cleanly, go away"; end-of-file means the tool
died without stopping (SIGKILL, OOM): the watchdog then stops the postmaster PID (SIGQUIT, the
immediate shutdown; SIGKILL after a few seconds) and, when REMOVE is 1, deletes BASE_DIR.
Standard library only, so it starts fast.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time

STOP_WAIT_S = 5.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_postmaster(pid: int, wait_s: float = STOP_WAIT_S) -> None:
    """Immediate shutdown of the postmaster `pid` (its children follow it), SIGKILL if it lingers."""
    for sig in (signal.SIGQUIT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    fd, pid, base_dir, remove = int(argv[0]), int(argv[1]), argv[2], argv[3] == "1"
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a dropped ssh link is the tool's to handle
    while True:
        try:
            data = os.read(fd, 1)
            break
        except InterruptedError:
            continue
    if data:  # disarmed: the tool stopped the server itself
        return 0
    stop_postmaster(pid)
    if remove:
        shutil.rmtree(base_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
