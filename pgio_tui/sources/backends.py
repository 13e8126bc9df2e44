"""Backends, pg_activity / iotop style: per process, who it is, what it waits on, and its I/O.

The tick statement lists the server's processes (pgfeatures.backends_sql: background processes
always, client backends when not idle or lately changed state, since an idle client does no I/O),
each with its cumulative pg_stat_get_backend_io(pid) bytes on 18. On the database host the sampler
reads /proc/<pid>/io of those pids (read_bytes / write_bytes: what the process made the kernel
fetch from or send to storage; readable by root and the server's OS user only).

`BackendTracker` turns both counters into per-second rates against the last value seen for the
same process (pid + backend_start). A process absent from a tick keeps its last value (an idle
backend's counters do not move); one started since the previous tick counts from zero; one seen
for the first time otherwise has no rate yet.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, BinaryIO

from pgio_tui.frame import BACKEND_LABELS
from pgio_tui.safe_text import printable

# Columns of a row of pgfeatures.backends_sql(), in order.
# autovacuum: an autovacuum worker's query, which the server writes ("autovacuum: VACUUM public.t (to
# prevent wraparound)"); NULL for every other process (their queries are the users' and are never read).
ROW = ("pid", *BACKEND_LABELS, "query_start", "query_id", "backend_start", "pg_read_bytes", "pg_write_bytes",
       "autovacuum")
assert ROW[1:7] == ("backend_type", "application", "database", "state", "wait_event_type", "wait_event")
_START = ROW.index("backend_start")  # then the two pg_stat_get_backend_io counters
assert ROW[_START:_START + 3] == ("backend_start", "pg_read_bytes", "pg_write_bytes")
AUTOVACUUM = ROW.index("autovacuum")
AUTOVACUUM_CHARS = 200  # of its text read (a schema and table name are at most 63 + 63 bytes)
# Such a query: what the worker does, the table, then the rest (" (to prevent wraparound)" for an anti-wraparound one).
AUTOVACUUM_QUERY = re.compile(r"^autovacuum:\s+(VACUUM(?: ANALYZE)?|ANALYZE|BRIN summarize)\s+(\S+)(.*)$")
_KEPT = ROW[:_START]  # what a backend's dict keeps of its row, before its rates

IO_FILES_OPEN = 256  # /proc/<pid>/io files kept open between ticks (past that: opened for each read)
PRUNE_EVERY = 60  # ticks between looks for processes that are gone
FORGET_AFTER = 3600  # ticks an unlisted process is remembered where /proc can't tell whether it lives
LOCAL, DENIED, ELSEWHERE = "local", "denied", "elsewhere"  # can /proc/<pid>/io be read here?
NOT_LOCAL_NOTE = ("backend read/write bytes (/proc/<pid>/io) only when pgio-tui runs on the database host")
DENIED_NOTE = ("backend read/write bytes: /proc/<pid>/io is readable by root and the server's OS user "
               "only; run pgio-tui as one of them")


# Processes up to which the tick reads pg_stat_activity every tick. pg_stat_get_activity() makes a
# row for every process (linear) and finds each one's PGPROC by a walk of the process array
# (quadratic) before any filter. The backends part's server time, measured on 18 (bench/activity_cost.py:
# idle clients, 300 runs each, median ms): 100 0.09, 200 0.12, 300 0.16, 500 0.25, 700 0.38, 1,000 0.63, 1,400 1.00;
# n·(1 + n/WALK_EQUALS_ROWS_AT) fits it (15 grows faster: 0.14 ms at 300, 1.19 at 1,000). Above
# this count backends_every() spaces the reads so that the part's mean per tick stays at most its
# cost here: 1,000 processes every 4th tick, 1,400 every 7th.
BACKENDS_EVERY_TICK_UP_TO = 300
WALK_EQUALS_ROWS_AT = 3200  # processes where the quadratic walk costs what the rows cost (fitted above)


def backends_every(processes: float | None) -> int:
    """Read pg_stat_activity every k-th tick (1: every tick), k the part's cost with `processes`
    over its cost at BACKENDS_EVERY_TICK_UP_TO, rounded up. `processes`: the connected backends
    (pg_stat_database.numbackends summed, which the tick reads anyway); None: unknown (read now)."""
    if not processes or processes <= BACKENDS_EVERY_TICK_UP_TO:
        return 1
    return math.ceil(_activity_cost(processes) / _activity_cost(BACKENDS_EVERY_TICK_UP_TO))


def _activity_cost(processes: float) -> float:
    """The backends part's cost with so many processes, in units of one row's (see above)."""
    return processes * (1 + processes / WALK_EQUALS_ROWS_AT)


def read_proc_io(pid: int, proc: str = "/proc") -> tuple[int, int] | None:
    """(read_bytes, write_bytes) of a process; None when it is gone. PermissionError when not ours."""
    try:
        with open(f"{proc}/{pid}/io", "rb") as fh:
            text = fh.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return parse_proc_io(text)


def _field(text: bytes, name: bytes) -> int | None:
    """The value of the last line starting with `name` (text begins with a newline)."""
    i = text.rfind(name)
    if i < 0:
        return None
    i += len(name)
    j = text.find(b"\n", i)
    return int(text[i:j] if j >= 0 else text[i:])


def parse_proc_io(text: bytes) -> tuple[int, int] | None:
    """(read_bytes, write_bytes) from /proc/<pid>/io's text; None when either is missing."""
    p = text.split()  # the kernel's layout since 2.6.20: rchar, wchar, syscr, syscw, read_bytes, write_bytes, ...
    if len(p) >= 12 and p[8] == b"read_bytes:" and p[10] == b"write_bytes:":
        return int(p[9]), int(p[11])
    text = b"\n" + text  # any other layout: by name, every line, the first too, starts after a newline
    read, write = _field(text, b"\nread_bytes:"), _field(text, b"\nwrite_bytes:")
    return None if read is None or write is None else (read, write)


