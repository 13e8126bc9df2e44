"""Recorder: writes Frames into a recording file so that a crash or SIGKILL loses at most one second.

Rows are buffered and committed in one transaction at least once a second (every frame when the
interval is 1 s or more). WAL mode with synchronous=NORMAL makes a commit one append to the -wal file
with no fsync: it survives the process being killed, and a power loss leaves a consistent file that
may miss the last commits. close() folds the WAL back into the one file.

A Recorder may be created in one thread and used from others (the sampler thread writes, the main
thread closes it on SIGTERM): calls are serialized by a lock. Do not call it from inside a signal
handler; set a flag there and close from the loop.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any

from sqlite_utils import Database

import pgio_tui
from pgio_tui.frame import Event, Frame
from pgio_tui.secrets import scrub_secrets
from pgio_tui.store import schema
from pgio_tui.store.files import create_file, remove
from pgio_tui.store.shm_guard import frozen, map_privately
from pgio_tui.store.schema import RecordingError, RecordingExists
from pgio_tui.store.tick_rows import TickRows, json_text

__all__ = ["Recorder", "RecordingError", "RecordingExists", "scrub_secrets"]

COMMIT_EVERY_S = 1.0
# The WAL goes into the main file this often (a passive checkpoint: readers never wait), so a copy
# made without the -wal file after a crash still holds all but the last seconds.
CHECKPOINT_EVERY_S = 10.0


def _plain(value: Any) -> Any:
    """A meta/settings value as stored: numbers and text as they are, dicts and lists as JSON."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (dict, list, tuple)):
        return json_text(value)
    if value is None or isinstance(value, (int, float)):
        return value
    return scrub_secrets(str(value))


def default_meta() -> dict[str, Any]:
    """What a recording knows about where and how it was made, before the caller adds more."""
    return {
        "schema_version": schema.SCHEMA_VERSION,
        "tool_version": pgio_tui.__version__,
        "created_at": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "command_line": shlex.join(sys.argv),
    }


