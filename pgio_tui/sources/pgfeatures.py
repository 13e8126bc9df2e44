"""What this server can be asked, found once at connect time: the Features.

Features are found by catalog introspection (which views, which columns, which privileges), not
by version number, so a back-patched view or an old pg_stat_statements extension after pg_upgrade
is handled. The version differences that follow from them live next door: the tick statement
(tick_sql), the pg_stat_statements statements (statements_sql) and how counters read across
versions (pg_counters).
"""

from __future__ import annotations

import re
import threading
from typing import Any
from dataclasses import dataclass, field

import psycopg

# Supported and tested (scripts/pg-matrix.sh checks its pins, and tests the next major when a registry
# serves it). A newer server is never refused: what it can be asked is found by introspection.
SUPPORTED_MAJORS = (13, 14, 15, 16, 17, 18)
# Settings that shape I/O behaviour: snapshotted at start, fingerprinted every tick, re-read on change.
IO_SETTINGS = (
    "server_version", "block_size", "data_checksums", "shared_buffers", "huge_pages", "max_connections",
    "checkpoint_timeout", "checkpoint_completion_target", "checkpoint_flush_after", "checkpoint_warning",
    "max_wal_size", "min_wal_size", "wal_segment_size", "wal_buffers", "wal_level", "wal_compression",
    "full_page_writes", "wal_sync_method", "wal_writer_delay", "wal_writer_flush_after",
    "synchronous_commit", "fsync", "commit_delay", "commit_siblings",
    "bgwriter_delay", "bgwriter_lru_maxpages", "bgwriter_lru_multiplier", "bgwriter_flush_after",
    "backend_flush_after", "effective_io_concurrency", "maintenance_io_concurrency", "io_combine_limit",
    "io_method", "io_workers", "track_io_timing", "track_wal_io_timing",
    "io_min_workers", "io_max_workers", "io_worker_idle_timeout", "io_worker_launch_interval",  # 19: self-sizing pool
    "autovacuum", "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_cost_limit", "autovacuum_naptime",
    "vacuum_cost_limit", "vacuum_cost_delay", "work_mem", "maintenance_work_mem", "temp_buffers",
    "effective_cache_size", "random_page_cost", "log_checkpoints", "logging_collector", "log_min_duration_statement",
    "shared_preload_libraries", "log_line_prefix", "log_destination",
)

# pgio-tui's own statements carry a marker comment, so pg_stat_statements' readers and the
# slow-statement counter leave them out. The marker follows the statement's first word:
# PostgreSQL 18 keeps a statement's text from its first token on, so a leading comment never
# reaches pg_stat_statements there (13-17 kept it). Recognised in either place (older recordings).
OWN_MARKER = "/* pgio-tui"
OWN_PATTERN = r"^\s*(\w+\s+)?" + re.escape(OWN_MARKER) + r"[ *]"  # as valid in PostgreSQL's regex
_OWN = re.compile(OWN_PATTERN)


def own(tag: str, sql: str) -> str:
    """`sql` marked as pgio-tui's own: `SELECT /* pgio-tui tag */ ...`."""
    word, rest = sql.split(None, 1)
    return f"{word} {OWN_MARKER} {tag} */ {rest}"


# 14+: the query ids of the statements this process ran, on any of its connections (the sampler's,
# an experiment's watch; note_ran(), ran()): the statement figures leave them out by what they are.
# A text marker would let any role hide its statements by writing it (it stays for the log and 13).
_RAN: set[int] = set()
_RAN_LOCK = threading.Lock()  # the sampler's thread and an experiment's watch both note ids
OWN_QUERY_ID_SQL = "SELECT query_id FROM pg_stat_get_activity(pg_backend_pid())"  # the running statement's


def run_own(conn: psycopg.Connection, tag: str, sql: str, params=None) -> tuple[list[str], list[tuple]]:
    """Run one of our statements (marked by own()); (column names, rows). On 14+ it runs inside a
    wrapper (marked own(tag)) that reads its query id while it runs, noted (note_ran)."""
    wrap = conn.info.server_version >= 140000
    if wrap:  # `sql` keeps its own mark inside
        sql = own(tag, f"SELECT x.*, ({OWN_QUERY_ID_SQL}) AS pgio_own_query_id FROM ({sql}) x")
    cur = conn.execute(sql, params)
    rows = cur.fetchall()
    cols = [d.name for d in cur.description or ()]  # a SELECT: described
    if not wrap:
        return cols, rows
    if rows:
        note_ran(rows[0][-1])
    return cols[:-1], [r[:-1] for r in rows]


def note_ran(query_id: int | None) -> None:
    """A query id of a statement this process ran (see ran())."""
    if query_id is not None:
        with _RAN_LOCK:
            _RAN.add(query_id)


