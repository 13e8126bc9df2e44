"""/proc files kept open between ticks (procfs.PolledFiles, BackendTracker's /proc/<pid>/io): each
read is the file as it is now, a process's file follows that process only, and files of processes
no longer listed are closed."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from pgio_tui.sources.backends import LOCAL, ROW, BackendTracker, read_proc_io
from pgio_tui.sources.procfs import LocalProc, PolledFiles, poller


def open_files(pattern: str) -> list[str]:
    """What this process's open descriptors point at, among paths containing `pattern`."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if pattern in target:
            out.append(target)
    return out


def test_polled_files_read_the_file_as_it_is_now():
    read = PolledFiles()
    first = read("/proc/uptime")
    time.sleep(0.05)  # /proc/uptime moves in 10 ms steps
    second = read("/proc/uptime")
    assert first != second and float(second.split()[0]) > float(first.split()[0])
    assert len(open_files("/proc/uptime")) == 1  # one descriptor, read again
    mem = read("/proc/meminfo")
    assert mem.startswith("MemTotal:") and mem.count("\n") == LocalProc().read("/proc/meminfo").count("\n")
    assert read("/proc/no-such-file") is None
    read.close()
    assert open_files("/proc/uptime") == []


def test_poller_keeps_files_open_only_for_this_hosts_plain_reader():
    class Captured(LocalProc):  # a test's captured files: its own read, never this host's /proc
        def read(self, path):
            return "captured"

    assert isinstance(poller(LocalProc()), PolledFiles)
    captured = Captured()
    assert poller(captured)("/proc/meminfo") == "captured"


def _row(pid: int, start: float) -> list:
    vals = {"pid": pid, "backend_type": "client backend", "application": "app", "database": "db",
            "state": "active", "wait_event_type": None, "wait_event": None, "query_start": start,
            "query_id": None, "backend_start": start, "pg_read_bytes": None, "pg_write_bytes": None}
    return [vals.get(k) for k in ROW]  # autovacuum: a client backend has no query read


WRITER = """
import os, sys
path = sys.argv[1]
for line in sys.stdin:  # each line: write and fsync 1 MB, then say so
    with open(path, "ab") as f:
        f.write(b"x" * 1_000_000)
        f.flush()
        os.fsync(f.fileno())
    print("ok", flush=True)
"""


def test_a_processs_io_file_follows_it_until_it_exits(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "data")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    pid = child.pid
    try:
        t = BackendTracker(proc_mode=LOCAL)
        assert t.update([_row(pid, 50.0)], server_t=100.0, dt=None)[0]["write_bytes_s"] is None  # first value
        before = read_proc_io(pid)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "ok\n"
        after = read_proc_io(pid)  # read here, independently of the tracker's open file
        out = t.update([_row(pid, 50.0)], server_t=101.0, dt=1.0)[0]
        assert after[1] - before[1] >= 1_000_000
        assert out["write_bytes_s"] == after[1] - before[1] and out["read_bytes_s"] == after[0] - before[0]
        assert open_files(f"/proc/{pid}/io") == [f"/proc/{pid}/io"]
        t.update([], server_t=102.0, dt=1.0)  # not listed: its file is closed
        assert open_files(f"/proc/{pid}/io") == []
        t.update([_row(pid, 50.0)], server_t=103.0, dt=1.0)
        assert len(open_files(f"/proc/{pid}/io")) == 1
    finally:
        child.stdin.close()
        child.wait(10)
    # gone (and reaped): its file, still open, reads as gone; no figure, and the file is let go
    out = t.update([_row(pid, 50.0)], server_t=104.0, dt=1.0)[0]
    assert out["read_bytes_s"] is None and out["write_bytes_s"] is None
    assert open_files(f"/proc/{pid}/io") == []
    t.close()


def test_proc_io_parsed_from_the_kernels_text_in_any_line_order():
    """parse_proc_io on a captured /proc/<pid>/io (Linux 6.18, a process that wrote and read 4 MB
    through the disk), and on the same lines in another order (read by name then)."""
    from pathlib import Path

    from pgio_tui.sources.backends import parse_proc_io

    text = (Path(__file__).parent / "data" / "proc" / "vm-6.18" / "pid_io.0").read_bytes()
    fields = dict(line.split(b": ") for line in text.splitlines())
    want = (int(fields[b"read_bytes"]), int(fields[b"write_bytes"]))
    assert want == (4198400, 4227072)
    assert parse_proc_io(text) == want
    lines = text.splitlines(keepends=True)
    assert parse_proc_io(b"".join(reversed(lines))) == want
    assert parse_proc_io(b"".join(lines[4:6])) == want  # no rchar..syscw lines
    assert parse_proc_io(b"".join(lines[:5])) is None  # no write_bytes
    live = read_proc_io(os.getpid())
    assert live is not None and live[0] >= 0 and live[1] >= 0
