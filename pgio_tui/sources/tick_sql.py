"""The one statement the sampler runs each tick, and the RawSample it returns.

One round trip returns every counter, as JSON per view; a view this server lacks (see Features)
reads as NULL.
"""

from __future__ import annotations

from typing import Any, TypedDict

from pgio_tui.sources.backends import AUTOVACUUM_CHARS
from pgio_tui.sources.pgfeatures import OWN_QUERY_ID_SQL, Features, own
from pgio_tui.sources.statements_sql import statement_rows_sql, statement_texts_sql, statements_sql

Row = dict[str, Any]  # one view's row, as row_to_json gives it


class RawSample(TypedDict):
    """One tick as PostgresSource.sample() hands it to the sampler: the columns of tick_sql()
    (JSON already decoded), with the server log's new lines in place of logfile/logchunk.
    A section is None when this server has no such view (see Features)."""

    server_t: float  # the server's clock, epoch seconds
    postmaster_start: float | None  # epoch seconds
    bgwriter: Row  # pg_stat_bgwriter
    checkpointer: Row | None  # pg_stat_checkpointer (17+)
    # pg_stat_io (16+): backend_type -> [reads, writes, extends, fsyncs, writebacks, hits, evictions]
    io: dict[str, list[float | None]] | None  # (from io_rows: pg_counters.relation_totals)
    iosum: Row | None  # pg_stat_io (16+) summed over every backend type: evictions (object relation; from io_rows)
    # pg_stat_io (16+) rows with any I/O: [backend_type, object, context, *IO_ROW_COLUMNS] (io_rows_sql)
    io_rows: list[list[Any]] | None
    wal: Row | None  # wal_sql(): pg_stat_wal (14+), WAL writes and syncs under 14-17's names (18: from pg_stat_io)
    db: Row  # pg_stat_database summed: xact, blks_read, blks_hit, temp_bytes, blk_*_time, backends (None: not read, as below)
    # [backend_type, wait_event_type, wait_event, state, count] of the listed processes (long-idle
    # clients, which wait on nothing, left out): derived from `backends` by PostgresSource.sample(); None with it
    activity: list[list[Any]] | None
    control: Row | None  # pg_control_checkpoint(): checkpoint_lsn, redo_lsn, checkpoint_time
    wal_pos: float | None  # bytes since 0/0 (insert position, or replay position on a standby)
    pgss: Row | None  # pg_stat_statements summed: calls, total_ms, sumsq, entries (on a read of either kind)
    pgss_rows: list[list[Any]] | None  # changed entries (on a rows read, which also gives pgss): statement_rows_sql()
    pgss_texts: dict[str, str] | None  # queryid -> query text, for the queryids asked for
    pgss_reset: float | None  # on a rows read (14+): when every pg_stat_statements entry was last reset
    statements_t0: float  # server clock before the pg_stat_statements part,
    statements_tm: float | None  # between its sums and its rows (and texts),
    statements_t1: float  # and after it
    bufcache: Row | None  # pg_buffercache_summary() (16+): buffers_dirty, buffers_used; on ticks that ask for it
    # the server's processes: see backends_sql() and sources/backends.py; None on a tick that does not read them
    backends: list[list[Any]] | None
    aios: list[list[Any]] | None  # 18+ pg_aios: [state, operation, count] (None: not readable, or not read: as backends)
    own_query_id: int | None  # 14+: the query id of this tick statement (left out of the statement figures); as backends
    settings_md5: str  # fingerprint of the I/O settings: a change is re-read (the last one taken, see tick_sql)
    server_ms: float  # the server's time for this statement
    log_lines: list[str]  # server log lines since the last tick (when readable)
    checkpointer_pid: int | None  # whose log lines are the checkpointer's (needs pg_read_all_stats); derived too


IO_ROWS = "pgio_io_rows"  # the tick's one scan of pg_stat_io, 16+ (a CTE)
LOGFILE = "lf"  # the tick's one call of pg_current_logfile() (a FROM item)


def _json_row(sql: str) -> str:
    return f"(SELECT row_to_json(x) FROM ({sql}) x)"


