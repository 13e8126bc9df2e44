"""The metric catalog: every public metric with everything about it, written once.

A `Metric` holds its name, its typed `Unit` (how values are written, stored and exported), kind,
pane, meaning, where it comes from (`source`, and `read`: the tick statement's section and column),
how PostgreSQL publishes it (`published`), its Prometheus name and type (`prom`) and its independent
`reference` (what the truth suite checks it against). Everything else is derived from here, never
written beside it: the sampler's counter rates (sampler/rates.COUNTER_RATES), which counters are
spread (sources/pg_counters.PUBLISHED_AS_WRITTEN), the Prometheus table (export/promnames.py), the
recording's stored precision (store/schema.quantize) and docs/metrics.md (`python -m
pgio_tui.metrics_doc`; a test keeps it in step). Code names a metric by its constant (MEM_DIRTY_KB,
writes(source), disk(device, field), LATENCY_OVER[ms]) and shows it with its label and fmt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pgio_tui import format as _format
from pgio_tui.frame import BACKEND_RATES, DEVICE_FIELDS, DISK_PREFIX, IO_FIELDS, SOURCE_FIELDS, STATEMENT_FIELDS, TIMED_OPS, disk  # noqa: F401 (disk: a name builder of the catalog)


class Unit(str):
    """A metric's unit: equal to its symbol (`m.unit == "ms/s"`), and knowing how its values are
    written (`fmt`), kept in a recording (`per_tick`: a rate of events, whole events per tick;
    else `decimals` kept, None for SIGNIFICANT digits) and exported (`to_base`: the factor to
    Prometheus' base unit, seconds, bytes or ratio)."""

    fmt: Callable[[float | None], str]
    per_tick: bool
    decimals: int | None
    to_base: float

    def __new__(cls, symbol: str, fmt: Callable[[float | None], str] = _format.si, *, per_tick: bool = False,
                decimals: int | None = None, to_base: float = 1.0) -> Unit:
        u = super().__new__(cls, symbol)
        u.fmt, u.per_tick, u.decimals, u.to_base = fmt, per_tick, decimals, to_base
        return u

    @classmethod
    def of(cls, symbol: str) -> Unit:
        """The catalog's unit of that symbol; an unknown one is a rate of events when it ends in /s."""
        return UNITS.get(symbol) or cls(symbol, per_tick=symbol.endswith("/s"))


_MS, _KB = 1e-3, 1024.0
UNITS: dict[str, Unit] = {u: u for u in (
    Unit("text", decimals=0),  # a label: stored as it is
    Unit("0/1", decimals=0), Unit("count", decimals=0), Unit("buffers", decimals=0),
    Unit("kB", _format.kib, decimals=0, to_base=_KB),
    Unit("%", _format.pct, decimals=0, to_base=0.01),
    Unit("0-1", _format.fraction, decimals=3),
    Unit("s", decimals=3),
    Unit("requests", decimals=2),
    Unit("ms", _format.ms, to_base=_MS),  # latencies: SIGNIFICANT digits, never finer than 0.001
    # Rates of events: a count over the tick / its length, so one event per tick is their resolution.
    *(Unit(s, per_tick=True) for s in ("1/s", "buffers/s", "blocks/s", "fsyncs/s", "requests/s", "stops/s",
                                       "bytes/s")),
    Unit("kB/s", _format.kib, per_tick=True, to_base=_KB),
    # Time per second is not a count of events: 0.4 ms of fsync in a tick is 0.4, not 0 (kept to 1 us/s).
    Unit("ms/s", decimals=3, to_base=_MS),
)}


@dataclass(frozen=True, slots=True)
class Reference:
    """What a metric's figures are checked against, independently of how pgio-tui computes them
    (the truth suite): one of REFERENCE_KINDS, or a derivation `of` other referenced metrics."""

    kind: str
    of: tuple[str, ...] = ()


REFERENCE_KINDS = {
    "view": "the view's own column (its delta for a counter) read independently over the same window",
    "log": "the server log's lines (log_checkpoints, duration: lines)",
    "pgbench": "pgbench's summary or per-transaction log",
    "iostat": "iostat -x over the same interval",
    "proc": "/proc (meminfo, vmstat, pressure, <pid>/io, the process's own CPU times)",
    "cgroup": "the cgroup's memory.stat",
    "clock": "the sampler's or the server's clock",
    "derived": "computed from the named metrics, each checked against its own reference",
}
VIEW, LOG, PGBENCH, IOSTAT, PROC, CLOCK = (Reference(k) for k in ("view", "log", "pgbench", "iostat", "proc", "clock"))


def derived(*names: str) -> Reference:
    return Reference("derived", names)


@dataclass(frozen=True, slots=True)
class Read:
    """Where the tick statement (sources/tick_sql.py) returns a value: a section of its RawSample
    and a column of it, under one name whatever the version (the SQL reads each version's view)."""

    section: str
    column: str


# How PostgreSQL publishes a counter. The checkpointer and background writer publish theirs as they
# work: shown as sampled. A backend flushes its statistics at most about once a second (before 17
# buffers_backend in lumps): the sampler spreads its bursts (pgio_tui/publication.py).
AS_WRITTEN, BURSTY = "as written", "bursty"
# pg_stat_io rows (Frame.sources) of these backend types are published as written.
STEADY_PUBLISHERS = ("checkpointer", "background writer")


@dataclass(frozen=True, slots=True)
class Prom:
    """A metric's Prometheus series (export/promnames.py): the family name without `pgio_` and
    `_total`, its type, the family's help when it is not the metric's own, and fixed labels. The
    value is scaled by the unit's `to_base`; a counter of a gauge metric adds the value per tick."""

    name: str
    type: str = "counter"  # or "gauge"
    help: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    note: str = ""  # said after the help (e.g. that a gauge covers one tick only)


def gauge(name: str, help: str = "", note: str = "") -> Prom:
    return Prom(name, "gauge", help, note=note)


@dataclass(frozen=True, slots=True)
class Metric:
    """One catalog entry: the single place a figure's name, unit, meaning, source and reference live."""

    name: str
    unit: Unit
    kind: str  # "gauge" (a level now), "rate" (per second over the tick), "state" (a label or 0/1)
    pane: str  # checkpoint, writes, memory, devices, latency, waits, reads, wal, database, observer, statements
    help: str
    source: str  # where it comes from, per PostgreSQL version where that differs
    label: str = ""  # its short name on a chart or in a table (default: from its name)
    reference: Reference | None = None  # its independent check (the truth suite)
    read: Read | None = None  # the tick statement's column it is read from, when it is one
    published: str | None = None  # AS_WRITTEN or BURSTY: PostgreSQL counters only
    prom: Prom | None = None  # its Prometheus series, if it has one

    @property
    def fmt(self) -> Callable[[float | None], str]:
        """How its values are written in a pane or on an axis: by unit."""
        return self.unit.fmt


# latency.over_<N>ms: per-tick counts of latencies above these (pgio_tui.workloads.latency counts them).
LATENCY_THRESHOLDS_MS = (100, 200, 300, 400, 500)
_PER_TICK = "Of this tick only: never average it, use pgio_transaction_duration_seconds."
_LAUNCHED = "launched workload only: pgbench per-transaction log, pgio statement times"
_WAL_IO = "(object wal, context normal: writes zero-filling new segments are left out, as before 18)"
_BUFCACHE = "every tick while a checkpoint starts, else at most every 10 s (costs ~0.5 us per buffer)"
_PGSS = ("pg_stat_statements deltas of plannable top-level statements (14+: toplevel), utility statements "
         "and pgio-tui's own (marked SELECT /* pgio-tui ... */) excluded")

# --- names: code refers to a metric by these constants, never by a string literal (a test checks) ---
CHECKPOINT_ACTIVE = "checkpoint.active"
CHECKPOINT_KIND = "checkpoint.kind"
CHECKPOINT_PROGRESS = "checkpoint.progress"
CHECKPOINT_BUFFERS_WRITTEN = "checkpoint.buffers_written"
CHECKPOINT_BUFFERS_ESTIMATE = "checkpoint.buffers_estimate"
CHECKPOINT_ELAPSED_S = "checkpoint.elapsed_s"
CHECKPOINT_TIME_PROGRESS = "checkpoint.time_progress"
CHECKPOINT_WAL_PROGRESS = "checkpoint.wal_progress"
WRITES_CHECKPOINTER = "writes.checkpointer"
WRITES_BGWRITER = "writes.bgwriter"
WRITES_BACKEND = "writes.backend"
WRITES_AUTOVACUUM = "writes.autovacuum"
WRITES_OTHER = "writes.other"
FSYNCS_BACKEND = "fsyncs.backend"
FSYNCS_CHECKPOINTER = "fsyncs.checkpointer"
EXTENDS_BACKEND = "extends.backend"
WRITEBACKS_TOTAL = "writebacks.total"
BGWRITER_MAXWRITTEN_S = "bgwriter.maxwritten_s"
BUFFERS_ALLOC_S = "buffers.alloc_s"
MEM_DIRTY_KB = "mem.dirty_kb"
MEM_WRITEBACK_KB = "mem.writeback_kb"
MEM_DIRTY_BACKGROUND_THRESHOLD_KB = "mem.dirty_background_threshold_kb"
MEM_DIRTY_THRESHOLD_KB = "mem.dirty_threshold_kb"
MEM_AVAILABLE_KB = "mem.available_kb"
MEM_CACHED_KB = "mem.cached_kb"
IO_PRESSURE_SOME_PCT = "io.pressure_some_pct"
IO_PRESSURE_FULL_PCT = "io.pressure_full_pct"
LATENCY_TPS = "latency.tps"
LATENCY_MEAN_MS = "latency.mean_ms"
LATENCY_STDDEV_MS = "latency.stddev_ms"
LATENCY_PERCENTILES = (50, 95, 99)  # the per-tick percentiles: latency.p<N>_ms, a summary's p<N>
LATENCY_P: dict[int, str] = {p: f"latency.p{p}_ms" for p in LATENCY_PERCENTILES}
LATENCY_P50_MS, LATENCY_P95_MS, LATENCY_P99_MS = LATENCY_P.values()
LATENCY_MAX_MS = "latency.max_ms"
LATENCY_TXNS = "latency.txns"
LATENCY_FAILED = "latency.failed"
PGIO_READS_S = "pgio.reads_s"
PGIO_HITS_S = "pgio.hits_s"
PGIO_TUPLES_S = "pgio.tuples_s"
DB_BLKS_READ_S = "db.blks_read_s"
DB_BLKS_HIT_S = "db.blks_hit_s"
DB_XACT_S = "db.xact_s"
DB_TEMP_BYTES_S = "db.temp_bytes_s"
DB_BLK_READ_TIME_MS_S = "db.blk_read_time_ms_s"
DB_BLK_WRITE_TIME_MS_S = "db.blk_write_time_ms_s"
DB_BACKENDS = "db.backends"
WAL_BYTES_S = "wal.bytes_s"
WAL_RECORDS_S = "wal.records_s"
WAL_FPI_S = "wal.fpi_s"
WAL_FPI_BYTES_S = "wal.fpi_bytes_s"
WAL_BUFFERS_FULL_S = "wal.buffers_full_s"
WAL_WRITES_S = "wal.writes_s"
WAL_SYNCS_S = "wal.syncs_s"
WAL_WRITE_TIME_MS_S = "wal.write_time_ms_s"
WAL_SYNC_TIME_MS_S = "wal.sync_time_ms_s"
BUFFERS_USED = "buffers.used"
BUFFERS_DIRTY = "buffers.dirty"
BUFFERS_EVICTIONS_S = "buffers.evictions_s"
SESSIONS_ACTIVE = "sessions.active"
SESSIONS_IO_WAIT = "sessions.io_wait"
SESSIONS_LOCK_WAIT = "sessions.lock_wait"
SESSION_COUNTS = (SESSIONS_ACTIVE, SESSIONS_IO_WAIT, SESSIONS_LOCK_WAIT)  # counted at a wait sample


def waits_sampled(values: dict) -> bool:
    """Did this tick take a wait sample (read pg_stat_activity)? With many processes the sampler
    reads it every few ticks (sources/backends.backends_every); a tick without one has no session
    counts and no waits: unknown, not none. Recordings keep that as SESSIONS_ACTIVE missing."""
    return values.get(SESSIONS_ACTIVE) is not None


OBSERVER_COLLECT_MS = "observer.collect_ms"
OBSERVER_CPU_MS = "observer.cpu_ms"
OBSERVER_SERVER_MS = "observer.server_ms"
OBSERVER_LATE_MS = "observer.late_ms"
STATEMENTS_CALLS_S = "statements.calls_s"
STATEMENTS_MEAN_MS = "statements.mean_ms"
STATEMENTS_STDDEV_MS = "statements.stddev_ms"
STATEMENTS_WINDOW_S = "statements.window_s"
OBSERVER_STATEMENTS_MS = "observer.statements_ms"
AIO_IN_FLIGHT = "aio.in_flight"
# Gauges read with the processes (pg_stat_activity): every few ticks with many processes
# (sources/backends.backends_every), None on the ticks between (unknown, as waits_sampled says).
WITH_THE_PROCESSES = (*SESSION_COUNTS, DB_BACKENDS, AIO_IN_FLIGHT)
CHECKPOINT_TIMEOUT_S = "checkpoint.timeout_s"
CHECKPOINT_COMPLETION_TARGET = "checkpoint.completion_target"
LATENCY_CALLS_S = "latency.calls_s"  # recordings made before statements.*: their statement rate, not in the catalog
LATENCY_OVER: dict[int, str] = {ms: f"latency.over_{ms}ms" for ms in LATENCY_THRESHOLDS_MS}  # per threshold
# statements.log_over_<N>ms: the server log's duration: lines over the same thresholds (sources/slowlog.py)
STATEMENTS_LOG_OVER: dict[int, str] = {ms: f"statements.log_over_{ms}ms" for ms in LATENCY_THRESHOLDS_MS}
WRITE_SOURCES = ("checkpointer", "bgwriter", "backend", "autovacuum", "other")  # writes.<source>


def writes(source: str) -> str:
    """The buffers-written metric of one source (one of WRITE_SOURCES)."""
    return f"writes.{source}"


# Per-device metrics are disk(<device>, <field>) = disk.<device>.<field>, the fields of frame.DEVICE_FIELDS.
DISK_R_S, DISK_W_S, DISK_RKB_S, DISK_WKB_S = "r_s", "w_s", "rkb_s", "wkb_s"
DISK_R_AWAIT_MS, DISK_W_AWAIT_MS, DISK_AQU_SZ, DISK_UTIL_PCT = "r_await_ms", "w_await_ms", "aqu_sz", "util_pct"
DISK_F_S, DISK_F_AWAIT_MS = "f_s", "f_await_ms"  # flushes (cache flush requests: fsync, fdatasync, O_DSYNC)


def _m(name, unit, kind, pane, help, source, label="", *, ref, read=None, published=None, prom=None):
    if name in WITH_THE_PROCESSES:
        help += _WITH_THE_PROCESSES_NOTE
    return Metric(name, UNITS[unit], kind, pane, help, source, label or _label(name), ref, read, published, prom)


_WITH_THE_PROCESSES_NOTE = (" Read with the processes: every tick up to 300 connected backends, every few ticks "
                            "above (null in between).")


def _label(name: str) -> str:
    """writes.checkpointer -> checkpointer, latency.p95_ms -> p95, disk.<device>.r_await_ms -> r_await."""
    last = name.rsplit(".", 1)[-1]
    for suffix in ("_kb", "_ms", "_pct"):
        if last.endswith(suffix):
            return last[: -len(suffix)]
    return last


# Prometheus help shared by a family's series (one family, several metrics told apart by labels).
_WRITTEN = "Shared buffers written, by who wrote them (pg_stat_io 16+, pg_stat_bgwriter/checkpointer before)."
_FSYNCS = "fsync calls, by who made them (backend: the checkpointer's request queue was full)."
_PSI = "Time during which {} stalled on I/O (/proc/pressure/io)."
_BT = "backend_type"

CATALOG: tuple[Metric, ...] = (
    # --- checkpoint -------------------------------------------------------------------------
    _m(CHECKPOINT_ACTIVE, "0/1", "state", "checkpoint",
       "1 while a checkpoint is running.",
       "checkpointer wait event (14+: CheckpointWriteDelay/DataFile*; 13: not CheckpointerMain), "
       "started-vs-finished counters (18: num_done), log start line when readable",
       ref=LOG, prom=gauge("checkpoint_active")),
    _m(CHECKPOINT_KIND, "text", "state", "checkpoint",
       "Why the running (or last) checkpoint started: time, wal, requested, immediate, shutdown, end-of-recovery.",
       "server log `checkpoint starting:` flags when readable; else timed/requested counters",
       ref=LOG),  # Prometheus: pgio_checkpoint_info{kind=...} (export/promnames.py)
    _m(CHECKPOINT_PROGRESS, "0-1", "gauge", "checkpoint",
       "Estimated fraction of the running checkpoint's buffer writes done.",
       "buffers written so far / dirty buffers at start (16+: pg_buffercache_summary(); else the schedule "
       "formula max(elapsed/(timeout*cct), wal/(segments*cct)))", label="progress",
       ref=derived(CHECKPOINT_BUFFERS_WRITTEN, CHECKPOINT_BUFFERS_ESTIMATE, CHECKPOINT_ELAPSED_S, CHECKPOINT_TIMEOUT_S,
                   CHECKPOINT_COMPLETION_TARGET, CHECKPOINT_WAL_PROGRESS),
       prom=gauge("checkpoint_progress_ratio")),
    _m(CHECKPOINT_BUFFERS_WRITTEN, "buffers", "gauge", "checkpoint",
       "Buffers written by the running checkpoint so far.",
       "13-16 pg_stat_bgwriter.buffers_checkpoint, 17+ pg_stat_checkpointer.buffers_written, minus the value at start",
       ref=VIEW, prom=gauge("checkpoint_buffers_written")),
    _m(CHECKPOINT_BUFFERS_ESTIMATE, "buffers", "gauge", "checkpoint",
       "Estimated buffers the running checkpoint will write (dirty buffers when it started).",
       "16+ pg_buffercache_summary().buffers_dirty sampled at start; null when unknown",
       ref=VIEW, prom=gauge("checkpoint_buffers_estimate")),
    _m(CHECKPOINT_ELAPSED_S, "s", "gauge", "checkpoint",
       "Seconds since the running checkpoint started.", "sampler clock at detected start",
       ref=CLOCK, prom=gauge("checkpoint_elapsed_seconds")),
    _m(CHECKPOINT_TIME_PROGRESS, "0-1", "gauge", "checkpoint",
       "Time since the last checkpoint started, as a fraction of checkpoint_timeout (1 = timed checkpoint due).",
       "pg_control_checkpoint().checkpoint_time, checkpoint_timeout", label="time",
       ref=VIEW, prom=gauge("checkpoint_time_progress_ratio")),
    _m(CHECKPOINT_WAL_PROGRESS, "0-1", "gauge", "checkpoint",
       "WAL since the last checkpoint's redo point as a fraction of the distance that triggers a WAL checkpoint.",
       "pg_wal_lsn_diff(insert_lsn, redo_lsn) / (floor(max_wal_size/(1+cct)) segments)", label="WAL",
       ref=VIEW, prom=gauge("checkpoint_wal_progress_ratio")),
    _m(CHECKPOINT_TIMEOUT_S, "s", "gauge", "checkpoint",
       "checkpoint_timeout in force at this tick (a reload mid-session shows here).",
       "pg_settings, re-read when the settings fingerprint changes",
       ref=VIEW, prom=gauge("checkpoint_timeout_seconds")),
    _m(CHECKPOINT_COMPLETION_TARGET, "0-1", "gauge", "checkpoint",
       "checkpoint_completion_target in force at this tick.",
       "pg_settings, re-read when the settings fingerprint changes",
       ref=VIEW, prom=gauge("checkpoint_completion_target_ratio")),
    # --- buffers written by source (cumulative: sources/pg_counters.writes_by_source) ---------
    _m(WRITES_CHECKPOINTER, "buffers/s", "rate", "writes",
       "Shared buffers written by the checkpointer.",
       "16+ pg_stat_io writes (checkpointer, relation); 13-15 pg_stat_bgwriter.buffers_checkpoint",
       ref=VIEW, published=AS_WRITTEN, prom=Prom("buffers_written", help=_WRITTEN, labels=((_BT, "checkpointer"),))),
    _m(WRITES_BGWRITER, "buffers/s", "rate", "writes",
       "Shared buffers written by the background writer.",
       "16+ pg_stat_io writes (background writer); 13-15 pg_stat_bgwriter.buffers_clean",
       ref=VIEW, published=AS_WRITTEN, prom=Prom("buffers_written", help=_WRITTEN, labels=((_BT, "bgwriter"),))),
    _m(WRITES_BACKEND, "buffers/s", "rate", "writes",
       "Buffers written by client backends (evicting dirty buffers themselves).",
       "16+ pg_stat_io writes (client backend, relation); 13-15 pg_stat_bgwriter.buffers_backend "
       "(which also counts extensions and writes by autovacuum and other processes)",
       ref=VIEW, published=BURSTY, prom=Prom("buffers_written", help=_WRITTEN, labels=((_BT, "backend"),))),
    _m(WRITES_AUTOVACUUM, "buffers/s", "rate", "writes",
       "Buffers written by autovacuum workers.", "16+ pg_stat_io writes (autovacuum worker); null before 16",
       ref=VIEW, published=BURSTY, prom=Prom("buffers_written", help=_WRITTEN, labels=((_BT, "autovacuum"),))),
    _m(WRITES_OTHER, "buffers/s", "rate", "writes",
       "Buffers written by every other process type (background workers, walsender, startup, ...).",
       "16+ pg_stat_io writes of the remaining backend types; null before 16",
       ref=VIEW, published=BURSTY, prom=Prom("buffers_written", help=_WRITTEN, labels=((_BT, "other"),))),
    _m(FSYNCS_BACKEND, "fsyncs/s", "rate", "writes",
       "fsync calls made by backends themselves (the checkpointer's request queue was full).",
       "16+ pg_stat_io fsyncs (client backend); 13-15 pg_stat_bgwriter.buffers_backend_fsync",
       ref=VIEW, published=BURSTY, prom=Prom("fsyncs", help=_FSYNCS, labels=((_BT, "backend"),))),
    _m(FSYNCS_CHECKPOINTER, "fsyncs/s", "rate", "writes",
       "fsync calls made by the checkpointer.", "16+ pg_stat_io fsyncs (checkpointer); null before 16",
       ref=VIEW, published=AS_WRITTEN, prom=Prom("fsyncs", help=_FSYNCS, labels=((_BT, "checkpointer"),))),
    _m(EXTENDS_BACKEND, "blocks/s", "rate", "writes",
       "Relation extensions (new blocks) by client backends.", "16+ pg_stat_io extends (client backend); null before 16",
       ref=VIEW, published=BURSTY, prom=Prom("buffers_extended", help="Relation extensions (new blocks), by who made them.",
                                              labels=((_BT, "backend"),))),
    _m(WRITEBACKS_TOTAL, "requests/s", "rate", "writes",
       "Writeback requests (sync_file_range, the *_flush_after settings) by all processes.",
       "16+ pg_stat_io writebacks; null before 16",
       ref=VIEW, published=BURSTY, prom=Prom("writeback_requests")),
    _m(BGWRITER_MAXWRITTEN_S, "stops/s", "rate", "writes",
       "Background writer rounds stopped because bgwriter_lru_maxpages was reached.",
       "pg_stat_bgwriter.maxwritten_clean",
       ref=VIEW, read=Read("bgwriter", "maxwritten_clean"), published=AS_WRITTEN, prom=Prom("bgwriter_maxwritten_stops")),
    _m(BUFFERS_ALLOC_S, "buffers/s", "rate", "writes",
       "Buffers allocated (read in or reused).", "pg_stat_bgwriter.buffers_alloc",
       ref=VIEW, read=Read("bgwriter", "buffers_alloc"), published=AS_WRITTEN, prom=Prom("buffers_allocated")),
    # --- kernel memory ---------------------------------------------------------------------
    _m(MEM_DIRTY_KB, "kB", "gauge", "memory", "Dirty page cache waiting to be written.", "/proc/meminfo Dirty",
       label="Dirty", ref=PROC, prom=gauge("mem_dirty_bytes")),
    _m(MEM_WRITEBACK_KB, "kB", "gauge", "memory", "Page cache being written back now.", "/proc/meminfo Writeback",
       label="Writeback", ref=PROC, prom=gauge("mem_writeback_bytes")),
    _m(MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "kB", "gauge", "memory",
       "Dirty level at which the kernel's flusher starts background writeback.",
       "/proc/vmstat nr_dirty_background_threshold x page size", label="bg",
       ref=PROC, prom=gauge("mem_dirty_background_threshold_bytes")),
    _m(MEM_DIRTY_THRESHOLD_KB, "kB", "gauge", "memory",
       "Dirty level at which writers are throttled hard.", "/proc/vmstat nr_dirty_threshold x page size",
       label="throttle", ref=PROC, prom=gauge("mem_dirty_threshold_bytes")),
    _m(MEM_AVAILABLE_KB, "kB", "gauge", "memory", "Memory available for new work.", "/proc/meminfo MemAvailable",
       label="available", ref=PROC, prom=gauge("mem_available_bytes")),
    _m(MEM_CACHED_KB, "kB", "gauge", "memory", "Page cache size.", "/proc/meminfo Cached", label="cached",
       ref=PROC, prom=gauge("mem_cached_bytes")),
    _m(IO_PRESSURE_SOME_PCT, "%", "rate", "memory",
       "Share of the tick during which at least one task stalled on I/O.", "/proc/pressure/io some total",
       ref=PROC, prom=Prom("io_pressure_some_stalled_seconds", help=_PSI.format("at least one task"))),
    _m(IO_PRESSURE_FULL_PCT, "%", "rate", "memory",
       "Share of the tick during which all non-idle tasks stalled on I/O.", "/proc/pressure/io full total",
       ref=PROC, prom=Prom("io_pressure_full_stalled_seconds", help=_PSI.format("all non-idle tasks"))),
    # --- latency ---------------------------------------------------------------------------
    _m(LATENCY_TPS, "1/s", "rate", "latency",
       "Transactions per second (the workload's own count when launched by pgio-tui: pgbench transactions, "
       "pgio statements; else the server's commits and rollbacks).",
       "pgbench log; otherwise pg_stat_database xact_commit+xact_rollback",
       ref=PGBENCH, prom=Prom("transactions")),
    _m(LATENCY_MEAN_MS, "ms", "gauge", "latency",
       "Mean transaction latency over the tick (a launched pgbench's transactions, pgio's statements); "
       "null without a launched workload (see statements.mean_ms).",
       _LAUNCHED, ref=PGBENCH, prom=gauge("latency_mean_seconds", note=_PER_TICK)),
    _m(LATENCY_STDDEV_MS, "ms", "gauge", "latency",
       "Standard deviation of transaction latency over the tick.", _LAUNCHED,
       ref=PGBENCH, prom=gauge("latency_stddev_seconds", note=_PER_TICK)),
    *(_m(LATENCY_P[p], "ms", "gauge", "latency", f"{'Median' if p == 50 else f'{p}th percentile'} latency over the "
         "tick.", _LAUNCHED,
         ref=PGBENCH, prom=gauge(f"latency_p{p}_seconds", note=_PER_TICK)) for p in LATENCY_PERCENTILES),
    _m(LATENCY_MAX_MS, "ms", "gauge", "latency", "Largest latency over the tick.", _LAUNCHED,
       ref=PGBENCH, prom=gauge("latency_max_seconds", note=_PER_TICK)),
    _m(LATENCY_TXNS, "count", "gauge", "latency",
       "Transactions (pgio: statements) the tick's latency figures cover; weights for averaging ticks.",
       "workload launched by pgio-tui: pgbench per-transaction log lines (a sample with --sampling-rate), "
       "pgio statements; null otherwise",
       ref=PGBENCH, prom=Prom("latency_sampled_transactions", help="Transactions (pgio: statements) the latency "
                              "figures cover (a sample with pgbench --sampling-rate).")),
    _m(LATENCY_FAILED, "count", "gauge", "latency",
       "Transactions that failed in the tick (serialization or deadlock failures, pgbench 15+).",
       "pgbench per-transaction log (`failed`, `serialization`, `deadlock`)",
       ref=PGBENCH, prom=Prom("transactions_failed")),
    *(_m(LATENCY_OVER[ms], "count", "gauge", "latency",
         f"Transactions (pgio: statements) of the tick slower than {ms} ms.",
         _LAUNCHED, ref=PGBENCH)  # Prometheus: the buckets of pgio_transaction_duration_seconds
      for ms in LATENCY_THRESHOLDS_MS),
    # --- statements (pg_stat_statements): statement execution time, never transaction latency ----
    _m(STATEMENTS_CALLS_S, "1/s", "rate", "latency",
       "Statements completed per second (top-level; utility statements and pgio-tui's own left out), over the "
       "window since the previous read of pg_stat_statements: every tick while that read is cheap, every few "
       "ticks on a server with thousands of entries (null in between: reads stay within the observer's budget).",
       _PGSS, ref=VIEW, prom=Prom("statements")),
    _m(STATEMENTS_MEAN_MS, "ms", "gauge", "latency",
       "Mean execution time of the statements completed in that window: a statement's time inside the server, "
       "not a transaction's latency (BEGIN/COMMIT/SET and other utility statements, and pgio-tui's own, "
       "are left out so microsecond statements do not pull it down).",
       _PGSS + "; delta total_exec_time / delta calls (total_time on old extension versions)",
       ref=VIEW, prom=gauge("statement_exec_mean_seconds")),
    _m(STATEMENTS_STDDEV_MS, "ms", "gauge", "latency",
       "Standard deviation of the execution time of the statements completed in that window.",
       _PGSS + "; from calls, mean and stddev (sum of squares)",
       ref=VIEW, prom=gauge("statement_exec_stddev_seconds")),
    *(_m(STATEMENTS_LOG_OVER[ms], "count", "gauge", "latency",
         f"Statements, server log: statements of any client that ran longer than {ms} ms, counted from the "
         f"`duration:` lines read at this tick (statement executions; parse/bind phases, auto_explain plans, "
         f"PL/pgSQL RAISE look-alikes and pgio-tui's own left out); null when log_min_duration_statement "
         f"is above {ms} ms (the log misses some).",
         "server log (logging_collector through pg_read_binary_file, or the file on the database host) with "
         "log_min_duration_statement >= 0; stderr, csvlog, jsonlog", label=f"log>{ms}",
         ref=LOG, prom=Prom("statements_slower_logged", help="Statements of any client slower than `threshold` "
                            "seconds, counted from the server log's duration: lines.",
                            labels=(("threshold", f"{ms / 1000:g}"),)))
      for ms in LATENCY_THRESHOLDS_MS),
    # --- database --------------------------------------------------------------------------
    _m(PGIO_READS_S, "blocks/s", "rate", "reads",
       "Blocks the pgio workload's statements read from the kernel (shared-buffer misses), per second.",
       "pgio-tui's pgio sessions: pg_stat_get_xact_blocks_fetched - _hit of their table and index, per slice",
       ref=VIEW, prom=Prom("workload_blocks_read")),
    _m(PGIO_HITS_S, "blocks/s", "rate", "reads",
       "Shared-buffer hits of the pgio workload's statements, per second.",
       "pgio-tui's pgio sessions: pg_stat_get_xact_blocks_hit of their table and index, per slice",
       ref=VIEW, prom=Prom("workload_blocks_hit")),
    _m(PGIO_TUPLES_S, "1/s", "rate", "reads",
       "Rows the pgio workload's statements fetched from their tables (its SELECTs' and UPDATEs' index and "
       "bitmap scans), per second: the shared_buffers x page cache article's tuples/s.",
       "pgio-tui's pgio sessions: pg_stat_get_xact_tuples_fetched of their table and index, per slice "
       "(pg_stat_all_tables.idx_tup_fetch)",
       ref=VIEW, prom=Prom("workload_tuples_fetched")),
    _m(DB_BLKS_READ_S, "blocks/s", "rate", "reads",
       "Blocks PostgreSQL read from the kernel (shared-buffer misses), all databases.", "pg_stat_database.blks_read",
       ref=VIEW, read=Read("db", "blks_read"), published=BURSTY, prom=Prom("db_blocks_read")),
    _m(DB_BLKS_HIT_S, "blocks/s", "rate", "reads", "Shared-buffer hits, all databases.", "pg_stat_database.blks_hit",
       ref=VIEW, read=Read("db", "blks_hit"), published=BURSTY, prom=Prom("db_blocks_hit")),
    _m(DB_XACT_S, "1/s", "rate", "database", "Commits plus rollbacks, all databases.", "pg_stat_database",
       ref=VIEW, read=Read("db", "xact"), published=BURSTY, prom=Prom("db_transactions")),
    _m(DB_TEMP_BYTES_S, "bytes/s", "rate", "database", "Temporary file bytes written.", "pg_stat_database.temp_bytes",
       ref=VIEW, read=Read("db", "temp_bytes"), published=BURSTY, prom=Prom("db_temp_bytes")),
    _m(DB_BLK_READ_TIME_MS_S, "ms/s", "rate", "reads",
       "Time backends spent reading blocks (needs track_io_timing).", "pg_stat_database.blk_read_time",
       ref=VIEW, read=Read("db", "blk_read_time"), published=BURSTY, prom=Prom("db_block_read_seconds")),
    _m(DB_BLK_WRITE_TIME_MS_S, "ms/s", "rate", "database",
       "Time backends spent writing blocks (needs track_io_timing).", "pg_stat_database.blk_write_time",
       ref=VIEW, read=Read("db", "blk_write_time"), published=BURSTY, prom=Prom("db_block_write_seconds")),
    _m(DB_BACKENDS, "count", "gauge", "database", "Connected backends.", "pg_stat_database.numbackends",
       ref=VIEW, read=Read("db", "backends"), prom=gauge("db_backends")),
    _m(WAL_BYTES_S, "bytes/s", "rate", "wal", "WAL generated.",
       "pg_wal_lsn_diff of pg_current_wal_insert_lsn() between ticks (all versions)",
       ref=VIEW, prom=Prom("wal_bytes")),  # the insert position: live, never spread (sampler/postgres_tick.py)
    _m(WAL_RECORDS_S, "1/s", "rate", "wal", "WAL records.", "14+ pg_stat_wal.wal_records; null on 13",
       ref=VIEW, read=Read("wal", "wal_records"), published=BURSTY, prom=Prom("wal_records")),
    _m(WAL_FPI_S, "1/s", "rate", "wal", "WAL full-page images.", "14+ pg_stat_wal.wal_fpi; null on 13",
       ref=VIEW, read=Read("wal", "wal_fpi"), published=BURSTY, prom=Prom("wal_fpi")),
    _m(WAL_FPI_BYTES_S, "bytes/s", "rate", "wal", "WAL bytes of full-page images (part of the WAL written).",
       "pg_stat_wal.wal_fpi_bytes where the server has it (19+, found by catalog introspection); null before",
       label="FPI bytes", ref=VIEW, read=Read("wal", "wal_fpi_bytes"), published=BURSTY, prom=Prom("wal_fpi_bytes")),
    _m(WAL_BUFFERS_FULL_S, "1/s", "rate", "wal", "WAL writes forced because wal_buffers was full.",
       "14+ pg_stat_wal.wal_buffers_full; null on 13",
       ref=VIEW, read=Read("wal", "wal_buffers_full"), published=BURSTY, prom=Prom("wal_buffers_full")),
    _m(WAL_WRITES_S, "1/s", "rate", "wal",
       "WAL write() calls (WAL buffers written out to the kernel), by every process.",
       f"14-17 pg_stat_wal.wal_write; 18 pg_stat_io.writes {_WAL_IO}; null on 13",
       ref=VIEW, read=Read("wal", "wal_write"), published=BURSTY, prom=Prom("wal_writes")),
    _m(WAL_SYNCS_S, "1/s", "rate", "wal",
       "WAL flushes to disk (fsync/fdatasync, or the write itself with open_sync/open_datasync).",
       f"14-17 pg_stat_wal.wal_sync; 18 pg_stat_io.fsyncs {_WAL_IO}; null on 13",
       ref=VIEW, read=Read("wal", "wal_sync"), published=BURSTY, prom=Prom("wal_syncs")),
    _m(WAL_WRITE_TIME_MS_S, "ms/s", "rate", "wal",
       "Time spent in WAL writes (needs track_wal_io_timing; 0 without it).",
       f"14-17 pg_stat_wal.wal_write_time; 18 pg_stat_io.write_time {_WAL_IO}; null on 13",
       ref=VIEW, read=Read("wal", "wal_write_time"), published=BURSTY, prom=Prom("wal_write_seconds")),
    _m(WAL_SYNC_TIME_MS_S, "ms/s", "rate", "wal",
       "Time spent flushing WAL to disk (needs track_wal_io_timing; 0 without it).",
       f"14-17 pg_stat_wal.wal_sync_time; 18 pg_stat_io.fsync_time {_WAL_IO}; null on 13",
       ref=VIEW, read=Read("wal", "wal_sync_time"), published=BURSTY, prom=Prom("wal_sync_seconds")),
    _m(BUFFERS_USED, "buffers", "gauge", "reads",
       "Shared buffers holding a page (the rest are free); read every few seconds, null in between.",
       f"16+ pg_buffercache_summary().buffers_used, when the extension is installed; {_BUFCACHE}",
       ref=VIEW, prom=gauge("shared_buffers_used_buffers")),
    _m(BUFFERS_DIRTY, "buffers", "gauge", "reads",
       "Shared buffers modified and not yet written; read every few seconds, null in between.",
       f"16+ pg_buffercache_summary().buffers_dirty, when the extension is installed; {_BUFCACHE}",
       ref=VIEW, prom=gauge("shared_buffers_dirty_buffers")),
    _m(BUFFERS_EVICTIONS_S, "buffers/s", "rate", "reads",
       "Shared buffers evicted to make room for another block, by every process: shared_buffers pressure.",
       "16+ pg_stat_io.evictions (object relation, every backend type and context); null before 16",
       ref=VIEW, read=Read("iosum", "evictions"), published=BURSTY, prom=Prom("buffers_evicted")),
    # --- waits -----------------------------------------------------------------------------
    _m(SESSIONS_ACTIVE, "count", "gauge", "waits", "Client backends in state active.", "pg_stat_activity",
       ref=VIEW, prom=gauge("sessions_active")),
    _m(SESSIONS_IO_WAIT, "count", "gauge", "waits", "Backends waiting on an IO wait event.", "pg_stat_activity",
       label="IO wait", ref=VIEW, prom=gauge("sessions_io_wait")),
    _m(SESSIONS_LOCK_WAIT, "count", "gauge", "waits", "Backends waiting on a Lock or LWLock.", "pg_stat_activity",
       label="lock wait", ref=VIEW, prom=gauge("sessions_lock_wait")),
    _m(AIO_IN_FLIGHT, "count", "gauge", "waits",
       "Asynchronous I/O handles in use (defined, staged, submitted or completed, not yet reclaimed); the "
       "Backends view (B) splits them by state and operation.", "18+ pg_aios (needs pg_read_all_stats)",
       label="AIO in flight", ref=VIEW, prom=gauge("aio_in_flight")),
    # --- observer --------------------------------------------------------------------------
    _m(OBSERVER_COLLECT_MS, "ms", "gauge", "observer", "Wall time the tick's collection took.", "sampler clock",
       ref=CLOCK, prom=gauge("observer_collect_seconds")),
    _m(OBSERVER_CPU_MS, "ms", "gauge", "observer", "Client CPU time (user+system) used by pgio-tui since the last tick.",
       "os.times() of this process",
       ref=PROC, prom=Prom("observer_cpu_seconds", help="Client CPU time (user+system) used by pgio-tui.")),
    _m(OBSERVER_SERVER_MS, "ms", "gauge", "observer", "Server time spent executing the tick's query.",
       "clock_timestamp() - statement_timestamp() at the end of the query",
       ref=CLOCK, prom=gauge("observer_server_seconds")),
    _m(OBSERVER_LATE_MS, "ms", "gauge", "observer", "How late the tick started against its schedule.", "sampler clock",
       ref=CLOCK, prom=gauge("observer_late_seconds")),
    _m(OBSERVER_STATEMENTS_MS, "ms", "gauge", "observer",
       "Server time the tick's pg_stat_statements part took (0 on ticks that do not read it).",
       "clock_timestamp() before and after that part of the tick's query",
       ref=CLOCK, prom=gauge("observer_statements_seconds")),
    # --- statements ------------------------------------------------------------------------
    _m(STATEMENTS_WINDOW_S, "s", "gauge", "statements",
       "Seconds the tick's top-statement figures cover (since the previous read of every entry); set only on "
       "ticks that read them: every 10 s at least, less often when pg_stat_statements is large.",
       "server clock at the two reads of pg_stat_statements(false)",
       ref=CLOCK, prom=gauge("statements_window_seconds")),
)

_PGSS_ROWS = "pg_stat_statements(false) delta per queryid over the window (summed over users, databases, top-level)"
STATEMENT_METRICS: tuple[Metric, ...] = (
    _m("statement.<queryid>.calls_s", "1/s", "rate", "statements", "Executions completed.", f"calls; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.time_ms_s", "ms/s", "rate", "statements",
       "Execution time per second (1000 = one backend busy all the time with it).",
       f"total_exec_time (total_time before 1.8); {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.mean_ms", "ms", "gauge", "statements",
       "Mean execution time over the window (statement latency, not a transaction's).",
       "delta total_exec_time / delta calls", ref=VIEW),
    _m("statement.<queryid>.stddev_ms", "ms", "gauge", "statements",
       "Standard deviation of the execution time over the window.",
       "from the delta of calls x (stddev_exec_time^2 + mean_exec_time^2) (sum of squares)", ref=VIEW),
    _m("statement.<queryid>.rows_s", "1/s", "rate", "statements", "Rows returned or affected.", f"rows; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.hit_s", "blocks/s", "rate", "statements", "Shared-buffer hits.",
       f"shared_blks_hit; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.read_s", "blocks/s", "rate", "statements",
       "Blocks read from the kernel (shared-buffer misses).", f"shared_blks_read; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.dirtied_s", "blocks/s", "rate", "statements", "Shared buffers dirtied.",
       f"shared_blks_dirtied; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.written_s", "blocks/s", "rate", "statements",
       "Shared buffers the statement's backend wrote itself (evicting dirty buffers).",
       f"shared_blks_written; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.read_time_ms_s", "ms/s", "rate", "statements", "Time reading blocks (track_io_timing).",
       f"17+ shared_blk_read_time, 13-16 blk_read_time; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.write_time_ms_s", "ms/s", "rate", "statements",
       "Time writing blocks (track_io_timing).", f"17+ shared_blk_write_time, 13-16 blk_write_time; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.temp_written_s", "blocks/s", "rate", "statements", "Temporary file blocks written.",
       f"temp_blks_written; {_PGSS_ROWS}", ref=VIEW),
    _m("statement.<queryid>.wal_bytes_s", "bytes/s", "rate", "statements", "WAL generated.",
       f"wal_bytes (13+, extension 1.8+); {_PGSS_ROWS}", ref=VIEW),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in STATEMENT_METRICS) == STATEMENT_FIELDS
STATEMENT_UNITS: dict[str, str] = {m.name.rsplit(".", 1)[1]: m.unit for m in STATEMENT_METRICS}

_PROC_IO = ("/proc/<pid>/io delta over the tick (on the database host only; root or the server's OS user "
            "may read it)")
_BACKEND_IO = "18+ pg_stat_get_backend_io(pid) delta over the tick, summed over objects and contexts"
BACKEND_METRICS: tuple[Metric, ...] = (
    _m("backend.<pid>.read_bytes_s", "bytes/s", "rate", "backends",
       "Bytes the process made the kernel read from storage (page-cache hits are not counted).",
       f"read_bytes; {_PROC_IO}", ref=PROC),
    _m("backend.<pid>.write_bytes_s", "bytes/s", "rate", "backends",
       "Page-cache bytes the process dirtied (the kernel counts a page when it is dirtied, again each "
       "time it is re-dirtied after writeback: a WAL page rewritten by every commit counts whole each "
       "time), not bytes that reached storage; PostgreSQL's own writes are pg_write_bytes_s (18).",
       f"write_bytes; {_PROC_IO}", label="dirtied", ref=PROC),
    _m("backend.<pid>.pg_read_bytes_s", "bytes/s", "rate", "backends",
       "Bytes PostgreSQL read for this backend (from the kernel, page cache or disk), as published "
       "(a backend flushes its statistics at most about once a second).", f"read_bytes; {_BACKEND_IO}",
       ref=VIEW),
    _m("backend.<pid>.pg_write_bytes_s", "bytes/s", "rate", "backends",
       "Bytes PostgreSQL wrote for this backend (shared buffers it evicted, WAL, temp files: "
       "writes × block size), as published: the buffer-level figure beside write_bytes_s.",
       f"write_bytes; {_BACKEND_IO}", ref=VIEW),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in BACKEND_METRICS) == BACKEND_RATES


_IO = "16+ pg_stat_io, object relation, summed over contexts per backend type; null before 16"
SOURCE_METRICS: tuple[Metric, ...] = (  # Frame.sources, the recording's `io` table; Prometheus: labelled backend_type
    # Published BURSTY but by STEADY_PUBLISHERS (their rows are as written).
    _m("io.<backend_type>.reads", "blocks/s", "rate", "io", "Blocks read into shared buffers.", f"reads; {_IO}",
       ref=VIEW, published=BURSTY, prom=Prom("io_reads", help="Blocks read into shared buffers (pg_stat_io, "
                                             "relation), by backend type.")),
    _m("io.<backend_type>.writes", "buffers/s", "rate", "io", "Shared buffers written.", f"writes; {_IO}",
       ref=VIEW, published=BURSTY),
    _m("io.<backend_type>.extends", "blocks/s", "rate", "io", "Relation extensions (new blocks).", f"extends; {_IO}",
       ref=VIEW, published=BURSTY),
    _m("io.<backend_type>.fsyncs", "fsyncs/s", "rate", "io", "fsync calls.", f"fsyncs; {_IO}",
       ref=VIEW, published=BURSTY),
    _m("io.<backend_type>.writebacks", "requests/s", "rate", "io", "Writeback requests.", f"writebacks; {_IO}",
       ref=VIEW, published=BURSTY),
    _m("io.<backend_type>.hits", "blocks/s", "rate", "io", "Shared-buffer hits.", f"hits; {_IO}",
       ref=VIEW, published=BURSTY, prom=Prom("io_hits", help="Shared-buffer hits (pg_stat_io, relation), by "
                                             "backend type.")),
    _m("io.<backend_type>.evictions", "buffers/s", "rate", "io", "Buffers evicted to make room for another block.",
       f"evictions; {_IO}", ref=VIEW, published=BURSTY,
       prom=Prom("io_evictions", help="Buffers evicted to make room (pg_stat_io, relation), by backend type.")),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in SOURCE_METRICS) == SOURCE_FIELDS

_ROW = ("16+ pg_stat_io, one row per backend type, object and context (rows with any I/O); null before 16")
_TIMED = ("; null while track_io_timing is off (track_wal_io_timing for object wal): unknown, not 0 "
          "(the view shows 0). Mean ms per {0} = this / {0}s (ratios.per_op_ms)")


def io_row(field: str) -> str:
    """The catalog name of a pg_stat_io row's field (one of frame.IO_FIELDS): io_row("read_ms")."""
    return f"io.<backend_type>.<object>.<context>.{field}"


def _io(field: str, unit: str, help: str, source: str) -> Metric:
    family = (f"stat_io_{field[:-3]}_seconds" if field.endswith("_ms") else
              f"stat_io_{field[:-3]}_bytes" if field.endswith("_kb") else f"stat_io_{field}")
    return _m(io_row(field), unit, "rate", "io", help, source, ref=VIEW,
              published=BURSTY, prom=Prom(family, help=f"{help[:-1]} (pg_stat_io), by backend type, object and context."))


IO_METRICS: tuple[Metric, ...] = (  # Frame.io, the recording's `io_rows` table; Prometheus: labelled
    # backend_type, object and context
    _io("reads", "1/s", "Read operations (18: one may cover several blocks, see read_kb).", f"reads; {_ROW}"),
    _io("writes", "buffers/s", "Write operations.", f"writes; {_ROW}"),
    _io("writebacks", "requests/s", "Writeback requests (asking the kernel to write dirty pages out).",
        f"writebacks; {_ROW}"),
    _io("extends", "1/s", "Relation extend operations (one may add several blocks, see extend_kb).",
        f"extends; {_ROW}"),
    _io("fsyncs", "fsyncs/s", "fsync calls.", f"fsyncs; {_ROW}"),
    _io("hits", "blocks/s", "Shared-buffer (or local-buffer) hits.", f"hits; {_ROW}"),
    _io("evictions", "buffers/s", "Buffers evicted to make room for another block (shared_buffers pressure).",
        f"evictions; {_ROW}"),
    _io("reuses", "buffers/s", "Ring buffers reused in place (bulkread, bulkwrite, vacuum contexts).",
        f"reuses; {_ROW}"),
    *(_io(f"{op}_kb", "kB/s", f"kB {done}.", f"18+ {op}_bytes; 16-17 {op}s x op_bytes (one block each); {_ROW}")
      for op, done in (("read", "read"), ("write", "written"), ("extend", "added by extends"))),
    *(_io(f"{op}_ms", "ms/s", f"Time spent in {op}s.", f"{op}_time; {_ROW}{_TIMED.format(op)}") for op in TIMED_OPS),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in IO_METRICS) == IO_FIELDS
IO_UNITS: dict[str, Unit] = {m.name.rsplit(".", 1)[1]: m.unit for m in IO_METRICS}



def _disk(field, unit, kind, help, source, prom: Prom) -> Metric:
    return _m(f"disk.<device>.{field}", unit, kind, "devices", help, source, ref=IOSTAT, prom=prom)


DISK_METRICS: tuple[Metric, ...] = (  # Prometheus: labelled device and role
    _disk("r_s", "1/s", "rate", "Reads completed per second (iostat r/s).", "/proc/diskstats field 1",
          Prom("disk_reads_completed", help="Reads completed (/proc/diskstats).")),
    _disk("w_s", "1/s", "rate", "Writes completed per second (iostat w/s).", "/proc/diskstats field 5",
          Prom("disk_writes_completed", help="Writes completed (/proc/diskstats).")),
    _disk("rkb_s", "kB/s", "rate", "kB read per second.", "/proc/diskstats field 3 / 2",
          Prom("disk_read_bytes", help="Bytes read (/proc/diskstats).")),
    _disk("wkb_s", "kB/s", "rate", "kB written per second.", "/proc/diskstats field 7 / 2",
          Prom("disk_written_bytes", help="Bytes written (/proc/diskstats).")),
    _disk("r_await_ms", "ms", "gauge", "Mean time a read took, queue included.", "delta field 4 / delta field 1",
          gauge("disk_read_await_seconds", "Mean time a read took over the tick, queue included.")),
    _disk("w_await_ms", "ms", "gauge", "Mean time a write took, queue included.", "delta field 8 / delta field 5",
          gauge("disk_write_await_seconds", "Mean time a write took over the tick, queue included.")),
    _disk("aqu_sz", "requests", "gauge", "Average queue size.", "delta field 11 / delta ms",
          gauge("disk_queue_size", "Average queue size over the tick.")),
    _disk("util_pct", "%", "gauge", "Share of time the device had I/O in flight (not saturation on SSD/NVMe).",
          "delta field 10 / delta ms",
          gauge("disk_utilization_ratio", "Share of the tick the device had I/O in flight (not saturation on SSD/NVMe).")),
    _disk("f_s", "1/s", "rate",
          "Flush requests completed per second (iostat f/s): fsync/fdatasync reaching the device's cache.",
          "/proc/diskstats field 16 (kernel 5.5+; whole disks only, 0 on partitions and older kernels)",
          Prom("disk_flushes_completed", help="Flush requests completed (/proc/diskstats).")),
    _disk("f_await_ms", "ms", "gauge", "Mean time a flush request took (iostat f_await).",
          "delta field 17 / delta field 16",
          gauge("disk_flush_await_seconds", "Mean time a flush request took over the tick.")),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in DISK_METRICS) == DEVICE_FIELDS == (
    DISK_R_S, DISK_W_S, DISK_RKB_S, DISK_WKB_S, DISK_R_AWAIT_MS, DISK_W_AWAIT_MS, DISK_AQU_SZ, DISK_UTIL_PCT,
    DISK_F_S, DISK_F_AWAIT_MS)

BY_NAME: dict[str, Metric] = {m.name: m for m in CATALOG}


def lookup(name: str) -> Metric | None:
    """The catalog entry of a metric, disk metrics included (`disk.sda.r_s` -> `disk.<device>.r_s`)."""
    if name in BY_NAME:
        return BY_NAME[name]
    if name.startswith(DISK_PREFIX):
        fld = name.rsplit(".", 1)[-1]
        return next((m for m in DISK_METRICS if m.name.endswith("." + fld)), None)
    return None


def counter_rates() -> tuple[tuple[str, str, str], ...]:
    """(metric, section, column) of every cumulative counter read from a tick statement column."""
    return tuple((m.name, m.read.section, m.read.column) for m in CATALOG if m.read and m.kind == "rate")


def column_gauges() -> tuple[tuple[str, str, str], ...]:
    """(metric, section, column) of every level read as it is from a tick statement column."""
    return tuple((m.name, m.read.section, m.read.column) for m in CATALOG if m.read and m.kind != "rate")


def published_as_written() -> frozenset[str]:
    """The counters the sampler shows as sampled (never spread): the catalog's AS_WRITTEN ones and
    the pg_stat_io rows of STEADY_PUBLISHERS (`checkpointer.writes`, ...)."""
    return frozenset({m.name for m in CATALOG if m.published == AS_WRITTEN}
                     | {f"{btype}.{fld}" for btype in STEADY_PUBLISHERS for fld in SOURCE_FIELDS})