def ran() -> frozenset[int]:
    """The query ids of the statements this process ran so far (14+)."""
    with _RAN_LOCK:
        return frozenset(_RAN)


def is_own(text: str) -> bool:
    """A statement text (pg_stat_statements' query, a log line's statement) marked by own()."""
    return _OWN.match(text) is not None


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
    pgss_info: bool = False  # 14+: pg_stat_statements_info (when its entries were last reset)
    buffercache_summary: str | None = None  # 16+: schema-qualified pg_buffercache_summary() if allowed
    buffercache_view: str | None = None  # the pg_buffercache view (13-15 dirty count, once per checkpoint)
    activity_query_id: bool = False  # 14+: pg_stat_activity.query_id (with compute_query_id)
    backend_io: bool = False  # 18+: pg_stat_get_backend_io(pid)
    aios: bool = False  # 18+: pg_aios readable (pg_read_all_stats)
    new_views: tuple[str, ...] = ()  # NEWER_VIEWS this server has (19+), detected and said, not yet read
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
            "pg_stat_get_backend_io": self.backend_io, "pg_aios": self.aios, "newer_views": list(self.new_views),
            "server_log": self.logfile or self.log_path is not None, "server_log_path": self.log_path,
            "notes": self.notes,
        }


def _columns(conn: psycopg.Connection, relation: str) -> frozenset[str]:
    row = conn.execute(
        "SELECT array_agg(attname::text) FROM pg_attribute "
        "WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped", (relation,)
    ).fetchone()
    return frozenset(row[0] or ()) if row else frozenset()


def _try(conn: psycopg.Connection, sql: str, params=()) -> Any:
    """Run a probe; a permission or missing-object error means 'not available', never a crash."""
    try:
        row = conn.execute(sql, params).fetchone()
        return row[0] if row else None
    except psycopg.Error:
        return None


def to_regclass_exists(conn: psycopg.Connection, relation: str) -> bool:
    return bool(_try(conn, "SELECT to_regclass(%s) IS NOT NULL", (relation,)))


def detect(conn: psycopg.Connection) -> Features:
    f = Features()
    row = conn.execute(
        "SELECT current_setting('server_version_num')::int, current_setting('server_version'), "
        "rolsuper, rolsuper OR pg_has_role('pg_read_all_stats', 'USAGE'), pg_is_in_recovery() "
        "FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if row is None:  # the role was dropped under us
        raise psycopg.DataError("the current role is not in pg_roles")
    f.version_num, f.version, f.superuser, f.read_all_stats, f.in_recovery = row
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
        f.pgss_info = "stats_reset" in _columns(conn, f"{schema}.pg_stat_statements_info")

    bc = _try(conn, "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_buffercache'")
    if bc is not None:
        if _try(conn, f"SELECT 1 FROM {bc}.pg_buffercache_summary()") is not None:
            f.buffercache_summary = f"{bc}.pg_buffercache_summary()"
        elif _try(conn, f"SELECT has_table_privilege('{bc}.pg_buffercache', 'SELECT')"):
            f.buffercache_view = f"{bc}.pg_buffercache"

    f.activity_query_id = "query_id" in _columns(conn, "pg_catalog.pg_stat_activity")
    f.backend_io = _try(conn, "SELECT count(*) FROM pg_stat_get_backend_io(pg_backend_pid())") is not None
    f.aios = _try(conn, "SELECT count(*) FROM pg_aios") is not None
    if not f.aios and to_regclass_exists(conn, "pg_catalog.pg_aios"):
        f.notes.append("asynchronous I/O in flight (pg_aios) needs pg_monitor (pg_read_all_stats)")

    f.new_views = tuple(v for v in NEWER_VIEWS if to_regclass_exists(conn, f"pg_catalog.{v}"))
    if f.new_views:
        f.notes.append(f"this server has {', '.join(f.new_views)} (PostgreSQL 19): detected, not shown yet")
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


# Statistics views newer than SUPPORTED_MAJORS' newest (19): pg_stat_recovery (a standby's replay),
# pg_stat_lock (lock statistics).
NEWER_VIEWS = ("pg_stat_recovery", "pg_stat_lock")

LOG_NOT_READABLE = ("server log not readable (needs logging_collector and pg_read_server_files/superuser, "
                    "or running on the database host as a user who may read the log file): "
                    "checkpoint kinds and timings come from counters only")


def settings_sql(f: Features) -> str:
    names = ", ".join(f"'{s}'" for s in f.settings)
    return own("settings", f"SELECT name, setting, coalesce(unit, ''), context FROM pg_settings "
                           f"WHERE name IN ({names}) ORDER BY name")

