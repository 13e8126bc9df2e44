"""The PostgreSQL source: a careful connection and one round trip per tick.

The observer must never hurt the observed: autocommit (no snapshot held, statistics read fresh),
a short statement_timeout, read-only, application_name 'pgio-tui', and psycopg's automatic
prepared statements with a generic plan, so the tick query is planned once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, cast

import psycopg
from psycopg.abc import Params
from psycopg.types.json import set_json_loads

from pgio_tui.safe_text import LINE_CHARS, capped
from pgio_tui.secrets import scrub_secrets
from pgio_tui.sources.backends import activity_of
from pgio_tui.sources.pg_counters import relation_totals
from pgio_tui.sources import pgfeatures
from pgio_tui.sources.locallog import LogTail
from pgio_tui.sources.pgfeatures import Features
from pgio_tui.sources.statements_sql import skip_queryids_sql, statement_texts_sql, statements_sql
from pgio_tui.sources.tick_sql import RawSample, dirty_buffers_sql, tick_sql

STATEMENT_TIMEOUT_MS = 2000
# The settings fingerprint is skipped while the session's pg_conf_load_time() stays as last seen
# (tick_sql); it is taken in full at least this often all the same, so that a change the load time
# does not show (a reload the session applied with an error, a setting changed by other means) is
# followed within this many seconds. 60 us per full fingerprint.
FULL_FINGERPRINT_S = 10.0
# The tick statement's parameters choose what it reads (the pg_stat_statements parts run only under
# a CASE), so PostgreSQL's default plan choice finds the generic plan dearer and plans the whole
# statement afresh at every tick: 0.7 ms of the server's CPU a tick, in the Bind message, before
# the statement's own clock starts (server_ms never showed it). One generic plan, made at the
# first run, serves every tick; a branch not taken costs nothing. Every statement on this
# connection is ours and prepared (prepare_threshold 0).
PLAN_CACHE_MODE = "force_generic_plan"
_NO_ENTRIES: dict[str, list[Any]] = {"pq": [], "pu": [], "pd": [], "pt": [], "pc": []}
_NAMED = re.compile(r"%\((\w+)\)s|%%")
_decode_json = json.JSONDecoder().decode


def _json_loads(data: str | bytes) -> Any:
    """json.loads for the server's JSON, which is UTF-8 (client_encoding): without the encoding
    guess json.loads makes for bytes."""
    return _decode_json(data if isinstance(data, str) else data.decode())


def one_row(cur: psycopg.Cursor | psycopg.RawCursor) -> tuple[Any, ...]:
    """The row of a statement that always returns one (an aggregate, a SELECT without FROM); a
    psycopg.Error if it returned none."""
    row = cur.fetchone()
    if row is None:
        raise psycopg.DataError("the statement returned no row")
    return row


def scalar(conn: psycopg.Connection, query: str, params: Params | None = None) -> Any:
    """The value of a statement that returns one row of one column (a count, a setting)."""
    return one_row(conn.execute(query, params))[0]


def positional(sql: str) -> tuple[bytes, tuple[str, ...]]:
    """A statement with %(name)s placeholders as PostgreSQL's own $n ones, and the names in $n
    order: what psycopg does to a query at every execute, done once. (psycopg caches it only for
    statements under 4 kB; the tick statement is longer.) A name used twice is one $n."""
    names: list[str] = []

    def number(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        if m.group(1) not in names:
            names.append(m.group(1))
        return f"${names.index(m.group(1)) + 1}"

    out = _NAMED.sub(number, sql)
    if "%" in _NAMED.sub("", sql):
        raise ValueError("a placeholder other than %(name)s in the tick statement")
    return out.encode(), tuple(names)


class SourceError(Exception):
    """A one-line, actionable description of why PostgreSQL could not be read."""


def describe_error(exc: BaseException) -> str:
    """Turn a libpq/psycopg error into one line that says what to do."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = msg.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return f"{msg} (check the password, PGPASSWORD or ~/.pgpass)"
    if "connection refused" in low or "no such file or directory" in low:
        return f"{msg} (is the server running? check -h/--host and -p/--port)"
    if "does not exist" in low and "database" in low:
        return f"{msg} (pick an existing database with -d)"
    if "invalid connection option" in low or "missing \"=\"" in low or "invalid dsn" in low:
        return f"{msg} (check the connection string given with -d)"
    return msg


