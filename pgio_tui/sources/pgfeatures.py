"""Everything that differs between PostgreSQL 13 and 18, in one place.

Features are found by catalog introspection at connect time (which views, which columns, which
privileges), not by version number, so a back-patched view or an old pg_stat_statements extension
after pg_upgrade is handled. From the features comes the single statement the sampler runs each
tick: one round trip returns every counter, as JSON per view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

import psycopg

from pgio_tui import metrics as M

# Settings that shape I/O behaviour: snapshotted at start, fingerprinted every tick, re-read on change.
SUPPORTED_MAJORS = (13, 14, 15, 16, 17, 18)  # supported and tested (scripts/pg-matrix.sh checks its pins)
IO_SETTINGS = (
    "server_version", "block_size", "data_checksums", "shared_buffers", "huge_pages", "max_connections",
    "checkpoint_timeout", "checkpoint_completion_target", "checkpoint_flush_after", "checkpoint_warning",
    "max_wal_size", "min_wal_size", "wal_segment_size", "wal_buffers", "wal_level", "wal_compression",
    "full_page_writes", "wal_sync_method", "wal_writer_delay", "wal_writer_flush_after",
    "synchronous_commit", "fsync", "commit_delay", "commit_siblings",
    "bgwriter_delay", "bgwriter_lru_maxpages", "bgwriter_lru_multiplier", "bgwriter_flush_after",
    "backend_flush_after", "effective_io_concurrency", "maintenance_io_concurrency", "io_combine_limit",
    "io_method", "io_workers", "track_io_timing", "track_wal_io_timing",
    "autovacuum", "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_cost_limit", "autovacuum_naptime",
    "vacuum_cost_limit", "vacuum_cost_delay", "work_mem", "maintenance_work_mem", "temp_buffers",
    "effective_cache_size", "random_page_cost", "log_checkpoints", "logging_collector",
    "shared_preload_libraries", "log_line_prefix", "log_destination",
)

# Markers so our own statements can be recognised (and excluded) in pg_stat_statements.
OWN_MARKER = "/* pgio-tui"
TICK_MARKER = "/* pgio-tui tick */"

# Statements whose latency a DBA means: the plannable ones (pg_stat_statements' own split). Utility
# statements (BEGIN, COMMIT/END, SET, SHOW, VACUUM, ...) take microseconds and would pull the mean
# towards zero. Leading comments and parentheses are skipped before the first keyword.
_PLANNABLE = r"^\(*\s*(select|insert|update|delete|merge|with|values|table)\M"
_LEADING_COMMENTS = r"^(\s|/\*([^*]|\*+[^*/])*\*+/|--[^\n]*(\n|$))*"

# Backend types whose pg_stat_io writes get their own metric; the rest add up to writes.other.
NAMED_WRITERS = {"checkpointer": "checkpointer", "background writer": "bgwriter",
                 "client backend": "backend", "autovacuum worker": "autovacuum"}


@dataclass(slots=True)
class Features:
    version_num: int = 0
    version: str = ""
    superuser: bool = False
    read_all_stats: bool = False  # pg_read_all_stats (pg_monitor): can see other backends' wait events
    in_recovery: bool = False
    bgwriter_cols: frozenset[str] = frozenset()
    checkpointer_cols: frozenset[str] = frozenset()  # 17+: pg_stat_checkpointer
    io_cols: frozenset[str] = frozenset()  # 16+: pg_stat_io
    wal_cols: frozenset[str] = frozenset()  # 14+: pg_stat_wal
    io_wal: bool = False  # 18+: WAL writes and syncs are pg_stat_io rows (object 'wal'), not pg_stat_wal columns
    pgss_schema: str | None = None  # pg_stat_statements usable (installed and preloaded)
    pgss_cols: frozenset[str] = frozenset()
    buffercache_summary: str | None = None  # 16+: schema-qualified pg_buffercache_summary() if allowed
    buffercache_view: str | None = None  # the pg_buffercache view (13-15 dirty count, once per checkpoint)
    settings: tuple[str, ...] = ()  # the IO_SETTINGS this role may read (some are superuser-only)
    logfile: bool = False  # may read the server log through pg_current_logfile() + pg_read_binary_file()
    log_path: str | None = None  # else the log file read directly on the database host (locallog)
    data_directory: str | None = None  # needs pg_read_all_settings
    notes: list[str] = field(default_factory=list)  # what is degraded and why, for the user

    @property
    def major(self) -> int:
        return self.version_num // 10000

    def summary(self) -> dict[str, object]:
        """What the recording's metadata keeps about the server's capabilities."""
        return {
            "version_num": self.version_num, "superuser": self.superuser,
            "read_all_stats": self.read_all_stats, "in_recovery": self.in_recovery,
            "pg_stat_checkpointer": bool(self.checkpointer_cols), "pg_stat_io": bool(self.io_cols),
            "pg_stat_wal": bool(self.wal_cols), "pg_stat_io_wal": self.io_wal,
            "pg_stat_statements": self.pgss_schema is not None,
            "pg_buffercache_summary": self.buffercache_summary is not None,
            "server_log": self.logfile or self.log_path is not None, "server_log_path": self.log_path,
            "notes": self.notes,
        }


def _columns(conn: psycopg.Connection, relation: str) -> frozenset[str]:
    row = conn.execute(
        "SELECT array_agg(attname::text) FROM pg_attribute "
        "WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped", (relation,)
    ).fetchone()
    return frozenset(row[0] or ()) if row else frozenset()


def _try(conn: psycopg.Connection, sql: str, params=()) -> object | None:
    """Run a probe; a permission or missing-object error means 'not available', never a crash."""
    try:
        row = conn.execute(sql, params).fetchone()
        return row[0] if row else None
    except psycopg.Error:
        return None


def detect(conn: psycopg.Connection) -> Features:
    f = Features()
    f.version_num, f.version, f.superuser, f.read_all_stats, f.in_recovery = conn.execute(
        "SELECT current_setting('server_version_num')::int, current_setting('server_version'), "
        "rolsuper, rolsuper OR pg_has_role('pg_read_all_stats', 'USAGE'), pg_is_in_recovery() "
        "FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    # pg_settings hides what this role may not read; current_setting() would raise on those.
    f.settings = tuple(r[0] for r in conn.execute(
        "SELECT name FROM pg_settings WHERE name = ANY(%s) ORDER BY name", (list(IO_SETTINGS),)))
    f.bgwriter_cols = _columns(conn, "pg_catalog.pg_stat_bgwriter")
    f.checkpointer_cols = _columns(conn, "pg_catalog.pg_stat_checkpointer")
    f.io_cols = _columns(conn, "pg_catalog.pg_stat_io")
    f.wal_cols = _columns(conn, "pg_catalog.pg_stat_wal")
    f.io_wal = bool(f.io_cols) and "wal_write" not in f.wal_cols and bool(
        _try(conn, "SELECT count(*) > 0 FROM pg_stat_io WHERE object = 'wal'"))

    schema = _try(conn, "SELECT extnamespace::regnamespace::text FROM pg_extension "
                        "WHERE extname = 'pg_stat_statements'")
    if schema is None:
        f.notes.append("pg_stat_statements not installed: no statement latency without a launched workload")
    elif _try(conn, f"SELECT count(*) FROM {schema}.pg_stat_statements(false)") is None:
        f.notes.append("pg_stat_statements installed but not loaded (shared_preload_libraries)")
    else:
        f.pgss_schema = schema
        f.pgss_cols = _columns(conn, f"{schema}.pg_stat_statements")

    bc = _try(conn, "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_buffercache'")
    if bc is not None:
        if _try(conn, f"SELECT 1 FROM {bc}.pg_buffercache_summary()") is not None:
            f.buffercache_summary = f"{bc}.pg_buffercache_summary()"
        elif _try(conn, f"SELECT has_table_privilege('{bc}.pg_buffercache', 'SELECT')"):
            f.buffercache_view = f"{bc}.pg_buffercache"

    if not f.read_all_stats:
        f.notes.append("needs pg_monitor (pg_read_all_stats): wait events and the checkpointer's state are hidden")
    f.data_directory = _try(conn, "SELECT current_setting('data_directory', true)")
    if f.data_directory is None:
        f.notes.append("needs pg_monitor (pg_read_all_settings): data directory unknown, devices not mapped")
    f.logfile = bool(_try(
        conn, "SELECT pg_read_binary_file(pg_current_logfile(), 0, 0, true) IS NOT NULL"))
    if not f.logfile:
        f.notes.append(LOG_NOT_READABLE)
    return f


LOG_NOT_READABLE = ("server log not readable (needs logging_collector and pg_read_server_files/superuser, "
                    "or running on the database host as a user who may read the log file): "
                    "checkpoint kinds and timings come from counters only")


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
    io: dict[str, list[float | None]] | None
    wal: Row | None  # wal_sql(): pg_stat_wal (14+), WAL writes and syncs under 14-17's names (18: from pg_stat_io)
    db: Row  # pg_stat_database summed: xact, blks_read, blks_hit, temp_bytes, blk_*_time, backends
    activity: list[list[Any]] | None  # [backend_type, wait_event_type, wait_event, state, count]
    control: Row | None  # pg_control_checkpoint(): checkpoint_lsn, redo_lsn, checkpoint_time
    wal_pos: float | None  # bytes since 0/0 (insert position, or replay position on a standby)
    pgss: Row | None  # pg_stat_statements summed: calls, total_ms, sumsq, entries (on a sums read)
    pgss_rows: list[list[Any]] | None  # changed entries (on a rows read): see statement_rows_sql()
    pgss_texts: dict[str, str] | None  # queryid -> query text, for the queryids asked for
    statements_t0: float  # server clock before and after the pg_stat_statements part
    statements_t1: float
    bufcache: Row | None  # pg_buffercache_summary() (16+): buffers_dirty, buffers_used; on ticks that ask for it
    settings_md5: str  # fingerprint of the I/O settings: a change is re-read
    server_ms: float  # the server's time for this statement
    log_lines: list[str]  # server log lines since the last tick (when readable)
    checkpointer_pid: int | None  # whose log lines are the checkpointer's (needs pg_read_all_stats)


def _json_row(sql: str) -> str:
    return f"(SELECT row_to_json(x) FROM ({sql}) x)"


def tick_sql(f: Features) -> str:
    """The one statement run every tick. Parameters: %(skip_queryids)s, %(log_offset)s, and those of
    the pg_stat_statements part (below)."""
    cols = [
        "extract(epoch FROM clock_timestamp())::float8 AS server_t",
        "extract(epoch FROM pg_postmaster_start_time())::float8 AS postmaster_start",
        _json_row("SELECT * FROM pg_stat_bgwriter") + " AS bgwriter",
    ]
    cols.append(_json_row("SELECT * FROM pg_stat_checkpointer") + " AS checkpointer"
                if f.checkpointer_cols else "NULL::json AS checkpointer")
    if f.io_cols:
        # Relation I/O only (18's WAL rows are not buffer writes); NULL cells are untracked, not zero.
        cols.append(
            "(SELECT json_object_agg(backend_type, json_build_array(r, w, e, fs, wb, h, ev)) FROM ("
            "SELECT backend_type, sum(reads) r, sum(writes) w, sum(extends) e, sum(fsyncs) fs, "
            "sum(writebacks) wb, sum(hits) h, sum(evictions) ev FROM pg_stat_io "
            "WHERE object = 'relation' GROUP BY backend_type) x) AS io")
    else:
        cols.append("NULL::json AS io")
    cols.append(_json_row(wal_sql(f)) + " AS wal" if f.wal_cols else "NULL::json AS wal")
    cols.append(_json_row(
        "SELECT sum(xact_commit + xact_rollback) AS xact, sum(blks_read) AS blks_read, "
        "sum(blks_hit) AS blks_hit, sum(temp_bytes) AS temp_bytes, sum(blk_read_time) AS blk_read_time, "
        "sum(blk_write_time) AS blk_write_time, sum(numbackends) AS backends FROM pg_stat_database") + " AS db")
    cols.append(
        "(SELECT json_agg(json_build_array(backend_type, wait_event_type, wait_event, state, n)) FROM ("
        "SELECT backend_type, wait_event_type, wait_event, state, count(*) n FROM pg_stat_activity "
        "WHERE pid <> pg_backend_pid() GROUP BY 1, 2, 3, 4) x) AS activity")
    # Whose log lines are the checkpointer's (visible with pg_read_all_stats; NULL otherwise).
    cols.append("(SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer' LIMIT 1) AS checkpointer_pid")
    cols.append(_json_row("SELECT checkpoint_lsn::text, redo_lsn::text, "
                          "extract(epoch FROM checkpoint_time)::float8 AS checkpoint_time "
                          "FROM pg_control_checkpoint()") + " AS control")
    cols.append("pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_insert_lsn() END, '0/0')::float8 AS wal_pos")
    # pg_stat_statements costs O(entries) per read (milliseconds with thousands of entries), so the
    # sampler picks per tick what to read (%(pgss)s: 0 nothing, 1 the sums, 2 every entry's
    # counters) and asks for query texts only for new queryids (%(texts)s). Subqueries under a CASE
    # run only when that branch is taken. statements_t0/t1 time this part of the tick.
    cols.append("extract(epoch FROM clock_timestamp())::float8 AS statements_t0")
    if f.pgss_schema:
        cols.append(_json_row(statements_sql(f)) + " AS pgss")
        cols.append(f"CASE WHEN %(pgss)s::int = 2 THEN ({statement_rows_sql(f)}) END AS pgss_rows")
        cols.append(f"CASE WHEN cardinality(%(texts)s::int8[]) > 0 THEN ({statement_texts_sql(f)}) END AS pgss_texts")
    else:
        cols.append("NULL::json AS pgss, NULL::json AS pgss_rows, NULL::json AS pgss_texts")
    cols.append("extract(epoch FROM clock_timestamp())::float8 AS statements_t1")
    # pg_buffercache_summary() visits every buffer header (lock-free): only on ticks that ask (%(bufcache)s).
    cols.append(f"CASE WHEN %(bufcache)s::bool THEN {_json_row(bufcache_sql(f))} END AS bufcache"
                if f.buffercache_summary else "NULL::json AS bufcache")
    if f.logfile:
        cols.append("pg_current_logfile() AS logfile")
        cols.append("pg_read_binary_file(pg_current_logfile(), %(log_offset)s, 1048576, true) AS logchunk")
    else:
        cols.append("NULL AS logfile, NULL::bytea AS logchunk")
    names = ", ".join(f"'{s}'" for s in f.settings)
    cols.append(f"md5(concat_ws(',', VARIADIC ARRAY(SELECT current_setting(s, true) "
                f"FROM unnest(ARRAY[{names}]::text[]) s))) AS settings_md5")
    # Last, so it covers the whole statement: the server's cost of this tick.
    cols.append("(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 AS server_ms")
    return f"{TICK_MARKER} SELECT " + ",\n  ".join(cols)


# WAL I/O counters under 14-17's pg_stat_wal names, whatever the version. 18 moved them to pg_stat_io
# (object 'wal'); its context 'init' rows (zero-filling new segment files) were never in
# pg_stat_wal.wal_write/wal_sync, so only context 'normal' is summed: the figures mean the same on 14-18.
WAL_IO_COLUMNS = ("wal_write", "wal_sync", "wal_write_time", "wal_sync_time")


def wal_sql(f: Features) -> str:
    """One row: wal_records, wal_fpi, wal_buffers_full, stats_reset and WAL_IO_COLUMNS (NULL if absent)."""
    base = "SELECT w.wal_records, w.wal_fpi, w.wal_buffers_full, w.stats_reset"
    if f.io_wal:
        return (f"{base}, io.writes AS wal_write, io.fsyncs AS wal_sync, io.write_time AS wal_write_time, "
                f"io.fsync_time AS wal_sync_time FROM pg_stat_wal w, (SELECT sum(writes) AS writes, "
                f"sum(fsyncs) AS fsyncs, sum(write_time) AS write_time, sum(fsync_time) AS fsync_time "
                f"FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') io")
    cols = ", ".join(f"w.{c}" if c in f.wal_cols else f"NULL::float8 AS {c}" for c in WAL_IO_COLUMNS)
    return f"{base}, {cols} FROM pg_stat_wal w"


def bufcache_sql(f: Features) -> str:
    return f"SELECT buffers_dirty, buffers_used FROM {f.buffercache_summary}"


def dirty_buffers_sql(f: Features) -> str | None:
    """Dirty shared buffers now, once (at a checkpoint's start): 16+ the summary, 13-15 the view
    (0.5 us per buffer, a spinlock each: never per tick)."""
    if f.buffercache_summary:
        return f"{OWN_MARKER} dirty */ SELECT buffers_dirty FROM {f.buffercache_summary}"
    if f.buffercache_view:
        return f"{OWN_MARKER} dirty */ SELECT count(*) FROM {f.buffercache_view} WHERE isdirty"
    return None


# Cumulative per-entry columns of the statement rows, in order after (queryid, userid, dbid,
# toplevel): name -> candidate columns, newest name first (17 renamed blk_read_time). A column the
# extension lacks reads as NULL (the figure is unknown, not zero).
STATEMENT_COUNTERS = {
    "calls": ("calls",),
    "total_ms": ("total_exec_time", "total_time"),
    "sumsq": (),  # calls * (stddev^2 + mean^2): the sum of squared times, for a window's stddev
    "rows": ("rows",),
    "hit": ("shared_blks_hit",),
    "read": ("shared_blks_read",),
    "dirtied": ("shared_blks_dirtied",),
    "written": ("shared_blks_written",),
    "read_time": ("shared_blk_read_time", "blk_read_time"),
    "write_time": ("shared_blk_write_time", "blk_write_time"),
    "temp_written": ("temp_blks_written",),
    "wal_bytes": ("wal_bytes",),
}


def _pgss_col(f: Features, names: tuple[str, ...]) -> str:
    return next((n for n in names if n in f.pgss_cols), "NULL")


def _pgss_exprs(f: Features) -> dict[str, str]:
    mean = _pgss_col(f, ("mean_exec_time", "mean_time"))
    stddev = _pgss_col(f, ("stddev_exec_time", "stddev_time"))
    out = {k: _pgss_col(f, names) for k, names in STATEMENT_COUNTERS.items()}
    out["sumsq"] = f"calls * ({stddev} * {stddev} + {mean} * {mean})"
    out["wal_bytes"] = f"{out['wal_bytes']}::float8" if out["wal_bytes"] != "NULL" else "NULL"
    return out


def _pgss_from(f: Features) -> str:
    return (f"FROM {f.pgss_schema}.pg_stat_statements(false) "
            f"WHERE NOT queryid = ANY(%(skip_queryids)s::int8[])")


def statement_rows_sql(f: Features) -> str:
    """The entries that changed since the client's last read, as one JSON array of arrays.

    The client passes what it knows (%(pq)s queryids, %(pu)s userids, %(pd)s dbids, %(pt)s
    toplevel, %(pc)s calls); a full join returns new and changed entries with their cumulative
    counters, and vanished ones (evicted, reset) with NULL counters. Building JSON for every entry
    costs the server several times the scan; for the few that changed, little.
    """
    toplevel = "toplevel" if "toplevel" in f.pgss_cols else "true"
    e = _pgss_exprs(f)
    counters = ", ".join(f"s.{k}" for k in e)
    inner = ", ".join(["queryid", "userid", "dbid", f"{toplevel} AS toplevel",
                       *(f"{expr} AS {k}" for k, expr in e.items())])
    return (f"SELECT json_agg(json_build_array(coalesce(s.queryid, p.q), coalesce(s.userid, p.u), "
            f"coalesce(s.dbid, p.d), coalesce(s.toplevel, p.t), {counters})) "
            f"FROM (SELECT {inner} {_pgss_from(f)}) s "
            f"FULL JOIN unnest(%(pq)s::int8[], %(pu)s::oid[], %(pd)s::oid[], %(pt)s::bool[], %(pc)s::int8[]) "
            f"AS p(q, u, d, t, c) ON p.q = s.queryid AND p.u = s.userid AND p.d = s.dbid AND p.t = s.toplevel "
            f"WHERE p.c IS DISTINCT FROM s.calls")


def statement_texts_sql(f: Features) -> str:
    """Query texts of the queryids in %(texts)s (this reads the whole query-text file: rarely)."""
    return (f"SELECT json_object_agg(queryid, query) FROM (SELECT DISTINCT ON (queryid) queryid, query "
            f"FROM {f.pgss_schema}.pg_stat_statements(true) WHERE queryid = ANY(%(texts)s::int8[])) x")


def statements_sql(f: Features) -> str:
    """Cumulative calls, time and sum of squares of the statements whose latency we show: top-level
    (14+), not in %(skip_queryids)s (utility statements and our own, see skip_queryids_sql), and
    the number of entries (a change means new statements to classify). Parameter: %(skip_queryids)s."""
    total = "total_exec_time" if "total_exec_time" in f.pgss_cols else "total_time"
    mean = "mean_exec_time" if "mean_exec_time" in f.pgss_cols else "mean_time"
    stddev = "stddev_exec_time" if "stddev_exec_time" in f.pgss_cols else "stddev_time"
    top = " AND toplevel" if "toplevel" in f.pgss_cols else ""
    shown = f"queryid IS NOT NULL AND queryid <> ALL(%(skip_queryids)s::bigint[]){top}"
    return (f"SELECT (sum(calls) FILTER (WHERE {shown}))::float8 AS calls, "
            f"(sum({total}) FILTER (WHERE {shown}))::float8 AS total_ms, "
            f"(sum(calls * ({stddev} * {stddev} + {mean} * {mean})) FILTER (WHERE {shown}))::float8 AS sumsq, "
            f"count(*) AS entries FROM {f.pgss_schema}.pg_stat_statements(false)")


def skip_queryids_sql(f: Features) -> str:
    """The queryids statement latency leaves out: utility statements and pgio-tui's own. Reads the
    query texts, so it runs only when the set of statements changed."""
    return (f"{OWN_MARKER} statements */ SELECT coalesce(array_agg(DISTINCT queryid), '{{}}') "
            f"FROM {f.pgss_schema}.pg_stat_statements(true) WHERE queryid IS NOT NULL AND "
            f"(query LIKE '{OWN_MARKER}%' OR regexp_replace(query, '{_LEADING_COMMENTS}', '') "
            f"!~* '{_PLANNABLE}')")



def settings_sql(f: Features) -> str:
    names = ", ".join(f"'{s}'" for s in f.settings)
    return (f"{OWN_MARKER} settings */ SELECT name, setting, coalesce(unit, ''), context FROM pg_settings "
            f"WHERE name IN ({names}) ORDER BY name")


def checkpoint_counters(bgwriter: dict, checkpointer: dict | None) -> dict[str, float | None]:
    """Started/done counts, buffers, and write/sync ms of checkpoints, whatever the version.

    13-16 keep them in pg_stat_bgwriter; 17+ in pg_stat_checkpointer (18 adds num_done, the
    only exact completion counter). Restartpoints count as checkpoints on a standby.
    """
    if checkpointer:
        c = checkpointer
        return {
            "started": c["num_timed"] + c["num_requested"]
            + c.get("restartpoints_timed", 0) + c.get("restartpoints_req", 0),
            "timed": c["num_timed"] + c.get("restartpoints_timed", 0),
            "done": (c["num_done"] + c.get("restartpoints_done", 0)) if "num_done" in c else None,
            "buffers": c["buffers_written"],
            "slru": c.get("slru_written"),
            "write_ms": c["write_time"], "sync_ms": c["sync_time"],
            "stats_reset": c.get("stats_reset"),
        }
    b = bgwriter
    return {
        "started": b["checkpoints_timed"] + b["checkpoints_req"], "timed": b["checkpoints_timed"],
        "done": None, "buffers": b["buffers_checkpoint"], "slru": None,
        "write_ms": b["checkpoint_write_time"], "sync_ms": b["checkpoint_sync_time"],
        "stats_reset": b.get("stats_reset"),
    }


def writes_by_source(bgwriter: dict, io: dict | None) -> dict[str, float | None]:
    """Cumulative buffer writes per source, from pg_stat_io (16+) or pg_stat_bgwriter (13-15).

    Keys are the metric suffixes of writes.*, fsyncs.*, extends.*, plus writebacks.total.
    """
    if io:
        out = {M.writes(v): 0.0 for v in NAMED_WRITERS.values()}
        out.update({M.WRITES_OTHER: 0.0, M.FSYNCS_BACKEND: None, M.FSYNCS_CHECKPOINTER: None,
                    M.EXTENDS_BACKEND: None, M.WRITEBACKS_TOTAL: 0.0})
        for btype, (_r, w, e, fs, wb, _h, _ev) in io.items():
            key = M.writes(NAMED_WRITERS.get(btype, "other"))
            out[key] += w or 0
            out[M.WRITEBACKS_TOTAL] += wb or 0
            if btype == "client backend":
                out[M.FSYNCS_BACKEND], out[M.EXTENDS_BACKEND] = fs, e
            elif btype == "checkpointer":
                out[M.FSYNCS_CHECKPOINTER] = fs
        return out
    b = bgwriter
    return {
        M.WRITES_CHECKPOINTER: b.get("buffers_checkpoint"), M.WRITES_BGWRITER: b.get("buffers_clean"),
        M.WRITES_BACKEND: b.get("buffers_backend"), M.WRITES_AUTOVACUUM: None, M.WRITES_OTHER: None,
        M.FSYNCS_BACKEND: b.get("buffers_backend_fsync"), M.FSYNCS_CHECKPOINTER: None,
        M.EXTENDS_BACKEND: None, M.WRITEBACKS_TOTAL: None,
    }


# Counters the checkpointer and the background writer publish as they work (their own loop): rates
# shown as sampled. Every other counter is a backend's, flushed at most about once a second (before
# 17 buffers_backend in lumps), so the sampler spreads its bursts (pgio_tui/publication.py).
PUBLISHED_AS_WRITTEN = frozenset({
    M.WRITES_CHECKPOINTER, M.WRITES_BGWRITER, M.FSYNCS_CHECKPOINTER, M.BGWRITER_MAXWRITTEN_S, M.BUFFERS_ALLOC_S,
    *(f"{btype}.{fld}" for btype in ("checkpointer", "background writer")
      for fld in ("reads", "writes", "extends", "fsyncs", "writebacks", "hits", "evictions")),
})

# Checkpointer wait events (after normalising away 17's renames) that mean "not idle".
_CKPT_IDLE = {"checkpointermain", "checkpointershutdown"}


def normalise_wait(event: str | None) -> str | None:
    """17 renamed IO wait events (WALWrite -> WalWrite, ...): compare case-insensitively without '_'."""
    return event.replace("_", "").lower() if event else None


def checkpointer_wait(activity: list | None) -> str | None:
    """The checkpointer's normalised wait event ('' when on CPU); None when it can't be seen."""
    for backend_type, _wtype, wevent, _state, _n in activity or ():
        if backend_type == "checkpointer":
            return normalise_wait(wevent) or ""
    return None


def checkpointer_busy(activity: list | None) -> bool | None:
    """True/False from the checkpointer's wait event; None when it can't be seen (no pg_monitor)."""
    wait = checkpointer_wait(activity)
    return None if wait is None else wait not in _CKPT_IDLE
