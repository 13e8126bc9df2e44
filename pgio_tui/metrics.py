"""The metric catalog: every public metric name with its unit, kind, pane, meaning and source.

This is the data contract: export columns, recording columns and docs/metrics.md all come from
here (`python -m pgio_tui.metrics` writes the docs page; a test keeps it in step).
"""

from __future__ import annotations

from dataclasses import dataclass

from pgio_tui.frame import DEVICE_FIELDS


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    unit: str
    kind: str  # "gauge" (a level now), "rate" (per second over the tick), "state" (a label or 0/1)
    pane: str  # checkpoint, writes, memory, devices, latency, waits, database, observer
    help: str
    source: str  # where it comes from, per PostgreSQL version where that differs


# latency.over_<N>ms: per-tick counts of latencies above these (pgio_tui.workloads.latency counts them).
LATENCY_THRESHOLDS_MS = (100, 200, 300, 400, 500)
_LAUNCHED = "launched workload only: pgbench per-transaction log, pgio statement times"
_PGSS = ("pg_stat_statements deltas of plannable top-level statements (14+: toplevel), utility statements "
         "and those marked /* pgio-tui */ excluded")


def _m(name, unit, kind, pane, help, source):
    return Metric(name, unit, kind, pane, help, source)


CATALOG: tuple[Metric, ...] = (
    # --- checkpoint -------------------------------------------------------------------------
    _m("checkpoint.active", "0/1", "state", "checkpoint",
       "1 while a checkpoint is running.",
       "checkpointer wait event (14+: CheckpointWriteDelay/DataFile*; 13: not CheckpointerMain), "
       "started-vs-finished counters (18: num_done), log start line when readable"),
    _m("checkpoint.kind", "text", "state", "checkpoint",
       "Why the running (or last) checkpoint started: time, wal, requested, immediate, shutdown, end-of-recovery.",
       "server log `checkpoint starting:` flags when readable; else timed/requested counters"),
    _m("checkpoint.progress", "0-1", "gauge", "checkpoint",
       "Estimated fraction of the running checkpoint's buffer writes done.",
       "buffers written so far / dirty buffers at start (16+: pg_buffercache_summary(); else the schedule "
       "formula max(elapsed/(timeout*cct), wal/(segments*cct)))"),
    _m("checkpoint.buffers_written", "buffers", "gauge", "checkpoint",
       "Buffers written by the running checkpoint so far.",
       "13-16 pg_stat_bgwriter.buffers_checkpoint, 17+ pg_stat_checkpointer.buffers_written, minus the value at start"),
    _m("checkpoint.buffers_estimate", "buffers", "gauge", "checkpoint",
       "Estimated buffers the running checkpoint will write (dirty buffers when it started).",
       "16+ pg_buffercache_summary().buffers_dirty sampled at start; null when unknown"),
    _m("checkpoint.elapsed_s", "s", "gauge", "checkpoint",
       "Seconds since the running checkpoint started.", "sampler clock at detected start"),
    _m("checkpoint.time_progress", "0-1", "gauge", "checkpoint",
       "Time since the last checkpoint started, as a fraction of checkpoint_timeout (1 = timed checkpoint due).",
       "pg_control_checkpoint().checkpoint_time, checkpoint_timeout"),
    _m("checkpoint.wal_progress", "0-1", "gauge", "checkpoint",
       "WAL since the last checkpoint's redo point as a fraction of the distance that triggers a WAL checkpoint.",
       "pg_wal_lsn_diff(insert_lsn, redo_lsn) / (floor(max_wal_size/(1+cct)) segments)"),
    _m("checkpoint.timeout_s", "s", "gauge", "checkpoint",
       "checkpoint_timeout in force at this tick (a reload mid-session shows here).",
       "pg_settings, re-read when the settings fingerprint changes"),
    _m("checkpoint.completion_target", "0-1", "gauge", "checkpoint",
       "checkpoint_completion_target in force at this tick.",
       "pg_settings, re-read when the settings fingerprint changes"),
    # --- buffers written by source ---------------------------------------------------------
    _m("writes.checkpointer", "buffers/s", "rate", "writes",
       "Shared buffers written by the checkpointer.",
       "16+ pg_stat_io writes (checkpointer, relation); 13-15 pg_stat_bgwriter.buffers_checkpoint"),
    _m("writes.bgwriter", "buffers/s", "rate", "writes",
       "Shared buffers written by the background writer.",
       "16+ pg_stat_io writes (background writer); 13-15 pg_stat_bgwriter.buffers_clean"),
    _m("writes.backend", "buffers/s", "rate", "writes",
       "Buffers written by client backends (evicting dirty buffers themselves).",
       "16+ pg_stat_io writes (client backend, relation); 13-15 pg_stat_bgwriter.buffers_backend "
       "(which also counts extensions and writes by autovacuum and other processes)"),
    _m("writes.autovacuum", "buffers/s", "rate", "writes",
       "Buffers written by autovacuum workers.", "16+ pg_stat_io writes (autovacuum worker); null before 16"),
    _m("writes.other", "buffers/s", "rate", "writes",
       "Buffers written by every other process type (background workers, walsender, startup, ...).",
       "16+ pg_stat_io writes of the remaining backend types; null before 16"),
    _m("fsyncs.backend", "fsyncs/s", "rate", "writes",
       "fsync calls made by backends themselves (the checkpointer's request queue was full).",
       "16+ pg_stat_io fsyncs (client backend); 13-15 pg_stat_bgwriter.buffers_backend_fsync"),
    _m("fsyncs.checkpointer", "fsyncs/s", "rate", "writes",
       "fsync calls made by the checkpointer.", "16+ pg_stat_io fsyncs (checkpointer); null before 16"),
    _m("extends.backend", "blocks/s", "rate", "writes",
       "Relation extensions (new blocks) by client backends.", "16+ pg_stat_io extends (client backend); null before 16"),
    _m("writebacks.total", "requests/s", "rate", "writes",
       "Writeback requests (sync_file_range, the *_flush_after settings) by all processes.",
       "16+ pg_stat_io writebacks; null before 16"),
    _m("bgwriter.maxwritten_s", "stops/s", "rate", "writes",
       "Background writer rounds stopped because bgwriter_lru_maxpages was reached.",
       "pg_stat_bgwriter.maxwritten_clean"),
    _m("buffers.alloc_s", "buffers/s", "rate", "writes",
       "Buffers allocated (read in or reused).", "pg_stat_bgwriter.buffers_alloc"),
    # --- kernel memory ---------------------------------------------------------------------
    _m("mem.dirty_kb", "kB", "gauge", "memory", "Dirty page cache waiting to be written.", "/proc/meminfo Dirty"),
    _m("mem.writeback_kb", "kB", "gauge", "memory", "Page cache being written back now.", "/proc/meminfo Writeback"),
    _m("mem.dirty_background_threshold_kb", "kB", "gauge", "memory",
       "Dirty level at which the kernel's flusher starts background writeback.",
       "/proc/vmstat nr_dirty_background_threshold x page size"),
    _m("mem.dirty_threshold_kb", "kB", "gauge", "memory",
       "Dirty level at which writers are throttled hard.", "/proc/vmstat nr_dirty_threshold x page size"),
    _m("mem.available_kb", "kB", "gauge", "memory", "Memory available for new work.", "/proc/meminfo MemAvailable"),
    _m("mem.cached_kb", "kB", "gauge", "memory", "Page cache size.", "/proc/meminfo Cached"),
    _m("io.pressure_some_pct", "%", "rate", "memory",
       "Share of the tick during which at least one task stalled on I/O.", "/proc/pressure/io some total"),
    _m("io.pressure_full_pct", "%", "rate", "memory",
       "Share of the tick during which all non-idle tasks stalled on I/O.", "/proc/pressure/io full total"),
    # --- latency ---------------------------------------------------------------------------
    _m("latency.tps", "1/s", "rate", "latency",
       "Transactions per second (the workload's own count when launched by pgio-tui: pgbench transactions, "
       "pgio statements; else the server's commits and rollbacks).",
       "pgbench log; otherwise pg_stat_database xact_commit+xact_rollback"),
    _m("latency.mean_ms", "ms", "gauge", "latency",
       "Mean transaction latency over the tick (a launched pgbench's transactions, pgio's statements); "
       "null without a launched workload (see statements.mean_ms).",
       _LAUNCHED),
    _m("latency.stddev_ms", "ms", "gauge", "latency",
       "Standard deviation of transaction latency over the tick.", _LAUNCHED),
    _m("latency.p50_ms", "ms", "gauge", "latency", "Median latency over the tick.", _LAUNCHED),
    _m("latency.p95_ms", "ms", "gauge", "latency", "95th percentile latency over the tick.", _LAUNCHED),
    _m("latency.p99_ms", "ms", "gauge", "latency", "99th percentile latency over the tick.", _LAUNCHED),
    _m("latency.max_ms", "ms", "gauge", "latency", "Largest latency over the tick.", _LAUNCHED),
    _m("latency.txns", "count", "gauge", "latency",
       "Transactions (pgio: statements) the tick's latency figures cover; weights for averaging ticks.",
       "workload launched by pgio-tui: pgbench per-transaction log lines (a sample with --sampling-rate), "
       "pgio statements; null otherwise"),
    _m("latency.failed", "count", "gauge", "latency",
       "Transactions that failed in the tick (serialization or deadlock failures, pgbench 15+).",
       "pgbench per-transaction log (`failed`, `serialization`, `deadlock`)"),
    *(_m(f"latency.over_{ms}ms", "count", "gauge", "latency",
         f"Transactions (pgio: statements) of the tick slower than {ms} ms.",
         _LAUNCHED) for ms in LATENCY_THRESHOLDS_MS),
    # --- statements (pg_stat_statements): statement execution time, never transaction latency ----
    _m("statements.calls_s", "1/s", "rate", "latency",
       "Statements completed per second (top-level; utility statements and pgio-tui's own left out).",
       _PGSS),
    _m("statements.mean_ms", "ms", "gauge", "latency",
       "Mean execution time of the statements completed in the tick: a statement's time inside the server, "
       "not a transaction's latency (BEGIN/COMMIT/SET and other utility statements, and pgio-tui's own, "
       "are left out so microsecond statements do not pull it down).",
       _PGSS + "; delta total_exec_time / delta calls (total_time on old extension versions)"),
    _m("statements.stddev_ms", "ms", "gauge", "latency",
       "Standard deviation of the execution time of the statements completed in the tick.",
       _PGSS + "; from calls, mean and stddev (sum of squares)"),
    # --- database --------------------------------------------------------------------------
    _m("pgio.reads_s", "blocks/s", "rate", "database",
       "Blocks the pgio workload's statements read from the kernel (shared-buffer misses), per second.",
       "pgio-tui's pgio sessions: pg_stat_get_xact_blocks_fetched - _hit of their table and index, per slice"),
    _m("pgio.hits_s", "blocks/s", "rate", "database",
       "Shared-buffer hits of the pgio workload's statements, per second.",
       "pgio-tui's pgio sessions: pg_stat_get_xact_blocks_hit of their table and index, per slice"),
    _m("db.blks_read_s", "blocks/s", "rate", "database",
       "Blocks PostgreSQL read from the kernel (shared-buffer misses), all databases.", "pg_stat_database.blks_read"),
    _m("db.blks_hit_s", "blocks/s", "rate", "database", "Shared-buffer hits, all databases.", "pg_stat_database.blks_hit"),
    _m("db.xact_s", "1/s", "rate", "database", "Commits plus rollbacks, all databases.", "pg_stat_database"),
    _m("db.temp_bytes_s", "bytes/s", "rate", "database", "Temporary file bytes written.", "pg_stat_database.temp_bytes"),
    _m("db.blk_read_time_ms_s", "ms/s", "rate", "database",
       "Time backends spent reading blocks (needs track_io_timing).", "pg_stat_database.blk_read_time"),
    _m("db.blk_write_time_ms_s", "ms/s", "rate", "database",
       "Time backends spent writing blocks (needs track_io_timing).", "pg_stat_database.blk_write_time"),
    _m("db.backends", "count", "gauge", "database", "Connected backends.", "pg_stat_database.numbackends"),
    _m("wal.bytes_s", "bytes/s", "rate", "database", "WAL generated.",
       "pg_wal_lsn_diff of pg_current_wal_insert_lsn() between ticks (all versions)"),
    _m("wal.records_s", "1/s", "rate", "database", "WAL records.", "14+ pg_stat_wal.wal_records; null on 13"),
    _m("wal.fpi_s", "1/s", "rate", "database", "WAL full-page images.", "14+ pg_stat_wal.wal_fpi; null on 13"),
    _m("wal.buffers_full_s", "1/s", "rate", "database", "WAL writes forced because wal_buffers was full.",
       "14+ pg_stat_wal.wal_buffers_full"),
    # --- waits -----------------------------------------------------------------------------
    _m("sessions.active", "count", "gauge", "waits", "Client backends in state active.", "pg_stat_activity"),
    _m("sessions.io_wait", "count", "gauge", "waits", "Backends waiting on an IO wait event.", "pg_stat_activity"),
    _m("sessions.lock_wait", "count", "gauge", "waits", "Backends waiting on a Lock or LWLock.", "pg_stat_activity"),
    # --- observer --------------------------------------------------------------------------
    _m("observer.collect_ms", "ms", "gauge", "observer", "Wall time the tick's collection took.", "sampler clock"),
    _m("observer.cpu_ms", "ms", "gauge", "observer", "Client CPU time (user+system) used by pgio-tui since the last tick.",
       "os.times() of this process"),
    _m("observer.server_ms", "ms", "gauge", "observer", "Server time spent executing the tick's query.",
       "clock_timestamp() - statement_timestamp() at the end of the query"),
    _m("observer.late_ms", "ms", "gauge", "observer", "How late the tick started against its schedule.", "sampler clock"),
)