def tick_sql(f: Features) -> str:
    """The one statement run every tick. Parameters: %(skip_queryids)s, %(log_offset)s, %(conf_t)s
    (the settings' fingerprint, below), %(backends)s and %(recent_s)s (backends_sql), %(bufcache)s and those of
    the pg_stat_statements part (below)."""
    cols = [
        "extract(epoch FROM clock_timestamp())::float8 AS server_t",
        "extract(epoch FROM pg_postmaster_start_time())::float8 AS postmaster_start",
        _json_row("SELECT * FROM pg_stat_bgwriter") + " AS bgwriter",
    ]
    cols.append(_json_row("SELECT * FROM pg_stat_checkpointer") + " AS checkpointer"
                if f.checkpointer_cols else "NULL::json AS checkpointer")
    # pg_stat_io is read more than once (relation rows by backend type, their sums, 18's WAL rows): one
    # scan of it, named IO_ROWS, serves them all (pg_stat_io makes every row at each scan; a CTE used
    # more than once is scanned once).
    io = IO_ROWS if f.io_cols else "pg_stat_io"
    # Every row with I/O; its relation sums by backend type (io) and over them all (iosum) are made
    # from these rows by the client (sources/pg_counters.relation_totals).
    cols.append(f"({io_rows_sql(f, io)}) AS io_rows" if f.io_cols else "NULL::json AS io_rows")
    cols.append(_json_row(wal_sql(f, io)) + " AS wal" if f.wal_cols else "NULL::json AS wal")
    # The processes are sampled only on the ticks that ask (%(backends)s: sources/backends.backends_every):
    # pg_stat_activity, once, per process (backends_sql; the wait sample (activity) and the
    # checkpointer's pid are derived from its rows: sources/backends.activity_of), the process count
    # (db.backends: numbackends copies every process's status entry), 18's pg_aios (their I/O in
    # flight: it visits every AIO handle) and this statement's query id (the status copy again,
    # and the same every tick). Each uncorrelated subquery is an InitPlan, run only when its CASE
    # branch is taken (EXPLAIN ANALYZE of the generic plan on 18: "never executed" when false). On 18
    # with 1,000 processes all but pg_stat_activity cost 0.18 ms of the 0.27 of a tick that skipped
    # it (docs/performance.md). NULL: not read; backends '[]': read, no process listed.
    per_process = "CASE WHEN %(backends)s::bool THEN"
    cols.append(_json_row(
        "SELECT sum(xact_commit + xact_rollback) AS xact, sum(blks_read) AS blks_read, "
        "sum(blks_hit) AS blks_hit, sum(temp_bytes) AS temp_bytes, sum(blk_read_time) AS blk_read_time, "
        "sum(blk_write_time) AS blk_write_time, "
        f"{per_process} (SELECT sum(numbackends) FROM pg_stat_database) END AS backends FROM pg_stat_database")
        + " AS db")
    cols.append(f"{per_process} coalesce(({backends_sql(f)}), '[]'::json) END AS backends")
    cols.append(_json_row("SELECT checkpoint_lsn::text, redo_lsn::text, "
                          "extract(epoch FROM checkpoint_time)::float8 AS checkpoint_time "
                          "FROM pg_control_checkpoint()") + " AS control")
    cols.append("pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_insert_lsn() END, '0/0')::float8 AS wal_pos")
    # pg_stat_statements costs O(entries) per read (milliseconds with thousands of entries), so the
    # sampler picks per tick what to read (%(pgss)s, bit flags: 1 the sums, 2 every entry's
    # counters, which give the sums from the same scan) and asks for query texts only for new
    # queryids (%(texts)s). Subqueries under a CASE run only when that branch is taken.
    # statements_t0/tm/t1 time the two parts of the read.
    cols.append("extract(epoch FROM clock_timestamp())::float8 AS statements_t0")
    if f.pgss_schema:
        cols.append(f"CASE WHEN %(pgss)s::int & 1 = 1 THEN {_json_row(statements_sql(f))} END AS pgss")
        cols.append("extract(epoch FROM clock_timestamp())::float8 AS statements_tm")
        cols.append(f"CASE WHEN %(pgss)s::int & 2 = 2 THEN ({statement_rows_sql(f)}) END AS pgss_rows")
        cols.append(f"CASE WHEN cardinality(%(texts)s::int8[]) > 0 THEN ({statement_texts_sql(f)}) END AS pgss_texts")
    else:
        cols.append("NULL::json AS pgss, NULL::float8 AS statements_tm, NULL::json AS pgss_rows, "
                    "NULL::json AS pgss_texts")
    cols.append("extract(epoch FROM clock_timestamp())::float8 AS statements_t1")
    # pg_buffercache_summary() visits every buffer header (lock-free): only on ticks that ask (%(bufcache)s).
    cols.append(f"CASE WHEN %(bufcache)s::bool THEN {_json_row(bufcache_sql(f))} END AS bufcache"
                if f.buffercache_summary else "NULL::json AS bufcache")
    cols.append(f"{per_process} coalesce(({aios_sql()}), '[]'::json) END AS aios" if f.aios else "NULL::json AS aios")
    if f.logfile:  # pg_current_logfile() reads a file: once (LOGFILE), for the name and the chunk
        cols.append(f"{LOGFILE}.name AS logfile")
        cols.append(f"pg_read_binary_file({LOGFILE}.name, %(log_offset)s, 1048576, true) AS logchunk")
    else:
        cols.append("NULL AS logfile, NULL::bytea AS logchunk")
    # The session's settings change only when it re-reads the configuration files, which sets
    # pg_conf_load_time() (we never SET them; a new session is a new connection). So the
    # fingerprint (50 current_setting() calls and an md5: 60 µs, a third of the statement) is
    # taken only when that time is not %(conf_t)s, the one the client last saw; NULL otherwise.
    # The same text as md5 over ARRAY(SELECT current_setting(s, true) FROM unnest(names)), without
    # the subquery: the calls written out (17 against 24 µs a tick for 50 settings).
    values = ", ".join(f"current_setting('{s}', true)" for s in f.settings)
    cols.append("pg_conf_load_time()::text AS conf_t")
    text = f"concat_ws(',', {values})" if values else "''"
    cols.append(f"CASE WHEN pg_conf_load_time()::text IS DISTINCT FROM %(conf_t)s::text "
                f"THEN md5({text}) END AS settings_md5")
    # 14+: this statement's own query id, as pg_stat_statements keys it: the observer's statements
    # are left out of the statement figures by what they are, not by a comment any role could write.
    # (read with the processes, above)
    cols.append(f"{per_process} ({OWN_QUERY_ID_SQL}) END AS own_query_id" if f.activity_query_id
                else "NULL::int8 AS own_query_id")
    # Last, so it covers the whole statement: the server's cost of this tick.
    cols.append("(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 AS server_ms")
    select = "SELECT " + ",\n  ".join(cols)
    if f.logfile:
        select += f"\nFROM (SELECT pg_current_logfile() AS name OFFSET 0) {LOGFILE}"  # OFFSET 0: not pulled up
    if io == IO_ROWS:
        return own("tick", f"WITH {IO_ROWS} AS (SELECT * FROM pg_stat_io) {select}")
    return own("tick", select)



