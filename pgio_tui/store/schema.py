"""The recording file format: tables, metric columns, stored precision, schema versions.

One place for every fact about the file, so the writer, the reader and docs/recording.md cannot
disagree. Bump SCHEMA_VERSION for any change a reader must know about, and add the SQL that brings
the previous version up to it to MIGRATIONS: old recordings stay readable for ever.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pgio_tui.frame import BLOCK_KB, DEVICE_FIELDS, IO_BYTES_OPS, IO_FIELDS, IO_TIMES, SOURCE_FIELDS
from pgio_tui import metrics as M
from pgio_tui.metrics import CATALOG, DISK_METRICS, IO_UNITS, Unit, lookup

if TYPE_CHECKING:
    import sqlite3

    from sqlite_utils import Database  # the writer's; reading a file needs only sqlite3 (replay starts faster)

SCHEMA_VERSION = 3
FIRST_VERSION = 1  # the oldest schema a reader migrates from (MIGRATIONS covers FIRST_VERSION onwards)


def quote(identifier: str) -> str:
    """An SQL identifier in double quotes (as sqlite-utils quotes them)."""
    return '"' + identifier.replace('"', '""') + '"'

def _named_per_tick(names: str, name_cols: str, rows: str, id_col: str, value_cols: str) -> str:
    """A name table (an id per name, given by the writer at first sight) and its per-tick table,
    one row per (tick, id) with data."""
    return f"""CREATE TABLE {names} (
    id INTEGER PRIMARY KEY, {name_cols}
);
CREATE TABLE {rows} (
    tick INTEGER NOT NULL, {id_col} INTEGER NOT NULL REFERENCES {names} (id), {value_cols},
    PRIMARY KEY (tick, {id_col})
) WITHOUT ROWID"""


# Top statements (schema 2): the text once per queryid in `statements`, one row per statement and
# statement window in `statement_stats`. Stored as whole numbers over the window (counts, times in
# microseconds), which SQLite keeps in 0-4 bytes each; the window's length is the tick's
# `statements.window_s`, so rates are count / window. Column -> (Frame field, scale to the stored
# unit); the reader divides back. mean_ms is time / calls.
STATEMENT_COLUMNS: dict[str, tuple[str, float]] = {
    "calls": ("calls_s", 1.0), "time_us": ("time_ms_s", 1000.0), "stddev_us": ("stddev_ms", 1000.0),
    "rows": ("rows_s", 1.0), "hit": ("hit_s", 1.0), "read": ("read_s", 1.0), "dirtied": ("dirtied_s", 1.0),
    "written": ("written_s", 1.0), "read_time_us": ("read_time_ms_s", 1000.0),
    "write_time_us": ("write_time_ms_s", 1000.0), "temp_written": ("temp_written_s", 1.0),
    "wal_bytes": ("wal_bytes_s", 1.0),
}
_STATEMENT_COLS = ", ".join(f"{c} INTEGER" for c in STATEMENT_COLUMNS)
_STATEMENTS_DDL = f"""
{_named_per_tick("statements", "queryid INTEGER NOT NULL UNIQUE, text TEXT, first_tick INTEGER",
                 "statement_stats", "statement_id", _STATEMENT_COLS)};
CREATE VIEW statement_stats_named AS
    SELECT s.tick, st.queryid, t."statements.window_s" AS window_s, s.calls,
           s.time_us / 1000.0 / s.calls AS mean_ms, s.stddev_us / 1000.0 AS stddev_ms,
           {", ".join(f"s.{c}" for c in STATEMENT_COLUMNS if c not in ("calls", "stddev_us"))}, st.text
    FROM statement_stats s JOIN statements st ON st.id = s.statement_id JOIN ticks t ON t.tick = s.tick;
