"""Recording: reads a recording file back as Frames, series and events, for replay, export and diff.

The file is opened read-only, so it can be read while `record` is still writing it (refresh() picks
up what the writer has committed since) and from read-only media. Idle devices and sources are not
stored; they come back here as rows of zeros, so a rebuilt Frame looks like the live one.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pgio_tui import metrics as M
from pgio_tui.frame import BLOCK_KB, DEVICE_FIELDS, DISK_PREFIX, Frame
from pgio_tui.frame import disk as disk_metric
from pgio_tui.metrics import BY_NAME
from pgio_tui.safe_text import LINE_CHARS, capped
from pgio_tui.secrets import scrub_statement
from pgio_tui.store import schema
from pgio_tui.store.backend_rows import StoredBackends
from pgio_tui.store.schema import RecordingError, quote
from pgio_tui.store.opening import migrated_copy, open_read_only, schema_version_of
from pgio_tui.store.rebuild import rebuild_frames
from pgio_tui.store.stored_rows import (NEVER, WORKLOAD_NUMBERS, Setting, TickEvent, checkpoint_row, first_tick,
                                        statement_total, stored_event)
from pgio_tui.store.validate import (HIST_ROWS, TEXT_TYPES, check_objects, check_ticks, decode, file_problem,
                                     known_sql, label_text, line_text, meta_value, number, number_sql, text,
                                     tick_number)
from pgio_tui.store.validate import queryid as queryid_of

if TYPE_CHECKING:
    from sqlite_utils import Database

__all__ = ["Recording", "RecordingError", "Setting", "TickEvent"]

BATCH_TICKS = 500  # ticks per query batch in frames()
FETCH_ROWS = 256  # rows() fetches this many at once: one bounded fetch (validate.BoundedCursor) per batch
MAX_ARGS = 1000  # a workload's argv beyond this many arguments is cut (a crafted file)


def _setting_value(v: Any) -> Any:
    """A setting's stored value: a number, JSON decoded, or text cut to LINE_CHARS."""
    v = decode(v)
    return line_text(v) if isinstance(v, str) else v


def _statement_text(v: Any) -> str | None:
    """A stored statement text as shown, cut to LINE_CHARS: a file written before the scrubber (or
    by anyone) may hold a password literal (scrubbed before the cut, which could split it)."""
    t = text(v)
    return None if t is None else capped(scrub_statement(t), LINE_CHARS)


def _io_sql(field: str, layout: schema.IoLayout) -> tuple[str, str]:
    """SQL of one pg_stat_io field of an io_rows row `r` of `layout`: (it is known, its value as
    io_fields() reads the number() of each column, but for the division by a per-tick row's dt)."""
    col, op, scale = schema.io_stored_of(field, layout)
    col, op = f"r.{col}", None if op is None else f"r.{op}"
    v = col if op is None else f"(CASE WHEN {known_sql(op)} THEN {col} + {BLOCK_KB} * {op} ELSE {col} END)"
    return known_sql(col), v if scale == 1 else f"({v} * 1.0 / {scale})"


def _scaled(v: int | float | None, scale: int) -> float | None:
    """A checked, scaled stored number back to its value."""
    return None if v is None else v / scale


class IoBytes(NamedTuple):
    """Bytes over some ticks: the server's processes' (/proc/<pid>/io), each device's (read, written)."""

    own_read: float
    own_written: float
    devices: dict[str, tuple[float, float]]