def conninfo_from_args(host=None, port=None, user=None, dbname=None) -> str:
    """psql-style options to a conninfo. -d may itself be a conninfo string or URI; PG* env,
    ~/.pgpass and service files are libpq's business, never ours."""
    extra = {k: v for k, v in (("host", host), ("port", port), ("user", user)) if v}
    base = ""
    if dbname and ("=" in dbname or "://" in dbname):
        base = dbname
    elif dbname:
        extra["dbname"] = dbname
    try:
        return psycopg.conninfo.make_conninfo(base, **extra)
    except psycopg.Error as exc:
        msg, hint = describe_error(exc), " (check the connection string given with -d)"
        raise SourceError(msg if msg.endswith(hint) else msg + hint) from exc


def connect(conninfo: str, connect_timeout: int = 5) -> psycopg.Connection:
    try:
        conn = psycopg.connect(
            conninfo, autocommit=True, application_name="pgio-tui", connect_timeout=connect_timeout,
            client_encoding="utf8",  # an SQL_ASCII server would otherwise hand us bytes
            options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c default_transaction_read_only=on "
                    "-c lock_timeout=500 -c idle_in_transaction_session_timeout=10000 "
                    f"-c plan_cache_mode={PLAN_CACHE_MODE}",
        )
    except psycopg.Error as exc:
        raise SourceError(describe_error(exc)) from exc
    conn.prepare_threshold = 0  # the tick query is prepared once and reused
    return conn


class PendingConnect:
    """One connection attempt on its own thread. A server slow to accept (a lock on pg_database
    holds back every backend's start-up, and lock_timeout is set only after it) must not stall
    the tick: the OS figures keep coming while we wait up to connect_timeout."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.conn: psycopg.Connection | None = None
        self.error: SourceError | None = None
        self.done = threading.Event()
        self._abandoned = False
        threading.Thread(target=self._run, name="pgio-connect", daemon=True).start()

    def _run(self) -> None:
        try:
            self.conn = connect(self.conninfo)
        except SourceError as exc:
            self.error = exc
        finally:
            self.done.set()
            if self._abandoned:
                self.abandon()

    def abandon(self) -> None:
        """Nobody will use the result: close the connection when (or once) it arrives."""
        self._abandoned = True
        if self.done.is_set() and self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass(slots=True)
class Target:
    """Who we are connected to, for the recording's metadata."""

    host: str
    port: str
    dbname: str
    user: str
    conninfo: str  # scrubbed