"""

# Backends (pg_stat_activity pids) and asynchronous I/O (pg_aios, 18+), added without a version bump.
# Per tick, the few backends with the most I/O (frame.BACKENDS_TOP, only those with any): who the
# backend is and its state and wait once in `backends` (a row per combination seen), and per tick
# the bytes over the tick (whole numbers: rate x the tick's dt; the reader divides by dt), the
# query's age in ms at the tick, and its statement (the `statements` row of its query_id, whose
# text is read as the top statements' are). Column -> Frame field of backend_io's byte counts:
BACKEND_IO_COLUMNS: dict[str, str] = {"read_bytes": "read_bytes_s", "write_bytes": "write_bytes_s",
                                      "pg_read_bytes": "pg_read_bytes_s", "pg_write_bytes": "pg_write_bytes_s"}
BACKENDS_DDL = f"""
CREATE TABLE backends (
    id INTEGER PRIMARY KEY, pid INTEGER, backend_type TEXT, application TEXT, database TEXT,
    state TEXT, wait_event_type TEXT, wait_event TEXT, first_tick INTEGER
);
CREATE TABLE backend_io (
    tick INTEGER NOT NULL, backend_id INTEGER NOT NULL REFERENCES backends (id), query_age_ms INTEGER,
    statement_id INTEGER REFERENCES statements (id), {", ".join(f"{c} INTEGER" for c in BACKEND_IO_COLUMNS)},
    PRIMARY KEY (tick, backend_id)
) WITHOUT ROWID;
CREATE TABLE aio (
    tick INTEGER NOT NULL, state TEXT NOT NULL, operation TEXT NOT NULL, count INTEGER,
    PRIMARY KEY (tick, state, operation)
) WITHOUT ROWID;
CREATE VIEW backend_io_named AS
    SELECT b.tick, k.pid, k.backend_type, k.application, k.database, k.state, k.wait_event_type, k.wait_event,
           t.t - b.query_age_ms / 1000.0 AS query_start, st.queryid AS query_id,
           {", ".join(f"b.{c} / t.dt AS {c}_s" for c in BACKEND_IO_COLUMNS)}
    FROM backend_io b JOIN backends k ON k.id = b.backend_id JOIN ticks t ON t.tick = b.tick
    LEFT JOIN statements st ON st.id = b.statement_id;
"""

# from_version -> SQL statements that turn a file of that version into from_version + 1.
# The reader applies them to an in-memory copy (it never writes the file it reads).
# latency_hist: a launched workload's latencies per tick: sparse log buckets 1 % wide (pgio_tui.quantiles: bucket i
# holds [0.001 ms * 1.01^i, 0.001 ms * 1.01^(i+1))), transactions (pgio: statements) per bucket.
LATENCY_HIST_DDL = """CREATE TABLE latency_hist (
    tick INTEGER NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (tick, bucket)
) WITHOUT ROWID"""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: ('ALTER TABLE ticks ADD COLUMN "statements.window_s" REAL',
        *(stmt.strip() for stmt in _STATEMENTS_DDL.split(";") if stmt.strip())),
    2: (),  # schema 3 stores some values as scaled whole numbers: a reader reads schema 2's plain ones as they are
}

# Tables added without a version bump (an older reader ignores them; a reader copes with their absence).
OPTIONAL_TABLES = ("latency_hist", "backends", "backend_io", "aio", "disk_flush", "io_keys", "io_rows")


class RecordingError(Exception):
    """A recording cannot be created, written or read. str(error) is one line meant for the user."""


class RecordingExists(RecordingError):
    """The output file already exists and --force was not given."""


# Per-tick columns before the metric columns.
TICK_COLUMNS = ("tick", "t", "elapsed", "dt")

# Keys of a Frame.checkpoints dict that have their own column; any other key goes to `extra` (JSON).
CHECKPOINT_COLUMNS = (
    "start_t", "end_t", "start_tick", "end_tick", "kind", "buffers", "log_buffers", "slru_buffers",
    "write_s", "sync_s", "total_s", "distance_kb", "estimate_kb", "lsn", "redo_lsn", "source",
)

def _cols(table: str, fields: Iterable[str]) -> str:
    return ", ".join(f"{table}.{f}" for f in fields)


# Flush requests (iostat f/s, f_await) live in their own table, `disk_flush`, one row per device and tick
# with flushes (most devices never flush but at a checkpoint's end), added after schema 2 without a
# version bump: a file without it has no flush figures (unknown, not 0). Kept as whole numbers over the
# tick (FLUSH_COUNTS, as io_rows): f_n flushes and f_us_n µs spent flushing, so f_s = f_n / dt and
# f_await_ms = f_us_n / 1000 / f_n on reading. Files written before 2026-11-27 hold per-second rates
# (FLUSH_RATES: f_s, and f_ms_s to 0.001 ms/s, an 8-byte REAL whenever the tick is not 1 s long).
FLUSH_FIELDS = ("f_s", "f_await_ms")
FLUSH_COUNTS = ("f_n", "f_us_n")
FLUSH_RATES = ("f_s", "f_ms_s")
DISK_COLUMNS = tuple(f for f in DEVICE_FIELDS if f not in FLUSH_FIELDS)  # the `disk` table's


def flush_layout(columns: Iterable[str]) -> tuple[str, str]:
    """The columns of a file's disk_flush (FLUSH_COUNTS or FLUSH_RATES; validate.py refuses any other)."""
    return FLUSH_RATES if set(FLUSH_RATES) <= set(columns) else FLUSH_COUNTS


