"""A lab cluster's life is tied to the tool's: its watchdog, and the cleanup of what killed runs left.

`Watchdog.arm()` starts this file as a process (`python -I -S watchdog.py FD PID BASE_DIR REMOVE`)
that blocks reading the pipe FD whose write end only the tool holds. `x` (`disarm()`) means
"stopped cleanly, go away"; `+PATH\0` (`adopt()`) names one more folder of ours to remove, such as
pgbench's per-transaction log folder; end-of-file means the tool died without stopping (SIGKILL,
OOM): the watchdog then stops the postmaster PID (SIGQUIT, the immediate shutdown; SIGKILL after a
few seconds), deletes the adopted folders and, when REMOVE is 1, BASE_DIR. Standard library only,
so the watchdog process starts fast.

Each lab folder we make carries OWNER_FILE, signed with a key only this user can read (LAB_KEY): a
later run removes a folder whose owner is gone only when the folder is ours (its owner and mode
as we made it, the mark a regular 0600 file of ours with a valid signature), and stops only the
postmaster the mark names, when its start time still matches. Nothing another user can write in
TMPDIR, and no postmaster.pid, decides what is removed or killed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import stat
import signal
import subprocess
import sys
import time
from pathlib import Path

STOP_WAIT_S = 5.0
OWNER_FILE = ".pgio-owner"  # in a base folder we made: owner and postmaster (pid, start time), signed
KEY_ENV = "PGIO_STATE_DIR"  # where LAB_KEY lives: default $XDG_STATE_HOME/pgio-tui (~/.local/state/pgio-tui)
LAB_KEY = "lab.key"
_armed: set["Watchdog"] = set()  # the watchdogs of this process's running lab servers


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
        _armed.add(self)

    def adopt(self, path: Path) -> None:
        """Remove `path` too if the tool dies without cleaning up."""
        if self._w is not None:
            try:
                os.write(self._w, b"+" + os.fsencode(str(path)) + b"\0")
            except OSError:
                pass

    def disarm(self) -> None:
        _armed.discard(self)
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


def adopt(path: Path) -> None:
    """A folder of ours (pgbench's log folder) that the watchdogs of this process's lab servers
    remove if the tool is killed."""
    for dog in list(_armed):
        dog.adopt(path)


def _key_path() -> Path:
    state = os.environ.get(KEY_ENV) or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state"), "pgio-tui")
    return Path(state) / LAB_KEY


def lab_key(create: bool = False) -> bytes | None:
    """This user's secret for signing lab folders: a 0600 file in a 0700 folder of ours; None when
    there is none (nothing is then trusted as ours) or it is not private."""
    path = _key_path()
    if create and not path.exists():
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
        except FileExistsError:
            pass  # a concurrent run made it
        except OSError:
            return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        return f.read(200).strip().encode() or None


def _signature(key: bytes, base: Path, fields: list[str]) -> str:
    return hmac.new(key, "\0".join([str(base), *fields]).encode(), hashlib.sha256).hexdigest()


def write_mark(base: Path, owner_pid: int, postmaster_pid: int | None = None) -> None:
    """OWNER_FILE in `base`: who owns the folder and which postmaster runs in it, signed."""
    key = lab_key(create=True)
    if key is None:
        return  # no private key: later runs will not take the folder for ours (it is left, not misjudged)
    fields = [str(owner_pid), str(_process_start(owner_pid)), str(postmaster_pid or 0),
              str(_process_start(postmaster_pid) if postmaster_pid else None)]
    tmp = Path(base, f"{OWNER_FILE}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(" ".join([*fields, _signature(key, Path(base), fields)]) + "\n")
    os.replace(tmp, Path(base, OWNER_FILE))


def _read_mark(base: Path, key: bytes, owners: set[int]) -> list[str] | None:
    """The mark's fields when `base` is a lab folder we made: a real folder (not a symlink) owned by
    us or the server's user with mode 0700, its mark a regular 0600 file of ours with one link and
    a valid signature; else None."""
    try:
        st = base.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid not in owners or stat.S_IMODE(st.st_mode) != 0o700:
            return None
        fd = os.open(base / OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd) as f:
        mst = os.fstat(f.fileno())
        if (not stat.S_ISREG(mst.st_mode) or mst.st_uid != os.geteuid() or stat.S_IMODE(mst.st_mode) != 0o600
                or mst.st_nlink != 1):
            return None
        words = f.read(400).split()
    if len(words) != 5 or not hmac.compare_digest(words[4], _signature(key, base, words[:4])):
        return None
    return words[:4]


def remove_stale_labs(root: Path, owners: set[int] | None = None) -> list[Path]:
    """Remove lab folders under `root` that we made and whose owning process is gone (killed before
    it could clean up), stopping the postmaster the mark names if it still runs. `owners`: the uids
    a lab folder of ours may belong to (ours; the server's user under root)."""
    key = lab_key()
    if key is None:
        return []
    owners = owners or {os.geteuid()}
    removed = []
    for base in Path(root).glob("*-lab-*"):
        mark = _read_mark(base, key, owners)
        if mark is None:
            continue  # not a folder we made: not ours to judge
        pid, start, postmaster, postmaster_start = mark
        if pid.isdigit() and _process_start(int(pid)) == start:
            continue  # its owner is alive
        if postmaster.isdigit() and int(postmaster) and _process_start(int(postmaster)) == postmaster_start:
            stop_postmaster(int(postmaster))  # the very process we started (pid and start time)
        shutil.rmtree(base, ignore_errors=True)
        removed.append(base)
    return removed


def main(argv: list[str]) -> int:
    fd, pid, base_dir, remove = int(argv[0]), int(argv[1]), argv[2], argv[3] == "1"
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a dropped ssh link is the tool's to handle
    adopted: list[bytes] = []
    buf = b""
    while True:
        try:
            data = os.read(fd, 4096)
        except InterruptedError:
            continue
        if not data:
            break  # the tool died without stopping the server
        buf += data
        while buf:
            if buf[:1] == b"x":  # disarmed: the tool stopped the server itself
                return 0
            end = buf.find(b"\0")
            if end < 0:
                break
            adopted.append(buf[1:end])
            buf = buf[end + 1:]
    stop_postmaster(pid)
    for path in adopted:
        shutil.rmtree(os.fsdecode(path), ignore_errors=True)
    if remove:
        shutil.rmtree(base_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