class PostgresSource:
    """Reads the raw cumulative counters each tick; rates are the sampler's job."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.conn: psycopg.Connection | None = None
        self.features = Features()
        self._sql = ""
        self._raw: tuple[bytes, tuple[str, ...]] = (b"", ())  # _sql with $n placeholders, and their names
        self._names: tuple[str, ...] | None = None  # the tick statement's column names, known after its first run
        self._cursor: psycopg.RawCursor | None = None  # the tick's, made once per connection
        self._conf_t: str | None = None  # pg_conf_load_time() of this session as last seen (tick_sql)
        self._settings_md5: str | None = None  # the settings' fingerprint taken then
        self._fingerprint_t = 0.0  # monotonic time of the last full fingerprint
        self.recent_s = 3.0  # backends: idle clients whose state changed this long ago are listed (interval + 2 s)
        self._skip_queryids: list[int] = []  # utility statements and ours: not in statement latency
        self._ran_merged = 0  # size of pgfeatures.ran() when last merged into _skip_queryids
        self._pgss_entries: int | None = None  # entries when _skip_queryids was made
        self._log_file: str | None = None
        self._log_offset = 0
        self._log_tail = b""
        self.local_log: LogTail | None = None  # a locallog.LogTail when the log is read from the file on this host

    # -- connection -------------------------------------------------------------------------
    def open(self, conn: psycopg.Connection | None = None) -> Features:
        """Connect (or adopt `conn`, made by PendingConnect) and detect what the server offers."""
        self.close()
        self.conn = conn or connect(self.conninfo)
        try:
            set_json_loads(_json_loads, self.conn)
            self.features = pgfeatures.detect(self.conn)
            self._sql, self._names = tick_sql(self.features), None
            self._raw = positional(self._sql)
            self._conf_t = self._settings_md5 = None  # a new session: its settings fingerprinted anew
            self._start_log()
        except psycopg.Error as exc:
            self.close()
            raise SourceError(describe_error(exc)) from exc
        return self.features

    def close(self) -> None:
        self._cursor = None
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = None

    @property
    def connection(self) -> psycopg.Connection:
        """The open connection; SourceError when there is none (not opened, or lost and closed)."""
        if self.conn is None:
            raise SourceError("not connected")
        return self.conn

    @property
    def target(self) -> Target:
        info = self.connection.info
        return Target(info.host, str(info.port), info.dbname, info.user, scrub_secrets(self.conninfo))

    @property
    def log_file(self) -> str | None:
        """The server log file being tailed (its name tells stderr, csvlog and jsonlog apart)."""
        return self.local_log.path if self.local_log is not None else self._log_file

    def current_logfile(self) -> str | None:
        """pg_current_logfile(), when logging_collector runs and this role may ask."""
        try:
            row = self.connection.execute("SELECT pg_current_logfile()").fetchone()
        except psycopg.Error:
            return None
        return row[0] if row else None

    def checkpointer_pid(self) -> int | None:
        """The checkpointer's PID, when this role may see it (pg_read_all_stats)."""
        try:
            row = self.connection.execute(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer' LIMIT 1").fetchone()
        except psycopg.Error:
            return None
        return row[0] if row else None

    def _start_log(self) -> None:
        """Start tailing at the current end of the server log: history is not this session's."""
        if not self.features.logfile:
            return
        row = one_row(self.connection.execute(
            "SELECT pg_current_logfile(), (pg_stat_file(pg_current_logfile(), true)).size"))
        self._log_file, self._log_offset = row[0], row[1] or 0

    # -- per tick ---------------------------------------------------------------------------
    def sample(self, statements: int = 1, texts: list[int] | tuple = (),
               known: dict | None = None, bufcache: bool = False, backends: bool = True) -> RawSample:
        """One round trip: the raw values (JSON already decoded by psycopg).

        `statements`: what to read of pg_stat_statements (bit flags: 1 the sums, 2 every entry);
        `texts`: queryids whose query text is wanted; `known`: the entries the caller knows
        (StatementTracker.known()), so that only changed ones come back; `bufcache`: read
        pg_buffercache_summary() this tick; `backends`: read pg_stat_activity this tick (else the
        sample's backends and activity are None: not read).
        """
        if self.conn is None:
            raise SourceError("not connected")
        try:
            cur = self._cursor
            if cur is None or cur.connection is not self.conn:
                cur = self._cursor = psycopg.RawCursor(self.conn)
            params = {"skip_queryids": self._skip_queryids, "log_offset": self._log_offset,
                      "pgss": statements, "texts": list(texts), "bufcache": bufcache, "backends": backends,
                      "recent_s": self.recent_s, **(known or _NO_ENTRIES),
                      "conf_t": self._conf_t if time.monotonic() - self._fingerprint_t < FULL_FINGERPRINT_S else None}
            sql, order = self._raw
            cur.execute(sql, [params[k] for k in order])
            names = self._names
            if names is None:  # cur.description makes a Column object per column: once, not every tick
                names = self._names = tuple(d.name for d in cur.description or ())
            raw: dict[str, Any] = dict(zip(names, one_row(cur)))
            self._ran(raw.pop("own_query_id", None))
            conf_t = raw.pop("conf_t")
            if raw["settings_md5"] is None:  # no reload since the last fingerprint: unchanged
                raw["settings_md5"] = self._settings_md5
            else:
                self._conf_t, self._settings_md5 = conf_t, raw["settings_md5"]
                self._fingerprint_t = time.monotonic()
            if raw.get("pgss_rows") is not None:  # [changed entries, sums of the same scan, reset time]
                raw["pgss_rows"], sums, raw["pgss_reset"] = raw["pgss_rows"]
                raw["pgss"] = raw.get("pgss") or sums
            pgss = raw.get("pgss")
            if pgss is not None and pgss.get("entries") != self._pgss_entries:
                raw["pgss"] = self._reclassify(pgss)
        except psycopg.Error as exc:
            raise SourceError(describe_error(exc)) from exc
        raw["log_lines"] = self._consume_log(raw.pop("logfile", None), raw.pop("logchunk", None))
        raw["activity"], raw["checkpointer_pid"] = activity_of(raw.get("backends"))
        if self.features.io_cols:
            raw["io"], raw["iosum"] = relation_totals(raw.get("io_rows") or [])
        else:
            raw["io"] = raw["iosum"] = None
        if self.local_log is not None:
            raw["log_lines"] = self.local_log.lines()
        return cast(RawSample, raw)  # the columns of tick_sql(), as RawSample declares them

    def _consume_log(self, logfile: str | None, chunk: bytes | None) -> list[str]:
        if logfile is None:
            return []
        if logfile != self._log_file:  # rotated: the new file is read from its start next tick
            self._log_file, self._log_offset, self._log_tail = logfile, 0, b""
            return []
        if not chunk:
            return []
        self._log_offset += len(chunk)
        data = self._log_tail + bytes(chunk)
        *lines, self._log_tail = data.split(b"\n")
        return [ln.decode("utf-8", "replace") for ln in lines]

    def _reclassify(self, pgss: dict) -> dict:
        """New statements appeared: classify them (utility, ours) and take this tick's sums again
        with the new list, so every delta compares sums over the same statements."""
        f = self.features
        sums_sql = pgfeatures.own("statement sums", statements_sql(f))
        try:
            if self._pgss_entries is None:  # these two statements' own entries must exist to be left out
                self._own(sums_sql, {"skip_queryids": self._skip_queryids})
                self._own(skip_queryids_sql(f))
            skip = self._own(skip_queryids_sql(f))[0][0]
            self._skip_queryids = sorted(set(skip) | pgfeatures.ran())
            names, rows = self._own(sums_sql, {"skip_queryids": self._skip_queryids}, names=True)
            pgss = dict(zip(names, rows[0]))
        except psycopg.Error:
            return pgss  # e.g. no permission to read query texts: the sums as they were
        self._pgss_entries = pgss.get("entries")
        return pgss

    def statement_texts(self, queryids: list[int]) -> dict | None:
        """Query texts of these queryids in a statement of their own (the tick asks in its own)."""
        if not self.features.pgss_schema or self.conn is None:
            return None
        try:
            sql = pgfeatures.own("statement texts", statement_texts_sql(self.features))
            return self._own(sql, {"texts": list(queryids)})[0][0]
        except psycopg.Error:
            return None

    def _own(self, sql: str, params=None, names: bool = False):
        """Run one of our statements: its rows (and column names); on 14+ its query id is noted
        (pgfeatures.run_own) and left out of the statement figures."""
        cols, rows = pgfeatures.run_own(self.connection, "own", sql, params)
        self._merge_ran()
        return (cols, rows) if names else rows

    @property
    def own_queryids(self) -> frozenset[int]:
        """14+: query ids of the statements this process ran (pgfeatures.ran())."""
        return pgfeatures.ran()

    def _ran(self, query_id: int | None) -> None:
        """The tick statement's query id: left out of the statement figures from now on."""
        pgfeatures.note_ran(query_id)
        self._merge_ran()

    def _merge_ran(self) -> None:
        """Query ids this process ran (here or on another connection, an experiment's watch) join
        the skip list as they appear."""
        ran = pgfeatures.ran()
        if len(ran) != self._ran_merged:
            self.skip_queryids(ran)
            self._ran_merged = len(ran)

    def skip_queryids(self, queryids) -> None:
        """Leave these queryids out of the statement figures from the next tick on."""
        self._skip_queryids = sorted(set(self._skip_queryids) | {q for q in queryids if q is not None})

    def settings(self) -> list[tuple[str, str, str, str]]:
        """(name, value, unit, context) for the I/O settings; values cut to LINE_CHARS (a role may
        set one to a megabyte; names, units and contexts are the server's own, short)."""
        try:
            return [(r[0], capped(r[1], LINE_CHARS), *r[2:]) for r in
                    self._own(pgfeatures.settings_sql(self.features))]
        except psycopg.Error as exc:
            raise SourceError(describe_error(exc)) from exc

    def dirty_buffers_now(self) -> int | None:
        """Dirty shared buffers, read once (a checkpoint's start): tick_sql.dirty_buffers_sql()."""
        sql = dirty_buffers_sql(self.features)
        if not sql:
            return None
        try:
            return self._own(sql)[0][0]
        except psycopg.Error:
            return None