def flush_counts(fields: dict, dt: float) -> tuple[int | None, int | None]:
    """(f_n, f_us_n) of a Frame's device row over a tick of `dt` s."""
    f_s, f_await = fields.get("f_s"), fields.get("f_await_ms")
    us = over_tick(f_s * f_await, dt, 1000) if f_s is not None and f_await is not None else None
    return over_tick(f_s, dt), us


def flush_expr(field: str, table: str, layout: tuple[str, str] = FLUSH_COUNTS, ticks: str = "ticks") -> str:
    """SQL for one of FLUSH_FIELDS from a `disk_flush` row (or its alias) of `layout`, joined to its
    `ticks` row (for dt)."""
    n, time = layout
    counts = layout == FLUSH_COUNTS
    if field == "f_await_ms":
        return f"CASE WHEN {table}.{n} > 0 THEN {table}.{time}{' / 1000.0' if counts else ''} / {table}.{n} ELSE 0.0 END"
    return f"CASE WHEN {ticks}.dt > 0 THEN {table}.{n} / {ticks}.dt END" if counts else f"{table}.{n}"


def _disk_flush_ddl(layout: tuple[str, str]) -> str:
    """disk_flush and its view as a file of `layout` holds them."""
    counts = layout == FLUSH_COUNTS
    f_s = f"{flush_expr('f_s', 'f', layout, 't')} AS f_s" if counts else flush_expr("f_s", "f", layout)
    return f"""CREATE TABLE disk_flush (
    tick INTEGER NOT NULL, device_id INTEGER NOT NULL REFERENCES devices (id), {
        ", ".join(f"{c} {'INTEGER' if counts else 'REAL'}" for c in layout)},
    PRIMARY KEY (tick, device_id)
) WITHOUT ROWID;
CREATE VIEW disk_flush_named AS
    SELECT f.tick, devices.name AS device, devices.role, {f_s}, {flush_expr("f_await_ms", "f", layout)} AS f_await_ms
    FROM disk_flush f JOIN devices ON devices.id = f.device_id{" JOIN ticks t ON t.tick = f.tick" if counts else ""}"""


DISK_UNITS = tuple({m.name.rsplit(".", 1)[1]: m.unit for m in DISK_METRICS}[f] for f in DISK_COLUMNS)
# Schema 3 stores the device fields kept to decimals as scaled whole numbers (see stored_scale) under
# names that say so; the disk_named view divides them back. Schema 1-2 files hold the plain fields.
_DISK_SCALED_NAMES = {"r_await_ms": "r_await_us", "w_await_ms": "w_await_us", "aqu_sz": "aqu_sz_x100"}
DISK_STORED = tuple(_DISK_SCALED_NAMES.get(f, f) for f in DISK_COLUMNS)  # the disk table's value columns
_DEVICE_COLS = ", ".join(f"{c} REAL" for c in DISK_STORED)
_SOURCE_COLS = ", ".join(f"{f} REAL" for f in SOURCE_FIELDS)
# pg_stat_io rows (Frame.io): one row per (tick, key) with any I/O, zeros costing nothing, as whole
# numbers over the tick (rate x the tick's dt, as backend_io; the reader divides by the stored dt), so
# a counter's sum over the ticks is the view's delta exactly: operations, kB as those beyond one 8 kB
# block per operation (frame.IO_BYTES_OPS: 0, so free, on 16-17 and for most writes on 18), times in
# whole µs (as PostgreSQL counts them), under names ending in _n (a count over the tick);
# io_rows_named gives the fields back. Files written before 2026-11-27 hold per-second rates, each
# quantized on its own, under the names without _n (IO_RATES): read as they were written.
IO_SCALES = tuple(1000 if f in IO_TIMES else 1 for f in IO_FIELDS)  # checked against stored_scale below
_IO_OP_OF = tuple(IO_FIELDS.index(IO_BYTES_OPS[f]) if f in IO_BYTES_OPS else None for f in IO_FIELDS)
_IO_RATE_COLUMNS = tuple(f"{f[:-3]}_us" if s == 1000 else f"{f}_beyond_blocks" if f in IO_BYTES_OPS else f
                         for f, s in zip(IO_FIELDS, IO_SCALES))
