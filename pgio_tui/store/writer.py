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
import json
import os
import platform
import shlex
import socket
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any

from sqlite_utils import Database

import pgio_tui
from pgio_tui.secrets import scrub_secrets
from pgio_tui.secrets import scrub_value as _scrub
from pgio_tui.frame import SOURCE_FIELDS, Event, Frame
from pgio_tui import metrics as M
from pgio_tui.metrics import DISK_METRICS
from pgio_tui.store import schema
from pgio_tui.store.schema import RecordingError, RecordingExists, quantize, quote

__all__ = ["Recorder", "RecordingError", "RecordingExists", "scrub_secrets"]

COMMIT_EVERY_S = 1.0
# The WAL goes into the main file this often (a passive checkpoint: readers never wait), so a copy
# made without the -wal file after a crash still holds all but the last seconds.
CHECKPOINT_EVERY_S = 10.0
FILE_MODE = 0o600  # recordings hold host names, settings and command lines: the owner's to share

def _json(value: Any) -> str | None:
    return None if value in (None, {}, []) else json.dumps(_scrub(value), default=str)


def _plain(value: Any) -> Any:
    """A meta/settings value as stored: numbers and text as they are, dicts and lists as JSON."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (dict, list, tuple)):
        return _json(value)
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


_DISK_UNITS = tuple({m.name.rsplit(".", 1)[1]: m.unit for m in DISK_METRICS}[c] for c in schema.DISK_COLUMNS)
_FLUSH_UNITS = ("1/s", "ms/s")  # disk_flush: f_s, f_ms_s (schema.flush_values)
_SOURCE_UNIT = "1/s"


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
        self._create_file(force)
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
            _remove(self.path)  # ours, and useless: a retry must not need --force
            raise RecordingError(f"cannot create recording {self.path}: {e}") from None
        self._columns: dict[str, str] = schema.catalog_columns()  # metric -> SQL type
        self._units = {name: schema.metric_unit(name) for name in self._columns}
        self._device_ids: dict[str, int] = {}
        self._device_roles: dict[str, str | None] = {}
        self._device_first: dict[str, int | None] = {}
        self._source_ids: dict[str, int] = {}
        self._wait_ids: dict[tuple, int] = {}
        self._statement_ids: dict[int, int] = {}  # queryid -> statements.id
        self._interval: float | None = None
        self._last_tick: int | None = None
        self._last_commit = self._last_checkpoint = time.monotonic()
        self._clear_buffers()
        self.set_meta(**{**default_meta(), **(meta or {})})

    def _create_file(self, force: bool) -> None:
        """Create the file exclusively, so two recorders can never write the same file."""
        p = self.path
        if p.is_dir():
            raise RecordingError(f"cannot create recording {p}: it is a directory")
        exists = RecordingExists(f"{p} already exists; use --force to overwrite it or choose another name")
        if p.exists() or p.is_symlink():
            if not force:
                raise exists
            check_replaceable(p)
            _remove(p)
        try:
            # SQLite gives the -wal and -shm files the mode of the main file
            os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE))
        except FileExistsError:
            raise exists from None
        except OSError as e:
            raise RecordingError(f"cannot create recording {p}: {e.strerror}") from None

    # --- metadata and settings ------------------------------------------------------------------

    @_locked
    def set_meta(self, **kv: Any) -> None:
        """Add or replace metadata (secrets scrubbed). interval_s also sets the commit cadence."""
        if "interval_s" in kv and kv["interval_s"]:
            self._interval = float(kv["interval_s"])
        rows = [{"key": k, "value": _plain(v)} for k, v in kv.items()]
        self._guard(lambda: self.db["meta"].upsert_all(rows, pk="key"))

    @_locked
    def set_settings(self, rows: Iterable[tuple[str, Any, str | None, str]], tick: int | None = None) -> None:
        """Store settings (name, value, unit, category): the snapshot at start when tick is None,
        else values that changed at that tick."""
        data = [{"name": n, "value": _plain(v), "unit": u, "category": c, "tick": tick} for n, v, u, c in rows]
        self._guard(lambda: self.db["settings"].insert_all(data))

    # --- frames ---------------------------------------------------------------------------------

    @_locked
    def write(self, frame: Frame) -> None:
        """Buffer one tick; commit when the oldest uncommitted tick could otherwise exceed 1 s."""
        self._check_writable()
        if self._last_tick is not None and frame.tick <= self._last_tick:
            raise ValueError(f"tick {frame.tick} written after tick {self._last_tick}")
        tick = frame.tick
        events = list(frame.events)
        if self._last_tick is None and not any(e.kind == "start" for e in events):
            events.insert(0, Event("start", "recording started"))
        self._last_tick = tick

        new = {k: ("TEXT" if isinstance(v, str) else "REAL") for k, v in frame.values.items() if k not in self._columns}
        if new:
            self._guard(lambda: schema.add_metric_columns(self.db, new))
            self._columns.update(new)
            self._units.update({k: schema.metric_unit(k) for k in new})
        q = self._interval or COMMIT_EVERY_S  # rates keep one event per (nominal) tick
        row = {"tick": tick, "t": round(frame.t, 3), "elapsed": _round(frame.elapsed, 3), "dt": _round(frame.dt, 3)}
        row.update({k: quantize(v, self._units[k], q) for k, v in frame.values.items()})
        self._ticks.append(row)

        for name in {**frame.devices, **frame.device_roles}:
            self._register_device(name, frame.device_roles.get(name), tick if name in frame.devices else None)
        for name, fields in frame.devices.items():
            vals = [quantize(fields.get(f), u, q) for f, u in zip(schema.DISK_COLUMNS, _DISK_UNITS)]
            if not schema.all_zero(vals):
                self._disk.append((tick, self._device_ids[name], *vals))
            flush = [quantize(v, u, q) for v, u in zip(schema.flush_values(fields), _FLUSH_UNITS)]
            if not schema.all_zero(flush):
                self._disk_flush.append((tick, self._device_ids[name], *flush))
        for backend_type, fields in frame.sources.items():
            source_id = self._lookup(self._source_ids, self._new_sources, backend_type, (backend_type, tick))
            vals = [quantize(fields.get(f), _SOURCE_UNIT, q) for f in SOURCE_FIELDS]
            if not schema.all_zero(vals):
                self._io.append((tick, source_id, *vals))
        waits: dict[int, int] = {}
        for backend_type, wait_type, wait_event, count in frame.waits:
            key = (backend_type, wait_type, wait_event)
            wait_id = self._lookup(self._wait_ids, self._new_waits, key, key)
            waits[wait_id] = waits.get(wait_id, 0) + count
        self._waits.extend((tick, wait_id, count) for wait_id, count in waits.items())
        self._events.extend(self._event_row(e, tick, frame.t) for e in events)
        changed = [(e.data["name"], e.data.get("new"), e.data.get("unit"), e.data.get("category", "postgres"))
                   for e in events if e.kind == "setting_change" and "name" in e.data]
        if changed:  # the settings table answers "what was X at tick N" without reading events
            self.set_settings(changed, tick)
        self._checkpoints.extend(self._checkpoint_row(c, tick) for c in frame.checkpoints)
        self._statement_rows(frame)
        self._latency_hist.extend((tick, int(b), int(n)) for b, n in frame.latency_buckets.items() if n)

        interval = self._interval or frame.dt or COMMIT_EVERY_S
        if time.monotonic() - self._last_commit + interval >= COMMIT_EVERY_S:
            self.flush()

    def _statement_rows(self, frame: Frame) -> None:
        """Query texts once per queryid; the top statements as whole numbers over the window."""
        for queryid, text in frame.statement_texts.items():
            self._register_statement(queryid, frame.tick)
            self._statement_texts.append((scrub_secrets(text), self._statement_ids[queryid]))
        window = frame.values.get(M.STATEMENTS_WINDOW_S)
        if not frame.statements or not window:
            return
        for row in frame.statements:
            sid = self._register_statement(row["queryid"], frame.tick)
            vals = []
            for fld, scale in schema.STATEMENT_COLUMNS.values():
                v = row.get(fld)
                per_window = fld not in ("mean_ms", "stddev_ms")
                vals.append(None if v is None else round(v * scale * (window if per_window else 1)))
            self._statement_stats.append((frame.tick, sid, *vals))

    def _register_statement(self, queryid: int, tick: int) -> int:
        sid = self._statement_ids.get(queryid)
        if sid is None:
            sid = self._statement_ids[queryid] = len(self._statement_ids) + 1
            self._new_statements.append((sid, queryid, None, tick))
        return sid

    def _register_device(self, name: str, role: str | None, first_tick: int | None) -> None:
        """Give a device its id; first_tick is the first tick with figures for it (a reader shows
        the device idle, all zeros, at later ticks without a row)."""
        if name not in self._device_ids:
            self._device_ids[name] = len(self._device_ids) + 1
            self._device_roles[name] = role
            self._device_first[name] = first_tick
            self._new_devices.append((self._device_ids[name], name, role, first_tick))
            return
        if role is not None and role != self._device_roles[name]:
            self._device_roles[name] = role
            self._device_updates.append(("role", role, self._device_ids[name]))
        if first_tick is not None and self._device_first[name] is None:
            self._device_first[name] = first_tick
            self._device_updates.append(("first_tick", first_tick, self._device_ids[name]))

    @staticmethod
    def _lookup(ids: dict, new_rows: list, key, row: tuple) -> int:
        """The id of a name row (sources, wait_events), assigned here at first sight so the rows
        that use it can go in the same transaction."""
        id_ = ids.get(key)
        if id_ is None:
            id_ = ids[key] = len(ids) + 1
            new_rows.append((id_, *row))
        return id_

    @staticmethod
    def _event_row(e: Event, tick: int | None, t: float) -> tuple:
        return (tick, round(t, 3), e.kind, scrub_secrets(e.text or ""), _json(e.data))

    @staticmethod
    def _checkpoint_row(c: dict[str, Any], tick: int) -> tuple:
        c = {"end_tick": tick, **c}
        extra = {k: v for k, v in c.items() if k not in schema.CHECKPOINT_COLUMNS}
        return (*(c.get(k) for k in schema.CHECKPOINT_COLUMNS), _json(extra))

    # --- workloads ------------------------------------------------------------------------------

    @_locked
    def workload_start(self, kind: str, argv: list[str], params: dict | None = None, t: float | None = None) -> int:
        """Record a launched workload (command line scrubbed); returns its id for the calls below."""
        row = {"kind": kind, "argv": _json(list(argv)), "params": _json(params), "start_t": t or time.time()}
        return self._guard(lambda: self.db["workloads"].insert(row).last_pk)

    @_locked
    def workload_output(self, workload_id: int, stream: str, line: str, t: float | None = None) -> None:
        """Buffer one line the workload printed (stream: stdout/stderr); committed with the ticks."""
        self._check_writable()
        self._output.append((workload_id, round(t or time.time(), 3), stream, scrub_secrets(line)))

    @_locked
    def workload_stop(self, workload_id: int, exit_code: int | None, summary: dict | None = None,
                      t: float | None = None) -> None:
        self.flush()
        update = {"stop_t": t or time.time(), "exit_code": exit_code, "summary": _json(summary)}
        self._guard(lambda: self.db["workloads"].update(workload_id, update))

    # --- commit and close -----------------------------------------------------------------------

    @_locked
    def flush(self) -> None:
        """Commit everything buffered, in one transaction."""
        self._check_writable()
        self._last_commit = time.monotonic()
        columns = list(schema.TICK_COLUMNS) + list(self._columns)
        ticks = [tuple(r.get(c) for c in columns) for r in self._ticks]
        statements = [
            ("INSERT INTO devices (id, name, role, first_tick) VALUES (?, ?, ?, ?)", self._new_devices),
            ("UPDATE devices SET role = ? WHERE id = ?", [u[1:] for u in self._device_updates if u[0] == "role"]),
            ("UPDATE devices SET first_tick = ? WHERE id = ?",
             [u[1:] for u in self._device_updates if u[0] == "first_tick"]),
            (f"INSERT INTO ticks ({', '.join(map(quote, columns))}) VALUES ({', '.join('?' * len(columns))})",
             ticks),
            (_insert("sources", 3), self._new_sources),
            (_insert("wait_events", 4), self._new_waits),
            (_insert("disk", 2 + len(schema.DISK_COLUMNS)), self._disk),
            (_insert("disk_flush", 4), self._disk_flush),
            (_insert("io", 2 + len(SOURCE_FIELDS)), self._io),
            (_insert("waits", 3), self._waits),
            ("INSERT INTO events (tick, t, kind, text, data) VALUES (?, ?, ?, ?, ?)", self._events),
            (f"INSERT INTO checkpoints ({', '.join(schema.CHECKPOINT_COLUMNS)}, extra) "
             f"VALUES ({', '.join('?' * (len(schema.CHECKPOINT_COLUMNS) + 1))})", self._checkpoints),
            (_insert("latency_hist", 3), self._latency_hist),
            ("INSERT INTO workload_output (workload_id, t, stream, line) VALUES (?, ?, ?, ?)", self._output),
            (_insert("statements", 4), self._new_statements),
            ("UPDATE statements SET text = ? WHERE id = ?", self._statement_texts),
            (_insert("statement_stats", 2 + len(schema.STATEMENT_COLUMNS)), self._statement_stats),
        ]
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
            self._clear_buffers()

    @_locked
    def close(self, reason: str = "", *, t: float | None = None) -> None:
        """Write a stop event (at wall time `t`, default now), commit, and fold the WAL into the
        single file. Safe to call twice."""
        if self._closed:
            return
        error = None
        try:
            if not self._failed:
                stop = Event("stop", reason)
                self._events.append(self._event_row(stop, self._last_tick, time.time() if t is None else t))
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

    def _clear_buffers(self) -> None:
        self._ticks: list[dict] = []
        self._disk: list[tuple] = []
        self._disk_flush: list[tuple] = []
        self._io: list[tuple] = []
        self._waits: list[tuple] = []
        self._events: list[tuple] = []
        self._checkpoints: list[tuple] = []
        self._latency_hist: list[tuple] = []
        self._output: list[tuple] = []
        self._new_devices: list[tuple] = []
        self._device_updates: list[tuple] = []
        self._new_sources: list[tuple] = []
        self._new_waits: list[tuple] = []
        self._new_statements: list[tuple] = []
        self._statement_texts: list[tuple] = []
        self._statement_stats: list[tuple] = []

    def _check_writable(self) -> None:
        if self._closed:
            raise RecordingError(f"recording {self.path} is closed")
        if self._failed:
            raise RecordingError(self._failed)

    def _fail(self, e: Exception) -> None:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        self._failed = f"cannot write recording {self.path}: {msg}"
        raise RecordingError(self._failed) from None

    def _guard(self, action):
        """Run a direct write; SQLite errors become a one-line RecordingError."""
        self._check_writable()
        try:
            return action()
        except sqlite3.Error as e:
            self._fail(e)


def check_replaceable(path: str | os.PathLike) -> None:
    """--force replaces a recording, never a device (/dev/null), a directory or a symlink."""
    for q in _siblings(Path(path)):
        if (q.exists() or q.is_symlink()) and not stat.S_ISREG(q.lstat().st_mode):
            raise RecordingError(f"{q} is not a regular file: --force replaces only recordings; "
                                 "choose another name")


def _siblings(path: Path) -> tuple[Path, ...]:
    """A recording file and the files SQLite keeps beside it."""
    return (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal"))


def _remove(path: Path) -> None:
    for p in _siblings(path):
        p.unlink(missing_ok=True)


def _insert(table: str, n: int) -> str:
    return f"INSERT INTO {table} VALUES ({', '.join('?' * n)})"


def _round(v: float | None, decimals: int) -> float | None:
    return None if v is None else round(v, decimals)