class Recording:
    """One recording file, opened read-only. Tick ranges (start_tick, end_tick) include both ends.

    `lazy`: the ticks are checked as they are read (rows(), frames()) and counted when first asked
    (tick_count), not all at open, so a week opens as fast as an hour (replay). Otherwise every
    tick is checked at open and a damaged one refuses the file before anything is shown."""

    def __init__(self, path: str | os.PathLike, *, lazy: bool = False):
        self.path = Path(path)
        self.lazy = lazy
        if not self.path.is_file():
            raise RecordingError(f"{self.path}: no such file" if not self.path.exists()
                                 else f"{self.path} is not a file")
        error, self.note = file_problem(self.path)
        if error:
            raise RecordingError(error)
        conn = open_read_only(self.path)
        try:
            version = schema_version_of(conn, self.path)
            migrate = schema.needs_migration(version)
            check_objects(conn, str(self.path), complete=not migrate, version=version)
            if migrate:
                conn = migrated_copy(conn, version)
                check_objects(conn, str(self.path), complete=True, version=version)
        except BaseException:
            conn.close()
            raise
        self.conn = conn
        self.schema_version = version
        self._schema_cookie = None
        self._count: int | None = None if lazy else 0  # None: not counted yet (lazy)
        self.first_tick: int | None = None
        self.last_tick: int | None = None
        self.start_t: float | None = None
        self.end_t: float | None = None
        self._with_data: set[str] = set()  # metric columns known to hold a value
        self._data_checked_to = -1  # ... up to this tick
        try:
            self.refresh()
        except (sqlite3.DatabaseError, RecordingError) as e:  # a damaged file, or one from a pre-release build
            self.conn.close()
            if isinstance(e, RecordingError):
                raise
            raise RecordingError(f"{self.path} cannot be read as a pgio-tui recording: {e}") from None

    # --- what the file holds --------------------------------------------------------------------

    def refresh(self) -> int:
        """Re-read what a writer has committed since; returns how many ticks are new (0 at a lazy
        file's first read, which does not count them).

        Everything else (counts, devices, frames(), metric_names()) reflects the file as of the
        last refresh, read from one snapshot so the names always cover the ticks.
        """
        conn = self.conn
        conn.execute("BEGIN")
        try:
            return self._read_snapshot(conn)
        finally:
            conn.commit()

    def _read_snapshot(self, conn: sqlite3.Connection) -> int:
        cookie = conn.execute("PRAGMA schema_version").fetchone()[0]
        if cookie != self._schema_cookie:
            self._schema_cookie = cookie
            self._columns = schema.metric_columns_of(conn)
            self._disk_layout = schema.disk_layout(schema.table_columns(conn, "disk"))
            self._io_layout = schema.io_layout(schema.table_columns(conn, "io_rows"))
            self._flush_layout = schema.flush_layout(schema.table_columns(conn, "disk_flush"))
        self.meta: dict[str, Any] = {}
        for k, v in conn.execute("SELECT key, value FROM meta"):
            v = meta_value(str(k), v)
            if v is not None:
                self.meta[str(k)] = v
        scales = self.meta.get("scales") or {}  # schema 3: the ticks columns stored as scaled whole numbers
        self._scales = {c: s for c, s in scales.items() 
                        if self._columns.get(c) == "REAL" and type(s) is int and s in schema.SCALES}
        self._devices = {name: (id_, label_text(role), first_tick(first))  # names cut: capped()
                         for id_, stored, role, first in conn.execute(
                             "SELECT id, name, role, first_tick FROM devices ORDER BY id")
                         if (name := label_text(stored)) is not None}
        self._sources = {id_: (label_text(bt) or "?", first_tick(first)) for id_, bt, first in conn.execute(
            "SELECT id, backend_type, first_tick FROM sources ORDER BY id")}
        self._wait_events = {r[0]: tuple(label_text(x) for x in r[1:]) for r in conn.execute(
            "SELECT id, backend_type, wait_event_type, wait_event FROM wait_events")}
        self._statements = {id_: (queryid_of(qid), _statement_text(qtext)) for id_, qid, qtext in conn.execute(
            "SELECT id, queryid, text FROM statements")}
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._has_latency_hist = "latency_hist" in tables
        self._has_disk_flush = "disk_flush" in tables  # flush figures (files written before them: unknown)
        self._disk_fields = DEVICE_FIELDS if self._has_disk_flush else schema.DISK_COLUMNS
        self._backends = StoredBackends(conn, "backend_io" in tables)
        self._io_keys = {id_: ((text(bt) or "?", text(obj) or "?", text(ctx) or "?"), first_tick(first))
                         for id_, bt, obj, ctx, first in conn.execute(
                             "SELECT id, backend_type, object, context, first_tick FROM io_keys")
                         } if "io_keys" in tables else None
        after = -1 if self.last_tick is None else self.last_tick
        if not self.lazy:
            check_ticks(conn, str(self.path), after)
        last = conn.execute("SELECT max(tick) FROM ticks").fetchone()[0]  # the primary key's end: no scan
        if last is None or last <= after:
            return 0
        first = conn.execute("SELECT min(tick) FROM ticks").fetchone()[0] if self.first_tick is None else None
        if self.lazy:  # the two ends are shown at once: checked now, the rest as it is read
            for tick in (first, last):
                if tick is not None:
                    check_ticks(conn, str(self.path), tick - 1, tick)
        # the first read of a lazy file counts nothing (it would scan it all); later ones, what is new
        new = 0 if self.lazy and self.last_tick is None else conn.execute(
            "SELECT count(*) FROM ticks WHERE tick > ? AND tick <= ?", (after, last)).fetchone()[0]
        if self._count is not None:
            self._count += new
        self.last_tick = last
        self.end_t = conn.execute("SELECT t FROM ticks WHERE tick = ?", (last,)).fetchone()[0]
        if first is not None:
            self.first_tick, self.start_t = first, conn.execute(
                "SELECT t FROM ticks WHERE tick = ?", (first,)).fetchone()[0]
        return new

    @property
    def tick_count(self) -> int:
        """Ticks up to the last one refresh() saw (a lazy recording counts them on the first ask)."""
        if self._count is None:
            self._count = 0 if self.last_tick is None else self.conn.execute(
                "SELECT count(*) FROM ticks WHERE tick <= ?", (self.last_tick,)).fetchone()[0]
        return self._count

    @property
    def duration(self) -> float:
        """Seconds from the first tick to the last."""
        return 0.0 if self.start_t is None or self.end_t is None else self.end_t - self.start_t

    @property
    def devices(self) -> dict[str, str | None]:
        """Device name -> role ("data", "wal", "data,wal", "tblspc" or None), in order of appearance."""
        return {name: role for name, (_, role, _) in self._devices.items()}

    def metric_names(self) -> list[str]:
        """Every metric that holds data: scalar columns with a value, then disk.<device>.<field>,
        in catalog order (metrics unknown to the catalog last)."""
        if self.last_tick is not None and self._data_checked_to < self.last_tick:
            # The first ticks settle most columns; only columns still empty scan the rest.
            for limit in (" LIMIT 100", ""):
                unknown = [c for c in self._columns if c not in self._with_data]
                if not unknown:
                    break
                counts = self.conn.execute(
                    f"SELECT {', '.join(f'count({quote(c)})' for c in unknown)} FROM (SELECT * FROM ticks "
                    f"WHERE tick > ? AND tick <= ?{limit})", (self._data_checked_to, self.last_tick)).fetchone()
                self._with_data.update(c for c, n in zip(unknown, counts) if n)
            self._data_checked_to = self.last_tick
        catalog = [c for c in BY_NAME if c in self._with_data]
        disk = [disk_metric(d, f) for d, (_, _, first) in self._devices.items() if first != NEVER
                for f in self._disk_fields]
        extra = [c for c in self._columns if c in self._with_data and c not in BY_NAME]
        return catalog + disk + extra

    def settings(self, tick: int | None = None) -> dict[str, Setting]:
        """Settings in force at `tick`: the snapshot at start with the changes seen up to that tick
        (all changes when tick is None)."""
        rows = self.conn.execute(
            "SELECT name, value, unit, category, tick FROM settings WHERE tick IS NULL OR tick <= ? "
            "ORDER BY coalesce(tick, -1), rowid", (NEVER if tick is None else tick,))
        return {name: Setting(name, _setting_value(r[1]), label_text(r[2]), label_text(r[3]), tick_number(r[4]))
                for r in rows if (name := label_text(r[0])) is not None}

    def events(self, kinds: Iterable[str] | None = None) -> list[TickEvent]:
        """Events in the order they happened, of the given kinds (all when None)."""
        sql = "SELECT tick, t, kind, text, data FROM events"
        params: tuple[str, ...] = ()
        if kinds is not None:
            params = tuple(kinds)
            sql += f" WHERE kind IN ({', '.join('?' * len(params))})"
        return [TickEvent(tick_number(tick), when, stored_event(kind, body, data))
                for tick, t, kind, body, data in self.conn.execute(sql + " ORDER BY id", params)
                if (when := number(t)) is not None]  # an event without a time is not one

    def checkpoints(self) -> list[dict[str, Any]]:
        """Finished checkpoints, oldest first: the keys the recorder got (unknown ones from `extra`)."""
        return [checkpoint_row(row) for row in self.conn.execute(
            f"SELECT {', '.join(schema.CHECKPOINT_COLUMNS)}, extra FROM checkpoints ORDER BY id")]

    def io_rows(self, start_tick: int | None = None, end_tick: int | None = None) -> Iterator[tuple]:
        """(tick, (backend_type, object, context), {IO_FIELDS: value}) of every stored pg_stat_io row
        with I/O in the span, in tick order (nothing for files without io_rows), without making Frames."""
        if not self._io_keys:
            return
        where, params = self._range("r.tick", start_tick, self._clamp(end_tick))
        cols = ", ".join(f"r.{c}" for c in self._io_layout.columns)
        for tick, dt, key_id, *vals in self.conn.execute(
                f"SELECT r.tick, t.dt, r.key_id, {cols} FROM io_rows r JOIN ticks t ON t.tick = r.tick"
                f"{where} ORDER BY r.tick", params):
            if key_id in self._io_keys:
                yield tick, self._io_keys[key_id][0], schema.io_fields([number(v) for v in vals], number(dt),
                                                                      self._io_layout)

    def io_sums(self, sums: list[tuple[Callable[[tuple[str, str, str]], bool], str, str | None]],
                start_tick: int | None = None, end_tick: int | None = None) -> Iterator[tuple[int, list[float]]]:
        """Per tick with pg_stat_io rows in the span, for each (keys, field, per) of `sums`: the sum
        of `field` over the rows whose (backend_type, object, context) `keys` accepts and whose
        `field` is known, then the sum of `per` over those rows (unknown: 0; no `per`: 0). The values
        as io_rows() reads them, summed by SQLite in one grouped query instead of a row at a time."""
        if not self._io_keys:
            return
        exprs = []
        for keys, field, per in sums:
            ids = ", ".join(str(i) for i, (key, _) in self._io_keys.items() if type(i) is int and keys(key))
            known, v = _io_sql(field, self._io_layout)
            row = f"r.key_id IN ({ids}) AND {known}"
            per_sql = "0" if per is None else "CASE WHEN {} THEN {} ELSE 0 END".format(*_io_sql(per, self._io_layout))
            exprs += [f"total(CASE WHEN {row} THEN {v} END)", f"total(CASE WHEN {row} THEN {per_sql} END)"]
        where, params = self._range("r.tick", start_tick, self._clamp(end_tick))
        for tick, dt, *vals in self.conn.execute(
                f"SELECT r.tick, t.dt, {', '.join(exprs)} FROM io_rows r JOIN ticks t ON t.tick = r.tick{where} "
                "GROUP BY r.tick ORDER BY r.tick", params):
            if self._io_layout.per_tick:  # counts over the tick: per second over its dt (none without one)
                dt = number(dt)
                vals = [v / dt for v in vals] if dt is not None and dt > 0 else [0.0] * len(vals)
            yield tick, vals

    def workloads(self) -> list[dict[str, Any]]:
        """Workloads launched during the recording, with argv, params and summary decoded."""
        out = []
        cursor = self.conn.execute("SELECT * FROM workloads")
        names = [d[0] for d in cursor.description]
        for row in (dict(zip(names, r)) for r in cursor):
            w = {k: (number(v) if k in WORKLOAD_NUMBERS else decode(v)) for k, v in row.items()}
            w["kind"] = label_text(w.get("kind")) or "?"
            for k in ("params", "summary"):
                w[k] = w[k] if isinstance(w.get(k), dict) else None
            argv = w.get("argv")
            w["argv"] = [line_text(a) or "" for a in argv[:MAX_ARGS]] if isinstance(argv, list) \
                else line_text(argv)
            out.append(w)
        return out

    def workload_report(self, w: dict[str, Any]) -> list[str]:
        """The workload's own end-of-run report as it printed it: pgbench's summary (its stdout;
        progress goes to stderr), pgio's report block."""
        out = self.workload_output(w["id"]) if w.get("id") is not None else []
        if w.get("kind") == "pgbench":
            return [line for _, stream, line in out if stream == "stdout"]
        notes = [line for _, stream, line in out if stream == "note"]
        start = next((i for i, line in enumerate(notes) if line.startswith("pg_stat_database stats:")), None)
        return notes[start:] if start is not None else []

    def workload_output(self, workload_id: int) -> list[tuple[float | None, str, str]]:
        """(t, stream, line) printed by a workload, in order."""
        return [(number(t), label_text(stream) or "", line_text(out) or "") for t, stream, out in self.conn.execute(
            "SELECT t, stream, line FROM workload_output WHERE workload_id = ? ORDER BY t, rowid",
            (workload_id,))]

    def latency_histogram(self, start_tick: int | None = None, end_tick: int | None = None):
        """The launched workload's latencies over ticks [start_tick, end_tick] as one merged
        LatencyHistogram (empty for a recording without one), clamped to the largest per-tick max."""
        from pgio_tui.quantiles import LatencyHistogram
        hist = LatencyHistogram()
        if not self._has_latency_hist:
            return hist
        where, params = self._range("tick", start_tick, self._clamp(end_tick))
        hist.merge({b: n for b, n in self.conn.execute(  # a shared file: buckets and counts the code can compute
            f"SELECT bucket, sum(count) FROM latency_hist{where or ' WHERE 1'} AND {HIST_ROWS} GROUP BY bucket",
            params)})
        if hist.count and M.LATENCY_MAX_MS in self._columns:
            top = schema.from_stored(number(self.conn.execute(
                f"SELECT max({quote(M.LATENCY_MAX_MS)}) FROM ticks{where}", params).fetchone()[0]),
                self._scales.get(M.LATENCY_MAX_MS, 1))
            hist.max_ms = top if top is not None and top > 0 else None
        return hist

    def io_bytes(self, devices: Iterable[str], start_tick: int | None = None,
                 end_tick: int | None = None) -> IoBytes | None:
        """Over [start_tick, end_tick]: the bytes the server's processes read and wrote (their
        /proc/<pid>/io: read_bytes, write_bytes), and each device's bytes read and written (its kB/s
        x dt); None without /proc/<pid>/io rows (another host, no permission). Float sums (total()):
        no integer overflow from a crafted file."""
        where, params = self._range("tick", start_tick, self._clamp(end_tick))
        n, own_r, own_w = self.conn.execute(
            f"SELECT count(read_bytes), total(read_bytes), total(write_bytes) FROM backend_io{where}", params).fetchone()
        if not n:
            return None
        where, params = self._range("x.tick", start_tick, self._clamp(end_tick))
        dev = {name: self.conn.execute(
            "SELECT total(x.rkb_s * t.dt) * 1024, total(x.wkb_s * t.dt) * 1024 FROM disk x JOIN devices d "
            f"ON d.id = x.device_id JOIN ticks t ON t.tick = x.tick{where or ' WHERE 1'} AND d.name = ?", [*params, name]).fetchone()
            for name in devices}
        return IoBytes(own_r, own_w, {k: (r, w) for k, (r, w) in dev.items()})

    def tick_dts(self, start_tick: int | None = None, end_tick: int | None = None) -> dict[int, float]:
        """tick -> the sampler's own dt (its monotonic clock) over [start_tick, end_tick]: a rate x dt
        gives back the tick's count exactly (None and non-numbers left out)."""
        where, params = self._range("tick", start_tick, self._clamp(end_tick))
        return {tick: dt for tick, dt in self.conn.execute(f"SELECT tick, dt FROM ticks{where}", params)
                if isinstance(dt, (int, float))}

    def ticks_with(self, backend_type: str, start_tick: int | None = None, end_tick: int | None = None) -> set[int]:
        """The ticks at which a backend of `backend_type` was sampled (its wait samples)."""
        where, params = self._range("tick", start_tick, self._clamp(end_tick))
        return {tick for (tick,) in self.conn.execute(
            f"SELECT DISTINCT tick FROM waits_named{where or ' WHERE 1'} AND backend_type = ? AND count > 0",
            params + [backend_type])}

    # --- seeking and series ---------------------------------------------------------------------

    def tick_at(self, t: float) -> int:
        """The last tick taken at or before wall time `t` (the first tick when `t` is earlier).

        Ticks are taken in time order (the sampler's one clock), so this is a binary search over
        the tick numbers, each step one primary-key lookup: no index on `t` (it would cost 2 % of
        the file)."""
        if self.first_tick is None or self.last_tick is None:
            raise RecordingError(f"{self.path} holds no ticks")
        conn = self.conn

        def at_or_before(tick: int) -> tuple[int, float] | None:  # gaps skip tick numbers
            return conn.execute("SELECT tick, t FROM ticks WHERE tick <= ? ORDER BY tick DESC LIMIT 1",
                                (tick,)).fetchone()

        lo, hi, found = self.first_tick, self.last_tick, self.first_tick
        while lo <= hi:
            mid = (lo + hi) // 2
            row = at_or_before(mid)
            if row is None or not isinstance(row[1], (int, float)) or row[1] <= t:
                found = found if row is None else max(found, row[0])
                lo = mid + 1
            else:
                hi = row[0] - 1
        return found

    def tick_before(self, tick: int) -> int | None:
        """The last tick before `tick` (gaps skip numbers): one primary-key lookup."""
        row = self.conn.execute("SELECT max(tick) FROM ticks WHERE tick < ? AND tick <= ?",
                                (tick, self._clamp(None))).fetchone()
        return row[0]

    def tick_after(self, tick: int) -> int | None:
        """The first tick after `tick`, up to the last one refresh() saw: one primary-key lookup."""
        row = self.conn.execute("SELECT min(tick) FROM ticks WHERE tick > ? AND tick <= ?",
                                (tick, self._clamp(None))).fetchone()
        return row[0]

    def series(self, metric: str, start_tick: int | None = None,
               end_tick: int | None = None) -> list[tuple[int, float, Any]]:
        """(tick, t, value) of one metric, `disk.<device>.<field>` included, in one indexed query."""
        return [(tick, t, v) for tick, t, _, v in self.rows([metric], start_tick, end_tick)]

    def rows(self, metrics: list[str], start_tick: int | None = None,
             end_tick: int | None = None) -> Iterator[tuple]:
        """(tick, t, elapsed, *values of `metrics`) per tick up to the last tick refresh() saw,
        streamed from one query (a cursor)."""
        cols: list[str] = []
        joins: list[tuple[str, int]] = []
        params: list[Any] = []
        scales: list[int] = []
        disk = {f: (c, scale) for f, c, scale in self._disk_layout}
        for name in metrics:
            if name in self._columns:
                col = f"ticks.{quote(name)}"
                cols.append(col if self._columns[name] in TEXT_TYPES else number_sql(col))
                scales.append(self._scales.get(name, 1))
                continue
            dev, fld = self._disk_metric(name)
            id_, _, first = self._devices[dev]
            flush = fld in schema.FLUSH_FIELDS
            alias = f"{'f' if flush else 'd'}{id_}"
            if alias not in {j[0] for j in joins}:
                joins.append((alias, id_))
            column, scale = disk.get(fld, (fld, 1))
            scales.append(scale)
            expr = schema.flush_expr(fld, alias, self._flush_layout) if flush else f"{alias}.{column}"
            cols.append(f"CASE WHEN {alias}.tick IS NOT NULL THEN {number_sql(expr)} "
                        f"WHEN ticks.tick >= ? THEN 0.0 END")
            params.append(first if first != NEVER else None)
        sql = f"SELECT ticks.tick, ticks.t, ticks.elapsed{''.join(', ' + c for c in cols)} FROM ticks"
        sql += "".join(f" LEFT JOIN {'disk_flush' if a[0] == 'f' else 'disk'} {a} ON {a}.tick = ticks.tick "
                       f"AND {a}.device_id = {i}" for a, i in joins)
        where, wparams = self._range("ticks.tick", start_tick, self._clamp(end_tick))
        self._check_read(start_tick, self._clamp(end_tick))
        # numbers come checked (number_sql): what is left is cutting text and scaling
        convert = [label_text if self._columns.get(m) in TEXT_TYPES else
                   None if scale == 1 else functools.partial(_scaled, scale=scale) for m, scale in zip(metrics, scales)]
        cursor = self.conn.execute(sql + where + " ORDER BY ticks.tick", params + wparams)
        fetched = (row for batch in iter(functools.partial(cursor.fetchmany, FETCH_ROWS), []) for row in batch)
        if not any(convert):
            return ((tick, t, number(elapsed), *vals) for tick, t, elapsed, *vals in fetched)
        return ((tick, t, number(elapsed), *[v if c is None else c(v) for c, v in zip(convert, vals)])
                for tick, t, elapsed, *vals in fetched)

    def knows(self, name: str) -> bool:
        """Whether rows() can read `name` here (a column, or a device this file has)."""
        if name in self._columns:
            return True
        try:
            self._disk_metric(name)
        except KeyError:
            return False
        return True

    def _disk_metric(self, name: str) -> tuple[str, str]:
        if name.startswith(DISK_PREFIX):
            dev, _, fld = name[len(DISK_PREFIX):].rpartition(".")
            if dev in self._devices and fld in self._disk_fields:
                return dev, fld
        raise KeyError(f"no metric {name!r} in {self.path}")

    def _clamp(self, end_tick: int | None) -> int:
        """Reads stop at the last tick refresh() saw: later ones may use names not loaded yet."""
        last = -1 if self.last_tick is None else self.last_tick
        return last if end_tick is None else min(end_tick, last)

    def _check_read(self, start: int | None, end: int) -> None:
        """A lazy recording checks the ticks it reads (the others were checked at open)."""
        if self.lazy:
            check_ticks(self.conn, str(self.path), -1 if start is None else start - 1, end)

    @staticmethod
    def _range(column: str, start: int | None, end: int | None) -> tuple[str, list]:
        conds, params = [], []
        if start is not None:
            conds.append(f"{column} >= ?")
            params.append(start)
        if end is not None:
            conds.append(f"{column} <= ?")
            params.append(end)
        return (" WHERE " + " AND ".join(conds) if conds else ""), params

    # --- frames ---------------------------------------------------------------------------------

    def frame(self, tick: int) -> Frame:
        """The Frame recorded at `tick` (KeyError for a tick in a gap, or newer than refresh() saw)."""
        for f in self.frames(tick, tick):
            return f
        raise KeyError(f"no tick {tick} in {self.path}")

    def frames(self, start_tick: int | None = None, end_tick: int | None = None, *,
               deferred: bool = False) -> Iterator[Frame]:
        """Frames in tick order, rebuilt in full, a few queries per BATCH_TICKS ticks (up to the
        last tick seen by refresh()); `deferred`: their pg_stat_io rows, statements and backends
        decoded when first read (store/rebuild.py's DeferredFrame)."""
        conn = self.conn
        columns = list(self._columns)
        sel = ", ".join(quote(c) for c in ("tick", "t", "elapsed", "dt", *columns))
        if self.last_tick is None:
            return
        lo, end_tick = start_tick, self._clamp(end_tick)
        while True:
            where, params = self._range("tick", lo, end_tick)
            ticks = conn.execute(f"SELECT {sel} FROM ticks{where} ORDER BY tick LIMIT {BATCH_TICKS}",
                                 params).fetchall()
            if not ticks:
                return
            a, b = ticks[0][0], ticks[-1][0]
            self._check_read(a, b)
            yield from rebuild_frames(conn, ticks, columns, [self._columns[c] for c in columns], (a, b),
                                      scales=[self._scales.get(c, 1) for c in columns], disk_layout=self._disk_layout,
                                      devices=self._devices, sources=self._sources, wait_events=self._wait_events,
                                      statements=self._statements, latency_hist=self._has_latency_hist,
                                      backends=self._backends, disk_flush=self._has_disk_flush,
                                      io_keys=self._io_keys, io_layout=self._io_layout,
                                      flush_layout=self._flush_layout, deferred=deferred)
            lo = b + 1

    def statement_texts(self) -> dict[int, str]:
        """queryid -> query text, for every statement the file knows the text of."""
        return {q: t for q, t in self._statements.values() if q is not None and t is not None}

    def statement_totals(self, start_tick: int | None = None, end_tick: int | None = None) -> dict[int, dict]:
        """Per queryid over a tick range: calls, total ms, mean and stddev ms, blocks read, dirtied,
        written, WAL bytes; summed over the statement windows in which it was among the top."""
        where, params = self._range("s.tick", start_tick, self._clamp(end_tick))
        sql = ("SELECT st.queryid, sum(s.calls), sum(s.time_us), "
               "sum(s.calls * (s.stddev_us * 1.0) * s.stddev_us + (s.time_us * 1.0) * s.time_us / s.calls), "
               "sum(s.read), sum(s.dirtied), sum(s.written), sum(s.wal_bytes) "
               "FROM statement_stats s JOIN statements st ON st.id = s.statement_id" + where + " GROUP BY st.queryid")
        totals = (statement_total(row) for row in self.conn.execute(sql, params))
        return {queryid: total for queryid, total in totals if queryid is not None and total is not None}

    @functools.cached_property
    def db(self) -> Database:
        """The file through sqlite-utils, for plain-SQL tools; imported on first use, never on
        replay's way to its first frame (sqlite-utils may pull in numpy: ~0.1 s)."""
        from sqlite_utils import Database
        return Database(self.conn, recursive_triggers=False, execute_plugins=False)

    # --- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