IO_STORED = tuple(f"{c}_n" for c in _IO_RATE_COLUMNS)  # the io_rows columns of new files


@dataclass(frozen=True)
class IoLayout:
    """A file's io_rows: its value columns (IO_FIELDS order) and what they hold."""
    columns: tuple[str, ...]
    per_tick: bool  # whole counts over the tick (divided by dt on reading); else per-second rates
    sql_type: str


IO_COUNTS = IoLayout(IO_STORED, True, "INTEGER")
IO_RATES = IoLayout(_IO_RATE_COLUMNS, False, "REAL")


def io_layout(columns: Iterable[str]) -> IoLayout:
    """The layout of a file's io_rows, from its columns (validate.py refuses any other)."""
    return IO_RATES if set(IO_RATES.columns) <= set(columns) else IO_COUNTS


def over_tick(rate, dt: float, scale: int = 1) -> int | None:
    """A per-second rate as the whole count over a tick of `dt` s (x scale: µs from ms); None: unknown."""
    if type(rate) not in (int, float) or not math.isfinite(rate):
        return None
    return round(rate * dt * scale)


def io_stored(row: dict, dt: float) -> list:
    """A Frame.io row as the io_rows columns of new files hold it (IO_COUNTS), over a tick of `dt` s."""
    counts = [over_tick(row.get(f), dt, s) for f, s in zip(IO_FIELDS, IO_SCALES)]
    ops = [None if k is None else counts[k] for k in _IO_OP_OF]
    return [v - BLOCK_KB * n if v is not None and n is not None else v for v, n in zip(counts, ops)]


def io_stored_of(field: str, layout: IoLayout) -> tuple[str, str | None, int]:
    """Where a Frame.io field lives in io_rows of `layout`: its column, the operation's column when
    its kB are stored beyond 8 kB a block (IO_BYTES_OPS), and its scale (io_fields() reads them back)."""
    k = IO_FIELDS.index(field)
    op = _IO_OP_OF[k]
    return layout.columns[k], None if op is None else layout.columns[op], IO_SCALES[k]


_IO_BLOCKS_AT = tuple((i, k) for i, k in enumerate(_IO_OP_OF) if k is not None)  # (kB field, its operations)
_IO_SCALED_AT = tuple((i, sc) for i, sc in enumerate(IO_SCALES) if sc != 1)


def io_fields(stored: list, dt: float | None, layout: IoLayout = IO_COUNTS) -> dict:
    """io_rows columns (already numbers or None) of a tick of `dt` s back to a Frame.io row.
    Replay rebuilds a window's rows with it (hundreds a seek): only the fields that change are touched."""
    values = list(stored)
    for i, k in _IO_BLOCKS_AT:
        v, n = stored[i], stored[k]
        if v is not None and n is not None:
            values[i] = v + BLOCK_KB * n
    if not layout.per_tick:
        for i, sc in _IO_SCALED_AT:
            values[i] = from_stored(values[i], sc)
        return dict(zip(IO_FIELDS, values))
    if dt is None or dt <= 0:  # a count over an unknown span is no rate
        return dict.fromkeys(IO_FIELDS)
    return {f: v / (sc * dt) if v is not None else None for f, v, sc in zip(IO_FIELDS, values, IO_SCALES)}