def activity_of(rows: list[list] | None) -> tuple[list[list[Any]] | None, int | None]:
    """The wait sample ([backend_type, wait_event_type, wait_event, state, count]) and the
    checkpointer's pid, from the tick's rows of backends_sql (pg_stat_activity read once)."""
    if rows is None:
        return None, None
    counts: dict[tuple, int] = {}
    checkpointer = None
    for r in rows:
        if len(r) != len(ROW):
            continue
        key = (r[1], r[5], r[6], r[4])  # backend_type, wait_event_type, wait_event, state
        counts[key] = counts.get(key, 0) + 1
        if r[1] == "checkpointer" and checkpointer is None:
            checkpointer = r[0]
    return [[*k, n] for k, n in counts.items()], checkpointer


def proc_io_mode(server_pid: int | None, proc: str = "/proc") -> str:
    """LOCAL when this process may read a server process's /proc/<pid>/io (our own connection's
    backend tells), else DENIED."""
    try:
        return LOCAL if server_pid and read_proc_io(server_pid, proc) is not None else DENIED
    except PermissionError:
        return DENIED


def _rate(cur, prev, dt: float | None) -> float | None:
    if cur is None or prev is None or not dt:
        return None
    d = float(cur) - float(prev)
    return d / dt if d >= 0 else None  # a reset (pg_stat_reset_backend_stats): unknown this tick


def io_key(b: dict[str, Any]) -> float:
    """What "sorted by I/O" sorts by: the kernel's bytes where known, else PostgreSQL's."""
    proc = (b.get("read_bytes_s") or 0) + (b.get("write_bytes_s") or 0)
    return proc or (b.get("pg_read_bytes_s") or 0) + (b.get("pg_write_bytes_s") or 0)