DISK_METRICS: tuple[Metric, ...] = (
    _m("disk.<device>.r_s", "1/s", "rate", "devices", "Reads completed per second (iostat r/s).", "/proc/diskstats field 1"),
    _m("disk.<device>.w_s", "1/s", "rate", "devices", "Writes completed per second (iostat w/s).", "/proc/diskstats field 5"),
    _m("disk.<device>.rkb_s", "kB/s", "rate", "devices", "kB read per second.", "/proc/diskstats field 3 / 2"),
    _m("disk.<device>.wkb_s", "kB/s", "rate", "devices", "kB written per second.", "/proc/diskstats field 7 / 2"),
    _m("disk.<device>.r_await_ms", "ms", "gauge", "devices", "Mean time a read took, queue included.",
       "delta field 4 / delta field 1"),
    _m("disk.<device>.w_await_ms", "ms", "gauge", "devices", "Mean time a write took, queue included.",
       "delta field 8 / delta field 5"),
    _m("disk.<device>.aqu_sz", "requests", "gauge", "devices", "Average queue size.", "delta field 11 / delta ms"),
    _m("disk.<device>.util_pct", "%", "gauge", "devices",
       "Share of time the device had I/O in flight (not saturation on SSD/NVMe).", "delta field 10 / delta ms"),
)
assert tuple(m.name.rsplit(".", 1)[1] for m in DISK_METRICS) == DEVICE_FIELDS