def _io_rows_ddl(layout: IoLayout) -> str:
    """io_keys, io_rows and the io_rows_named view (fields per second) as a file of `layout` holds them."""
    def field(f: str, c: str, s: int) -> str:
        ops = layout.columns[IO_FIELDS.index(IO_BYTES_OPS[f])] if f in IO_BYTES_OPS else None
        if not layout.per_tick:
            return f"r.{c} / {s}.0 AS {f}" if s > 1 else f"r.{c} + 8 * r.{ops} AS {f}" if ops else f"r.{c}"
        value = f"r.{c} / {s}.0" if s > 1 else f"(r.{c} + {BLOCK_KB} * r.{ops})" if ops else f"r.{c}"
        return f"{value} / t.dt AS {f}"

    tables = _named_per_tick("io_keys", "backend_type TEXT NOT NULL, object TEXT NOT NULL, context TEXT NOT NULL, "
                             "first_tick INTEGER", "io_rows", "key_id",
                             ", ".join(f"{c} {layout.sql_type}" for c in layout.columns))
    dt = " JOIN ticks t ON t.tick = r.tick" if layout.per_tick else ""
    return f"""{tables};
CREATE VIEW io_rows_named AS
    SELECT r.tick, k.backend_type, k.object, k.context, {", ".join(
        field(f, c, s) for f, c, s in zip(IO_FIELDS, layout.columns, IO_SCALES))}
    FROM io_rows r JOIN io_keys k ON k.id = r.key_id{dt}"""


# Tables (and their views) as files written before the counts over the tick hold them, and the columns
# that tell (accepted in those: validate.py): table -> (DDL, columns).
RATES_DDL = {"io_rows": (_io_rows_ddl(IO_RATES).split(";\n", 1)[1], IO_RATES.columns),  # (io_keys: as now)
             "disk_flush": (_disk_flush_ddl(FLUSH_RATES), FLUSH_RATES)}

# Objects older recordings hold that new ones no longer make (still accepted on open): (type, name) ->
# (its SQL, columns). ticks_t: tick_at() binary-searches the tick numbers instead (the index was 2 %).
LEGACY_OBJECTS: dict[tuple[str, str], tuple[str, dict]] = {
    ("index", "ticks_t"): ("CREATE INDEX ticks_t ON ticks (t)", {}),
}

DDL = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value);
CREATE TABLE settings (
    name TEXT NOT NULL, value, unit TEXT,
    category TEXT,            -- postgres | kernel | device | machine
    tick INTEGER              -- NULL: snapshot at start; else the tick the change was seen
);
CREATE TABLE ticks (tick INTEGER PRIMARY KEY, t REAL NOT NULL, elapsed REAL, dt REAL, {{metrics}});
{_named_per_tick("devices", "name TEXT NOT NULL UNIQUE, role TEXT, first_tick INTEGER", "disk", "device_id",
                 _DEVICE_COLS)};
{_named_per_tick("sources", "backend_type TEXT NOT NULL UNIQUE, first_tick INTEGER", "io", "source_id",
                 _SOURCE_COLS)};
{_named_per_tick("wait_events", "backend_type TEXT, wait_event_type TEXT, wait_event TEXT", "waits", "wait_id",
                 "count INTEGER")};
CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY, start_t REAL, end_t REAL, start_tick INTEGER, end_tick INTEGER,
    kind TEXT, buffers INTEGER, log_buffers INTEGER, slru_buffers INTEGER,
    write_s REAL, sync_s REAL, total_s REAL, distance_kb REAL, estimate_kb REAL,
    lsn TEXT, redo_lsn TEXT, source TEXT, extra TEXT
);
CREATE INDEX checkpoints_end_tick ON checkpoints (end_tick);
CREATE TABLE events (
    id INTEGER PRIMARY KEY, tick INTEGER, t REAL, kind TEXT NOT NULL, text TEXT, data TEXT
);
CREATE INDEX events_tick ON events (tick);
{LATENCY_HIST_DDL};
{_disk_flush_ddl(FLUSH_COUNTS)};
{_io_rows_ddl(IO_COUNTS)};
CREATE TABLE workloads (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, argv TEXT, params TEXT,
    start_t REAL, stop_t REAL, exit_code INTEGER, summary TEXT
);
CREATE TABLE workload_output (
    workload_id INTEGER NOT NULL REFERENCES workloads (id), t REAL, stream TEXT, line TEXT
);
CREATE INDEX workload_output_workload ON workload_output (workload_id, t);
-- The per-tick tables with names instead of ids, for people reading the file with SQL.
{{disk_named}};
CREATE VIEW io_named AS
    SELECT io.tick, sources.backend_type, {_cols("io", SOURCE_FIELDS)}
    FROM io JOIN sources ON sources.id = io.source_id;