def _locked(method: Callable) -> Callable:
    @wraps(method)
    def call(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return call


class Recorder:
    """Writes one recording file. See the module docstring for what a crash can lose."""

    def __init__(self, path: str | os.PathLike, *, force: bool = False, meta: dict | None = None):
        self.path = Path(path)
        self._lock = threading.RLock()
        self._closed = False
        self._failed: str | None = None
        create_file(self.path, force)
        conn = None
        try:
            # isolation_level=None: we BEGIN/COMMIT ourselves; any thread, one at a time (the lock)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db = Database(conn)
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            schema.create(self.db)
        except sqlite3.Error as e:
            if conn is not None:
                conn.close()
            remove(self.path)  # ours, and useless: a retry must not need --force
            raise RecordingError(f"cannot create recording {self.path}: {e}") from None
        columns = schema.catalog_columns()  # metric -> SQL type
        scales = schema.tick_scales(columns)
        self._rows = TickRows(columns, {name: schema.metric_unit(name) for name in columns}, scales)
        self._interval: float | None = None
        self._last_tick: int | None = None
        self._last_commit = self._last_checkpoint = time.monotonic()
        self.set_meta(**{**default_meta(), **(meta or {}), "scales": scales})

    # --- metadata and settings ------------------------------------------------------------------

    @_locked
    def set_meta(self, **kv: Any) -> None:
        """Add or replace metadata (secrets scrubbed). interval_s also sets the commit cadence."""
        if "interval_s" in kv and kv["interval_s"]:
            self._interval = float(kv["interval_s"])
        rows = [{"key": k, "value": _plain(v)} for k, v in kv.items()]
        self._guard(lambda: self.db.table("meta").upsert_all(rows, pk="key"))

    @_locked
    def set_settings(self, rows: Iterable[tuple[str, Any, str | None, str]], tick: int | None = None) -> None:
        """Store settings (name, value, unit, category): the snapshot at start when tick is None,
        else values that changed at that tick."""
        data = [{"name": n, "value": _plain(v), "unit": u, "category": c, "tick": tick} for n, v, u, c in rows]
        self._guard(lambda: self.db.table("settings").insert_all(data))

    # --- frames ---------------------------------------------------------------------------------

    @_locked
    def write(self, frame: Frame) -> None:
        """Buffer one tick; commit when the oldest uncommitted tick could otherwise exceed 1 s."""
        self._check_writable()
        if self._last_tick is not None and frame.tick <= self._last_tick:
            raise ValueError(f"tick {frame.tick} written after tick {self._last_tick}")
        events = list(frame.events)
        if self._last_tick is None and not any(e.kind == "start" for e in events):
            events.insert(0, Event("start", "recording started"))
        self._last_tick = frame.tick

        rows = self._rows
        new = {k: ("TEXT" if isinstance(v, str) else "REAL") for k, v in frame.values.items() if k not in rows.columns}
        if new:
            self._guard(lambda: schema.add_metric_columns(self.db, new))
            rows.columns.update(new)
            rows.units.update({k: schema.metric_unit(k) for k in new})
        rows.add(frame, events, self._interval or COMMIT_EVERY_S)  # rates keep one event per (nominal) tick
        changed = [(e.data["name"], e.data.get("new"), e.data.get("unit"), e.data.get("category", "postgres"))
                   for e in events if e.kind == "setting_change" and "name" in e.data]
        if changed:  # the settings table answers "what was X at tick N" without reading events
            self.set_settings(changed, frame.tick)

        interval = self._interval or frame.dt or COMMIT_EVERY_S
        if time.monotonic() - self._last_commit + interval >= COMMIT_EVERY_S:
            self.flush()

    # --- workloads ------------------------------------------------------------------------------

    @_locked
    def workload_start(self, kind: str, argv: list[str], params: dict | None = None, t: float | None = None) -> int:
        """Record a launched workload (command line scrubbed); returns its id for the calls below."""
        row = {"kind": kind, "argv": json_text(list(argv)), "params": json_text(params), "start_t": t or time.time()}
        return self._guard(lambda: self.db.table("workloads").insert(row).last_pk)

    @_locked
    def workload_output(self, workload_id: int, stream: str, line: str, t: float | None = None) -> None:
        """Buffer one line the workload printed (stream: stdout/stderr); committed with the ticks."""
        self._check_writable()
        self._rows.output(workload_id, stream, line, t or time.time())

    @_locked
    def workload_stop(self, workload_id: int, exit_code: int | None, summary: dict | None = None,
                      t: float | None = None) -> None:
        self.flush()
        update = {"stop_t": t or time.time(), "exit_code": exit_code, "summary": json_text(summary)}
        self._guard(lambda: self.db.table("workloads").update(workload_id, update))

    # --- commit and close -----------------------------------------------------------------------

    @_locked
    def flush(self) -> None:
        """Commit everything buffered, in one transaction."""
        self._check_writable()
        self._check_shm()
        self._last_commit = time.monotonic()
        statements = self._rows.statements()
        if not any(rows for _, rows in statements):
            return
        conn = self.db.conn
        try:
            conn.execute("BEGIN")
            for sql, rows in statements:
                if rows:
                    conn.executemany(sql, rows)
            conn.execute("COMMIT")
            if self._last_commit - self._last_checkpoint >= CHECKPOINT_EVERY_S:
                self._last_checkpoint = self._last_commit
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as e:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            self._fail(e)
        finally:
            self._rows.clear()

    @_locked
    def close(self, reason: str = "", *, t: float | None = None) -> None:
        """Write a stop event (at wall time `t`, default now), commit, and fold the WAL into the
        single file. Safe to call twice."""
        if self._closed:
            return
        error = None
        try:
            if not self._failed:
                self._rows.event(Event("stop", reason), self._last_tick, time.time() if t is None else t)
                self.flush()
        except RecordingError as e:
            error = e
        finally:
            self._closed = True
            self._compact()
            self.db.conn.close()
        if error is not None:
            raise error

    def _compact(self) -> None:
        """Best effort, each step may fail (disk full, a reader still has the file open): VACUUM
        packs the per-tick tables' half-full pages (~7% smaller); the WAL goes back into the file,
        which then needs no -wal/-shm beside it (read-only media, copies)."""
        for sql in ("VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode = DELETE"):
            try:
                self.db.execute(sql)
            except sqlite3.Error:
                pass

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close("error" if exc_type else "")

    # --- helpers --------------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._closed:
            raise RecordingError(f"recording {self.path} is closed")
        if self._failed:
            raise RecordingError(self._failed)

    def _check_shm(self) -> None:
        """A -shm made immutable or append-only would kill this process with SIGBUS at the next
        write to its mapping (shm_guard): keep that mapping private and stop with one line."""
        shm = f"{self.path}-shm"
        if frozen(shm):
            map_privately(shm)
            self._failed = (f"cannot write recording {self.path}: its -shm file was made immutable or append-only "
                            "(chattr +i/+a) while recording: stopped; the ticks so far are kept")
            raise RecordingError(self._failed)

    def _fail(self, e: Exception) -> None:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        self._failed = f"cannot write recording {self.path}: {msg}"
        raise RecordingError(self._failed) from None

    def _guard(self, action):
        """Run a direct write; SQLite errors become a one-line RecordingError."""
        self._check_writable()
        self._check_shm()
        try:
            return action()
        except sqlite3.Error as e:
            self._fail(e)
