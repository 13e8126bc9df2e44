"""The pg_stat_statements statements: per-entry rows, texts, the sums and the skip list.

Column names differ between extension versions (13's total_time, 17's shared_blk_read_time):
each figure names its candidates here, and a column the extension lacks reads as NULL.
"""

from __future__ import annotations

import re

from pgio_tui.sources.pgfeatures import OWN_PATTERN, Features, is_own, own

# Statements whose latency a DBA means: the plannable ones (pg_stat_statements' own split). Utility
# statements (BEGIN, COMMIT/END, SET, SHOW, VACUUM, ...) take microseconds and would pull the mean
# towards zero. Leading comments and parentheses are skipped before the first keyword.
PLANNABLE = ("select", "insert", "update", "delete", "merge", "with", "values", "table")
_PLANNABLE = rf"^\(*\s*({'|'.join(PLANNABLE)})\M"
_LEADING_COMMENTS = r"^(\s|/\*([^*]|\*+[^*/])*\*+/|--[^\n]*(\n|$))*"
_PY_LEADING = re.compile(_LEADING_COMMENTS)  # the same pattern in Python's re
_PY_PLANNABLE = re.compile(rf"^\(*\s*({'|'.join(PLANNABLE)})\b", re.I)


def shown_statement(query: str, own: bool | None = None) -> bool:
    """The rule of skip_queryids_sql() for a query text read elsewhere (a plan's pg_stat_statements
    list): plannable, and not one of pgio-tui's own: `own` as the reader knew it (its query id was
    one this process ran), else (a folder written before that was kept) by the text's marker."""
    mine = is_own(query) if own is None else own
    return not mine and bool(_PY_PLANNABLE.match(_PY_LEADING.sub("", query, count=1)))


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


# Whether an entry is left out (%(skip_queryids)s): `queryid = ANY(skip)` as it reads (NULL for a
# NULL queryid, another role's entry this one may not see, when the list is not empty), found by a
# hash join. The tick runs on a generic plan (sources/postgres.PLAN_CACHE_MODE), where `= ANY` of
# a parameter array compares each entry with the whole list: 300 left out made a read of 5,000
# entries 6x dearer. SKIP_JOIN is joined to the entries (aliased s), SKIPPED says it.
SKIP_JOIN = ("LEFT JOIN (SELECT DISTINCT q FROM unnest(%(skip_queryids)s::int8[]) q) skip "
             "ON skip.q = s.queryid")
SKIPPED = ("(skip.q IS NOT NULL OR CASE WHEN s.queryid IS NULL "
           "AND cardinality(%(skip_queryids)s::int8[]) > 0 THEN NULL::bool ELSE false END)")


def _pgss_from(f: Features) -> str:
    return f"FROM {f.pgss_schema}.pg_stat_statements(false) s {SKIP_JOIN} WHERE NOT {SKIPPED}"