CREATE VIEW waits_named AS
    SELECT waits.tick, w.backend_type, w.wait_event_type, w.wait_event, waits.count
    FROM waits JOIN wait_events w ON w.id = waits.wait_id;
""" + _STATEMENTS_DDL + BACKENDS_DDL


def _disk_named(columns: Iterable[str], scales: Iterable[int]) -> str:
    """The disk_named view: the disk table's columns (scaled ones divided back, under the field's name)."""
    values = ", ".join(_cols("disk", [c]) if s == 1 else f"{_cols('disk', [c])} / {s}.0 AS {f}"
                       for f, c, s in zip(DISK_COLUMNS, columns, scales))
    return f"""CREATE VIEW disk_named AS
    SELECT disk.tick, devices.name AS device, devices.role, {values}
    FROM disk JOIN devices ON devices.id = disk.device_id"""


def column_type(metric: str) -> str:
    """SQL type of a metric's column in `ticks`: TEXT for label metrics, REAL for numbers."""
    m = lookup(metric)
    return "TEXT" if m is not None and m.unit == "text" else "REAL"


def catalog_columns() -> dict[str, str]:
    """The metric columns every new recording starts with, in catalog order."""
    return {m.name: column_type(m.name) for m in CATALOG}


def create(db: Database | sqlite3.Connection) -> None:
    """Create every table of a new recording, with one `ticks` column per catalog metric, in one
    transaction."""
    metrics = ", ".join(f"{quote(name)} {sql_type}" for name, sql_type in catalog_columns().items())
    ddl = DDL.replace("{metrics}", metrics).replace("{disk_named}", _disk_named(DISK_STORED, DISK_SCALES))
    db.executescript("BEGIN;\n" + ddl + "COMMIT;")


def add_metric_columns(db: Database, columns: dict[str, str]) -> None:
    """Add metric columns to `ticks` (a metric the catalog does not know appeared in a Frame)."""
    for name, sql_type in columns.items():
        db.table("ticks").add_column(name, sql_type)


def needs_migration(version: int) -> bool:
    """Whether a file of `version` needs MIGRATIONS run (on an in-memory copy) before it is read."""
    return any(MIGRATIONS[v] for v in range(version, SCHEMA_VERSION))


def migrate(db: Database | sqlite3.Connection, version: int) -> None:
    """Bring a recording of an older schema `version` up to SCHEMA_VERSION, in place."""
    for v in range(version, SCHEMA_VERSION):
        for sql in MIGRATIONS[v]:
            db.execute(sql)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))


# --- stored precision ---------------------------------------------------------------------------
# SQLite stores a REAL that holds a whole number as a 0-6 byte integer, any other REAL as 8 bytes.
# Rounding each value to the precision its unit needs turns most of them into whole numbers, which
# keeps an hour at 1 Hz under 2 MB. docs/recording.md lists these figures; keep them in step.

# Each unit says what is kept (metrics.Unit): rates of events one event per tick (see quantize),
# others their `decimals` (ms/s: 0.001, so 0.4 ms of fsync in a tick is kept), latencies in ms
# SIGNIFICANT digits; metrics the catalog does not know are kept as they are.
SIGNIFICANT = 3  # ms gauges: 3 significant digits, never finer than 0.001


def quantize(value, unit: str | None, interval: float = 1.0):
    """`value` rounded to the precision stored for `unit`; NaN and inf become None (NULL).

    A per-second rate of events is a count over the tick divided by the tick's length, so its
    real resolution is one event per tick: at 1 Hz whole numbers, which SQLite stores in 1-4 bytes.
    """
    if not isinstance(value, float):
        return value
    if not math.isfinite(value):
        return None
    if unit is None:
        return value
    u = unit if type(unit) is Unit else Unit.of(unit)
    if u.per_tick:
        return round(round(value * interval) / interval, 6)
    decimals = u.decimals
    if decimals is None:
        if value == 0.0:
            return 0.0
        decimals = min(3, SIGNIFICANT - 1 - math.floor(math.log10(abs(value))))
    return round(value, decimals)


def metric_unit(metric: str) -> str | None:
    m = lookup(metric)
    return m.unit if m is not None else None


