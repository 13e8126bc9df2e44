"""A lab cluster's life is tied to the tool's: its watchdog, and the cleanup of what killed runs left.

`Watchdog.arm()` starts this file as a process (`python -I -S watchdog.py FD PID BASE_DIR REMOVE`)
that blocks reading the pipe FD whose write end only the tool holds. A byte (`disarm()`) means
"stopped cleanly, go away"; end-of-file means the tool died without stopping (SIGKILL, OOM): the
watchdog then stops the postmaster PID (SIGQUIT, the immediate shutdown; SIGKILL after a few
seconds) and, when REMOVE is 1, deletes BASE_DIR. Each lab folder we make carries OWNER_FILE; a
later run removes folders whose owner is gone (`remove_stale_labs`). Standard library only, so the
watchdog process starts fast.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

STOP_WAIT_S = 5.0
OWNER_FILE = ".pgio-owner"  # in a base folder we made: "<pid> <start time>" of the process that owns it


class Watchdog:
    """The tool's side: arm() after the server started, disarm() once it is stopped."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._w: int | None = None

    def arm(self, postmaster_pid: int | None, base_dir: Path, remove: bool) -> None:
        self.disarm()
        if postmaster_pid is None:
            return
        r, w = os.pipe()  # neither end is inherited by other children (pgbench, pg_ctl)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, str(r), str(postmaster_pid), str(base_dir),
                 "1" if remove else "0"],
                pass_fds=(r,), start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        except OSError:
            os.close(w)
            raise
        finally:
            os.close(r)
        self._w = w

    def disarm(self) -> None:
        if self._w is not None:
            try:
                os.write(self._w, b"x")
            except OSError:
                pass
            os.close(self._w)
            self._w = None
        if self._proc is not None:
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None


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


def _process_start(pid: int) -> str | None:
    """The start time of process `pid` (clock ticks since boot), or None when it is gone: with the
    pid it names one process, whatever pids are reused since."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def owner_mark(pid: int) -> str:
    return f"{pid} {_process_start(pid)}\n"


def remove_stale_labs(root: Path) -> list[Path]:
    """Remove lab folders under `root` whose owning process is gone (killed before it could clean
    up), stopping a server still running in one. Folders without our owner mark are left alone."""
    removed = []
    for base in Path(root).glob("*-lab-*"):
        try:
            mark = (base / OWNER_FILE).read_text().split()
            pid, start = int(mark[0]), mark[1]
        except (OSError, ValueError, IndexError):
            continue
        if _process_start(pid) == start:
            continue  # its owner is alive
        try:
            postmaster = int((base / "data" / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            postmaster = None
        if postmaster is not None and str(base / "data") in _cmdline(postmaster):  # not a reused pid
            stop_postmaster(postmaster)
        shutil.rmtree(base, ignore_errors=True)
        removed.append(base)
    return removed


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