def statement_rows_sql(f: Features) -> str:
    """The entries that changed since the client's last read, and the sums of every entry, from
    one scan: a JSON array [changed entries (arrays), sums (as statements_sql gives them), the
    time of the last reset of every entry (14+; else null)].

    The client passes what it knows (%(pq)s queryids, %(pu)s userids, %(pd)s dbids, %(pt)s
    toplevel, %(pc)s calls); a full join returns new and changed entries with their cumulative
    counters, and vanished ones (evicted, reset) with NULL counters. Building JSON for every entry
    costs the server several times the scan; for the few that changed, little. The sums come from
    the same scan, in the same aggregate as the changed entries (one pass over the join, no copy of
    the entries: a fifth less than a materialized CTE read twice), so a tick that reads the rows
    pays nothing more for the statement latency. A vanished entry has no pg_stat_statements side
    (s.userid, never NULL in the view, is NULL): the sums and the count leave it out.
    """
    toplevel = "toplevel" if "toplevel" in f.pgss_cols else "true"
    e = _pgss_exprs(f)
    counters = ", ".join(f"s.{k}" for k in e)
    inner = ", ".join(["queryid", "userid", "dbid", f"{toplevel} AS toplevel",
                       *(f"{expr} AS {k}" for k, expr in e.items())])
    shown = "s.queryid IS NOT NULL AND s.toplevel"
    # 14+: when every entry was last reset. A reset followed by more calls than before would read
    # as counters that went on; the time tells it (StatementTracker starts a new baseline).
    reset = (f"(SELECT extract(epoch FROM stats_reset)::float8 FROM {f.pgss_schema}.pg_stat_statements_info)"
             if f.pgss_info else "NULL::float8")
    return (f"SELECT json_build_array("
            f"json_agg(json_build_array(coalesce(s.queryid, p.q), coalesce(s.userid, p.u), "
            f"coalesce(s.dbid, p.d), coalesce(s.toplevel, p.t), {counters})) "
            f"FILTER (WHERE p.c IS DISTINCT FROM s.calls), "
            f"json_build_object('calls', (sum(s.calls) FILTER (WHERE {shown}))::float8, "
            f"'total_ms', (sum(s.total_ms) FILTER (WHERE {shown}))::float8, "
            f"'sumsq', (sum(s.sumsq) FILTER (WHERE {shown}))::float8, 'entries', count(s.userid)), "
            f"{reset}) "
            f"FROM (SELECT {inner} {_pgss_from(f)}) s "
            f"FULL JOIN unnest(%(pq)s::int8[], %(pu)s::oid[], %(pd)s::oid[], %(pt)s::bool[], %(pc)s::int8[]) "
            f"AS p(q, u, d, t, c) ON p.q = s.queryid AND p.u = s.userid AND p.d = s.dbid AND p.t = s.toplevel")


def statement_texts_sql(f: Features) -> str:
    """Query texts of the queryids in %(texts)s (this reads the whole query-text file: rarely)."""
    return (f"SELECT json_object_agg(queryid, query) FROM (SELECT DISTINCT ON (queryid) queryid, query "
            f"FROM {f.pgss_schema}.pg_stat_statements(true) WHERE queryid = ANY(%(texts)s::int8[])) x")


def statements_sql(f: Features) -> str:
    """Cumulative calls, time and sum of squares of the statements whose latency we show: top-level
    (14+), not in %(skip_queryids)s (utility statements and our own, see skip_queryids_sql), and
    the number of entries not left out (a change means new statements to classify); the same as
    the sums part of statement_rows_sql. Parameter: %(skip_queryids)s."""
    total = "total_exec_time" if "total_exec_time" in f.pgss_cols else "total_time"
    mean = "mean_exec_time" if "mean_exec_time" in f.pgss_cols else "mean_time"
    stddev = "stddev_exec_time" if "stddev_exec_time" in f.pgss_cols else "stddev_time"
    top = " AND toplevel" if "toplevel" in f.pgss_cols else ""
    shown = f"queryid IS NOT NULL AND NOT skipped{top}"
    return (f"SELECT (sum(calls) FILTER (WHERE {shown}))::float8 AS calls, "
            f"(sum({total}) FILTER (WHERE {shown}))::float8 AS total_ms, "
            f"(sum(calls * ({stddev} * {stddev} + {mean} * {mean})) FILTER (WHERE {shown}))::float8 AS sumsq, "
            f"count(*) FILTER (WHERE NOT skipped) AS entries "
            f"FROM (SELECT s.*, {SKIPPED} AS skipped FROM {f.pgss_schema}.pg_stat_statements(false) s "
            f"{SKIP_JOIN}) s")


def skip_queryids_sql(f: Features) -> str:
    """The queryids statement latency leaves out: utility statements, and on 13 pgio-tui's own by
    their marker, of the observer's own role only (a role may not hide its statements by writing
    the marker). On 14+ ours are known by their query ids instead (PostgresSource.own_queryids).
    Reads the query texts, so it runs only when the set of statements changed."""
    ours = "" if f.activity_query_id else f"(query ~ '{OWN_PATTERN}' AND userid = current_user::regrole) OR "
    return own("statements", f"SELECT coalesce(array_agg(DISTINCT queryid), '{{}}') "
                             f"FROM {f.pgss_schema}.pg_stat_statements(true) WHERE queryid IS NOT NULL AND "
                             f"({ours}regexp_replace(query, '{_LEADING_COMMENTS}', '') !~* '{_PLANNABLE}')")