def metric_columns_of(conn: sqlite3.Connection) -> dict[str, str]:
    """The metric columns of `ticks` with their types, in table order (catalog, then added later)."""
    return {name: type_ for name, type_ in table_columns(conn, "ticks").items() if name not in TICK_COLUMNS}


def table_columns(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    """A table's columns and their declared types, in table order."""
    return {r[1]: r[2] for r in conn.execute(f"PRAGMA table_info({quote(table)})")}


def all_zero(values: Iterable) -> bool:
    """True when every value is exactly 0: such per-device/per-source rows are not stored."""
    return all(v == 0 for v in values)


# --- scaled whole numbers (schema 3) --------------------------------------------------------------
# A value quantize() keeps to d decimals (d > 0) is stored as the whole number value x 10^d: SQLite
# keeps it in 1-4 bytes where the fractional REAL took 8 (590 of 3,121 kB per hour in
# bench/recording_size.py: 19 ticks columns and 3 disk columns). Reading divides
# by the same scale and gives back the very same float: quantize returns the float nearest to a
# decimal k / 10^d, the stored whole number is k, and k / 10^d (IEEE division, correctly rounded)
# is that float again. Values beyond 2^53 / scale (absurd for these units) keep the product as is.
# `ticks`: a file's scaled metric columns are listed in meta "scales" (column -> scale), written at
# creation, so a catalog that later changes a unit cannot change how an older file reads; a file
# without that key (schema 1-2) holds plain values.

SCALES = (10, 100, 1000)  # the only scales a file may name (a crafted other is ignored: plain)
# Left plain: read by the statement_stats_named view, and NULL but once per statement window anyway.
UNSCALED_METRICS = (M.STATEMENTS_WINDOW_S,)


def stored_scale(unit: str | None) -> int:
    """What a value of `unit` is multiplied by to be stored as a whole number (1: stored as is)."""
    if unit is None or unit == "text":
        return 1  # unknown metrics are kept as they came
    u = Unit.of(unit)
    if u.per_tick:
        return 1  # whole numbers at 1 Hz already
    decimals = 3 if u.decimals is None else u.decimals  # SIGNIFICANT units are never finer than 0.001
    return 10 ** decimals if decimals > 0 else 1


def tick_scales(columns: Iterable[str]) -> dict[str, int]:
    """The scaled `ticks` columns of a new recording (meta "scales")."""
    out = {}
    for c in columns:
        scale = stored_scale(metric_unit(c))
        if scale > 1 and c not in UNSCALED_METRICS:
            out[c] = scale
    return out


def to_stored(value, scale: int):
    """A quantized value as stored with `scale` (see above)."""
    if scale == 1 or type(value) not in (int, float):
        return value
    v = value * scale
    return round(v) if abs(v) < 2 ** 53 else v


def from_stored(value, scale: int):
    """A stored number (already checked to be one, or None) back to the value."""
    return value if scale == 1 or type(value) not in (int, float) else value / scale


DISK_SCALES = tuple(stored_scale(u) for u in DISK_UNITS)
assert IO_SCALES == tuple(stored_scale(IO_UNITS[f]) for f in IO_FIELDS)
assert all((s == 1) == (c == f) for f, c, s in zip(DISK_COLUMNS, DISK_STORED, DISK_SCALES)), "name each scaled column"

# Schema 1-2's objects that schema 3 changed, accepted in files of those versions (validate.py): the
# disk table with plain REAL columns, and its view.
BEFORE_3_DDL = f"""CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT, role TEXT);  -- for the view
CREATE TABLE disk (
    tick INTEGER NOT NULL, device_id INTEGER NOT NULL REFERENCES devices (id),
    {", ".join(f"{f} REAL" for f in DISK_COLUMNS)},
    PRIMARY KEY (tick, device_id)
) WITHOUT ROWID;
{_disk_named(DISK_COLUMNS, (1,) * len(DISK_COLUMNS))};
"""


def disk_layout(columns: Iterable[str]) -> tuple[tuple[str, str, int], ...]:
    """(field, column, scale) of a file's disk table, from its columns: schema 3's scaled ones,
    or the plain fields of older files."""
    if set(DISK_STORED) <= set(columns):
        return tuple(zip(DISK_COLUMNS, DISK_STORED, DISK_SCALES))
    return tuple((f, f, 1) for f in DISK_COLUMNS)