class BackendTracker:
    """Last counters per process, and the rates of a tick."""

    def __init__(self, proc_mode: str = ELSEWHERE, proc: str = "/proc"):
        self.proc_mode = proc_mode
        self.proc = proc
        self._proc: dict[tuple, tuple[int, int]] = {}  # (pid, backend_start) -> /proc counters
        self._pg: dict[tuple, tuple] = {}  # (pid, backend_start) -> pg_stat_get_backend_io bytes
        self._prev_t: float | None = None  # server time of the previous tick
        self._ticks = 0
        self._seen_at: dict[tuple, int] = {}  # (pid, backend_start) -> the last tick it was listed
        # (pid, backend_start) -> its /proc/<pid>/io, open while the process is listed: a tick reads
        # it again with one pread() instead of open, read, close. The file stays bound to that
        # process: once it has exited, a read fails (ESRCH) even if its pid is reused.
        self._io_files: dict[tuple, BinaryIO] = {}
        self._vacuums: dict[int, str] = {}  # autovacuum worker pid -> the query last told

    def vacuums(self, rows: list[list] | None) -> list[str]:
        """The autovacuum workers' queries not told before ("autovacuum: VACUUM public.t (to prevent
        wraparound)"), each once while its worker runs it: what a tick's events say of them."""
        told, out = self._vacuums, []
        now: dict[int, str] = {}
        for r in rows or ():
            if len(r) == len(ROW) and r[1] == "autovacuum worker" and isinstance(r[AUTOVACUUM], str):
                text = printable(r[AUTOVACUUM][:AUTOVACUUM_CHARS])
                if text.startswith("autovacuum: "):
                    now[r[0]] = text
                    if told.get(r[0]) != text:
                        out.append(text)
        self._vacuums = now
        return out

    def reset(self) -> None:
        """Counters start over (reconnect, server restart): every process needs a new first value."""
        self._proc, self._pg, self._seen_at, self._prev_t = {}, {}, {}, None
        self._vacuums = {}  # a worker after a restart may reuse a pid and a table: told again
        self.close()

    def close(self) -> None:
        """Close the /proc/<pid>/io files kept open."""
        for f in self._io_files.values():
            f.close()
        self._io_files = {}

    def update(self, rows: list[list] | None, server_t: float, dt: float | None) -> list[dict[str, Any]]:
        """The tick's backends with their rates, sorted by I/O (most first)."""
        out: list[dict[str, Any]] = []
        seen: set[tuple] = set()
        prev_t, n = self._prev_t, len(ROW)
        for r in rows or ():
            if len(r) != n or r[0] is None:
                continue
            b = dict(zip(_KEPT, r))
            start, pg = r[_START], (r[_START + 1], r[_START + 2])
            key = (r[0], start)
            seen.add(key)
            new = prev_t is not None and start is not None and start > prev_t
            old_pg = self._pg.get(key) or ((0, 0) if new else (None, None))
            b["pg_read_bytes_s"], b["pg_write_bytes_s"] = _rate(pg[0], old_pg[0], dt), _rate(pg[1], old_pg[1], dt)
            if pg != (None, None):
                self._pg[key] = pg
            b["read_bytes_s"] = b["write_bytes_s"] = None
            if self.proc_mode == LOCAL:
                self._proc_rates(b, key, new, dt)
            out.append(b)
        self._ticks += 1
        for key in [k for k in self._io_files if k not in seen]:  # not listed now: closed
            self._io_files.pop(key).close()
        self._seen_at.update(dict.fromkeys(seen, self._ticks))
        if self._ticks % PRUNE_EVERY == 0:  # forget processes that are gone (idle ones stay unlisted)
            for key, at in list(self._seen_at.items()):
                if self._ticks - at > PRUNE_EVERY and not self._alive(key[0], self._ticks - at):
                    del self._seen_at[key]
                    self._proc.pop(key, None)
                    self._pg.pop(key, None)
        self._prev_t = server_t
        out.sort(key=lambda b: (-io_key(b), b["state"] != "active", b["pid"]))
        return out

    def _alive(self, pid: int, unseen: int) -> bool:
        """Is the process still there? Locally /proc says; otherwise it is kept FORGET_AFTER ticks."""
        if self.proc_mode == LOCAL:
            return os.path.exists(f"{self.proc}/{pid}")
        return unseen <= FORGET_AFTER

    def _read_io(self, key: tuple) -> tuple[int, int] | None:
        """read_proc_io of the process `key`, from its file kept open."""
        f = self._io_files.get(key)
        if f is None:
            if len(self._io_files) >= IO_FILES_OPEN:
                return read_proc_io(key[0], self.proc)
            try:
                f = open(f"{self.proc}/{key[0]}/io", "rb", buffering=0)
            except (FileNotFoundError, ProcessLookupError):
                return None
            self._io_files[key] = f
        try:
            text = os.pread(f.fileno(), 4096, 0)
        except OSError as exc:
            self._io_files.pop(key).close()
            if isinstance(exc, ProcessLookupError):  # exited
                return None
            raise
        return parse_proc_io(text)

    def _proc_rates(self, b: dict[str, Any], key: tuple, new: bool, dt: float | None) -> None:
        try:
            cur = self._read_io(key)
        except PermissionError:
            self.proc_mode = DENIED
            return
        if cur is None:
            return
        old = self._proc.get(key) or ((0, 0) if new else (None, None))
        b["read_bytes_s"], b["write_bytes_s"] = _rate(cur[0], old[0], dt), _rate(cur[1], old[1], dt)
        self._proc[key] = cur


def recorded(backends: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """The backends a recording keeps: the first `top` (already sorted) with any I/O."""
    return [b for b in backends if io_key(b) > 0][:top]
