"""The server log read straight from the file, on the database host.

Stock Debian/Ubuntu run PostgreSQL without logging_collector: pg_current_logfile() is NULL and
the log is whatever the postmaster's stderr points to (`pg_ctl -l FILE`, Debian's
/var/log/postgresql/postgresql-15-main.log). On the database host the file can still be found and
read when this OS user may: the collector's file under the data directory, else the postmaster's
stderr (/proc/<postmaster pid>/fd/2, postmaster.pid gives the PID). Lines read here go through
the same checkpointer-only filter (sources/serverlog.py) as lines read through SQL.
"""

from __future__ import annotations

import os

CHUNK = 1 << 20  # at most this much log per tick, as on the SQL path


def postmaster_pid(datadir: str) -> int | None:
    """The first line of postmaster.pid (readable by the server's OS user and root)."""
    try:
        with open(os.path.join(datadir, "postmaster.pid")) as fh:
            return int(fh.readline().strip())
    except (OSError, ValueError):
        return None


def stderr_file(pid: int) -> str | None:
    """Where the process's stderr goes, if that is a regular file (not a tty, pipe or /dev/null)."""
    try:
        target = os.readlink(f"/proc/{pid}/fd/2")
    except OSError:
        return None
    try:
        import stat
        if not target.startswith("/") or not stat.S_ISREG(os.stat(target).st_mode):
            return None
    except OSError:
        return None
    return target


def collector_file(datadir: str) -> str | None:
    """The collector's current file, from the data directory's current_logfiles (stderr first)."""
    try:
        with open(os.path.join(datadir, "current_logfiles")) as fh:
            entries = dict(line.rstrip("\n").split(" ", 1) for line in fh if " " in line)
    except (OSError, ValueError):
        return None
    return next((entries[k] for k in ("stderr", "csvlog", "jsonlog") if k in entries), None)


def find_server_log(datadir: str | None, current_logfile: str | None, collector: bool) -> str | None:
    """The server log's path on this host, if this OS user can read it; else None.

    With logging_collector on, the log is the collector's file (the postmaster's stderr then
    holds only what was said before the collector started); without it, the postmaster's stderr.
    """
    candidates = []
    if collector:
        name = current_logfile or (collector_file(datadir) if datadir else None)
        if name:
            candidates.append(name if name.startswith("/") else os.path.join(datadir or "", name))
    else:
        pid = postmaster_pid(datadir) if datadir else None
        if pid is not None and (path := stderr_file(pid)):
            candidates.append(path)
    for path in candidates:
        if os.path.isabs(path) and os.access(path, os.R_OK):
            return path
    return None


def checkpointer_pid(datadir: str | None) -> int | None:
    """The postmaster's child whose title says checkpointer (when pg_stat_activity hides it)."""
    pm = postmaster_pid(datadir) if datadir else None
    if pm is None:
        return None
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid != pm:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"checkpointer" in fh.read():
                    return pid
        except (OSError, ValueError, IndexError):
            continue
    return None


class LogTail:
    """Follows one log file from its end at start; copytruncate and replaced files start over."""

    def __init__(self, path: str):
        self.path = path
        self._tail = b""
        self._ino: int | None = None  # the file's inode: another one is a new file
        try:
            st = os.stat(path)
            self._offset, self._ino = st.st_size, st.st_ino
        except OSError:
            self._offset, self._ino = 0, None

    def lines(self) -> list[str]:
        try:
            st = os.stat(self.path)
            if st.st_ino != self._ino or st.st_size < self._offset:  # rotated or truncated
                self._offset, self._ino, self._tail = 0, st.st_ino, b""
            if st.st_size == self._offset:
                return []
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read(CHUNK)
        except OSError:
            return []
        self._offset += len(chunk)
        *lines, self._tail = (self._tail + chunk).split(b"\n")
        return [ln.decode("utf-8", "replace") for ln in lines]