def backends_sql(f: Features) -> str:
    """Per process (sources/backends.ROW): who it is, its state and wait, and on 18 its cumulative
    pg_stat_get_backend_io bytes. Client backends only when not idle or when their state changed
    in the last %(recent_s)s seconds (an idle client does no I/O and waits on nothing); background
    processes always (their state is NULL). The tick's only read of pg_stat_activity: the wait
    sample is made from these rows. pg_stat_activity makes a row for every process before the
    filter (and finds each one's PGPROC by a walk of the process array): 0.2 ms with 200 idle
    clients, 0.7 with 1,000 (docs/performance.md)."""
    since = "(SELECT statement_timestamp() - make_interval(secs => %(recent_s)s::float8))"  # once, not per row
    query_id = "a.query_id" if f.activity_query_id else "NULL::int8"
    io = "b.r, b.w" if f.backend_io else "NULL::float8, NULL::float8"
    lateral = ("LEFT JOIN LATERAL (SELECT sum(read_bytes)::float8 AS r, sum(write_bytes)::float8 AS w "
               "FROM pg_stat_get_backend_io(a.pid)) b ON true " if f.backend_io else "")
    return ("SELECT json_agg(json_build_array(a.pid, a.backend_type, a.application_name, a.datname, a.state, "
            "a.wait_event_type, a.wait_event, extract(epoch FROM a.query_start)::float8, "
            f"{query_id}, extract(epoch FROM a.backend_start)::float8, {io}, "
            f"CASE WHEN a.backend_type = 'autovacuum worker' THEN left(a.query, {AUTOVACUUM_CHARS}) END)) "
            f"FROM pg_stat_activity a {lateral}"
            "WHERE a.pid <> pg_backend_pid() AND (a.backend_type IS DISTINCT FROM 'client backend' "
            f"OR a.state IS DISTINCT FROM 'idle' OR a.state_change >= {since})")


# pg_stat_io's cumulative columns per row, in frame.IO_FIELDS order (times in ms, as the view has them).
IO_ROW_COLUMNS = ("reads", "writes", "writebacks", "extends", "fsyncs", "hits", "evictions", "reuses",
                  "read_bytes", "write_bytes", "extend_bytes",
                  "read_time", "write_time", "writeback_time", "extend_time", "fsync_time")