BY_NAME: dict[str, Metric] = {m.name: m for m in CATALOG}


def lookup(name: str) -> Metric | None:
    """The catalog entry of a metric, disk metrics included (`disk.sda.r_s` -> `disk.<device>.r_s`)."""
    if name in BY_NAME:
        return BY_NAME[name]
    if name.startswith("disk."):
        fld = name.rsplit(".", 1)[-1]
        return next((m for m in DISK_METRICS if m.name.endswith("." + fld)), None)
    return None


def markdown() -> str:
    """docs/metrics.md, generated so the docs cannot drift from the code."""
    lines = [
        "# Metrics reference",
        "",
        "Generated by `python -m pgio_tui.metrics` from `pgio_tui/metrics.py`; do not edit by hand.",
        "",
        "Names are `group.name[.qualifier]`, the same in exports, recordings and the TUI. *rate* metrics",
        "are per second over the tick (counter delta / the tick's measured duration); *gauge* metrics",
        "are levels at the tick; a null means the source does not exist on this server or the value",
        "was not computable (first tick, counter reset, missing privilege).",
        "",
        "**Counters published in bursts.** Backends do not publish their statistics as they work: they",
        "flush pg_stat_io (16+), pg_stat_database and pg_stat_wal at most about once a second, and before",
        "17 the backends' share of pg_stat_bgwriter (`buffers_backend`, `buffers_backend_fsync`) arrives in",
        "lumps of about 1024 every few seconds. Sampled as is, `writes.backend` would read 0, 0, 0, 6534,",
        "0, 0, 6767 while the disk writes steadily. The sampler watches each counter's publication cadence",
        "(the longest of its last four gaps between rises) and pays a rise out evenly over that many",
        "ticks: the rate is steady, the total over the run is unchanged (the last tick of a `--duration`",
        "run pays out what is still owed; a session stopped by a key or signal may lack the last",
        "interval's remainder), and the figure lags the work by at most one publication interval. A rise",
        "after more than 15 s of silence is shown at once. The",
        "checkpointer's and background writer's own counters (`writes.checkpointer`, `writes.bgwriter`,",
        "`fsyncs.checkpointer`, `bgwriter.maxwritten_s`, `buffers.alloc_s`) are published as they",
        "work and are never spread: their timing is the point.",
        "",
    ]
    panes: dict[str, list[Metric]] = {}
    for m in CATALOG + DISK_METRICS:
        panes.setdefault(m.pane, []).append(m)
    for pane, ms in panes.items():
        lines += [f"## {pane}", "", "| metric | unit | kind | meaning | source |", "|---|---|---|---|---|"]
        lines += [f"| `{m.name}` | {m.unit} | {m.kind} | {m.help} | {m.source} |" for m in ms]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