def io_rows_sql(f: Features, io: str = "pg_stat_io") -> str:
    """Every pg_stat_io row that has done any I/O, as [backend_type, object, context, *IO_ROW_COLUMNS]
    (bytes in kB). Bytes: 18's read_bytes/write_bytes/extend_bytes (one read may cover several blocks), else the
    operations x op_bytes (16-17: one block each). Times are NULL while their setting is off
    (track_io_timing; track_wal_io_timing for the object wal rows), which the view shows as 0:
    unknown, never 0 ms. A cell the view leaves NULL (an operation that cannot happen) stays NULL."""
    if "read_bytes" in f.io_cols:
        nbytes = ["read_bytes / 1024.0", "write_bytes / 1024.0", "extend_bytes / 1024.0"]
    else:
        nbytes = [f"{op} * op_bytes / 1024.0" for op in ("reads", "writes", "extends")]
    # uncorrelated subqueries: evaluated once per statement (InitPlans), not per row
    timing = ("CASE WHEN object = 'wal' THEN (SELECT current_setting('track_wal_io_timing', true) = 'on') "
              "ELSE (SELECT current_setting('track_io_timing', true) = 'on') END")
    times = [f"CASE WHEN {timing} THEN {c} END" for c in IO_ROW_COLUMNS[-5:]]
    values = ", ".join(["backend_type", "object", "context", *IO_ROW_COLUMNS[:8], *nbytes, *times])
    ops = " + ".join(f"coalesce({c}, 0)" for c in IO_ROW_COLUMNS[:8])
    return f"SELECT json_agg(json_build_array({values})) FROM {io} WHERE {ops} > 0"


def aios_sql() -> str:
    """18+: asynchronous I/O handles in use, by state and operation."""
    return ("SELECT json_agg(json_build_array(state, operation, n)) FROM "
            "(SELECT state::text, operation::text, count(*) AS n FROM pg_aios GROUP BY 1, 2) x")


# WAL I/O counters under 14-17's pg_stat_wal names, whatever the version. 18 moved them to pg_stat_io
# (object 'wal'); its context 'init' rows (zero-filling new segment files) were never in
# pg_stat_wal.wal_write/wal_sync, so only context 'normal' is summed: the figures mean the same on 14-18.
WAL_IO_COLUMNS = ("wal_write", "wal_sync", "wal_write_time", "wal_sync_time")


def wal_sql(f: Features, io: str = "pg_stat_io") -> str:
    """One row: wal_records, wal_fpi, wal_fpi_bytes (19+), wal_buffers_full, stats_reset and WAL_IO_COLUMNS
    (NULL if absent); `io`: where 18's pg_stat_io rows are read from."""
    fpi_bytes = "w.wal_fpi_bytes" if "wal_fpi_bytes" in f.wal_cols else "NULL::numeric AS wal_fpi_bytes"
    base = f"SELECT w.wal_records, w.wal_fpi, {fpi_bytes}, w.wal_buffers_full, w.stats_reset"
    if f.io_wal:
        return (f"{base}, io.writes AS wal_write, io.fsyncs AS wal_sync, io.write_time AS wal_write_time, "
                f"io.fsync_time AS wal_sync_time FROM pg_stat_wal w, (SELECT sum(writes) AS writes, "
                f"sum(fsyncs) AS fsyncs, sum(write_time) AS write_time, sum(fsync_time) AS fsync_time "
                f"FROM {io} WHERE object = 'wal' AND context = 'normal') io")
    cols = ", ".join(f"w.{c}" if c in f.wal_cols else f"NULL::float8 AS {c}" for c in WAL_IO_COLUMNS)
    return f"{base}, {cols} FROM pg_stat_wal w"


def bufcache_sql(f: Features) -> str:
    return f"SELECT buffers_dirty, buffers_used FROM {f.buffercache_summary}"


def dirty_buffers_sql(f: Features) -> str | None:
    """Dirty shared buffers now, once (at a checkpoint's start): 16+ the summary, 13-15 the view
    (0.5 us per buffer, a spinlock each: never per tick)."""
    if f.buffercache_summary:
        return own("dirty", f"SELECT buffers_dirty FROM {f.buffercache_summary}")
    if f.buffercache_view:
        return own("dirty", f"SELECT count(*) FROM {f.buffercache_view} WHERE isdirty")
    return None
