"""The tick statement as sent: the same text psycopg would make of it, the settings fingerprint
taken only after a reload yet always what a full fingerprint gives, the server log's file named
once, and one generic plan that reads what a plan for each tick's values reads."""

from __future__ import annotations

import psycopg
from psycopg.adapt import Transformer
from psycopg.conninfo import make_conninfo
from psycopg._queries import PostgresQuery

from pgio_tui.sampler import Sampler
from pgio_tui.sources import pgfeatures
from pgio_tui.sources.postgres import PLAN_CACHE_MODE, PostgresSource, positional
from pgio_tui.sources.statements_sql import _pgss_from, statements_sql
from pgio_tui.sources.statements import NONE, ROWS, SUMS


def _full_md5(conn, names) -> str:
    values = ", ".join(f"current_setting('{s}', true)" for s in names)
    return conn.execute(f"SELECT md5(concat_ws(',', {values}))").fetchone()[0]


def test_placeholders_are_psycopgs_own(pg_cluster):
    """positional() gives the bytes and the parameter order psycopg's own conversion gives, for the
    tick statement of this server (with and without the pg_stat_statements part)."""
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        sql = sampler.pg._sql
        raw, names = positional(sql)
        params = {n: None for n in names}
        q = PostgresQuery(Transformer(sampler.pg.conn))
        q.convert(sql, params)
        assert raw == q.query
        assert len(set(names)) == len(names) and "conf_t" in names and "recent_s" in names
        assert positional("SELECT %(a)s, %(b)s, %(a)s, 5 %% 2") == (b"SELECT $1, $2, $1, 5 % 2", ("a", "b"))
    finally:
        sampler.close()


def test_settings_fingerprint_is_a_full_one_every_tick_and_taken_after_a_reload_only(make_cluster):
    """A cluster of its own (its settings change), with the server log read through SQL: the log
    file is named once in the statement and its new lines still arrive."""
    cluster = make_cluster(logging_collector="on", log_min_messages="info")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    admin = cluster.connect()
    pg = sampler.pg
    try:
        assert pg.features.logfile and pg._sql.count("pg_current_logfile()") == 1
        first = pg.sample()
        conf_t = pg._conf_t
        assert conf_t is not None and first["settings_md5"] == _full_md5(pg.conn, pg.features.settings)
        for _ in range(3):  # no reload: the statement does not fingerprint, the sample still says it
            raw = pg.sample()
            assert raw["settings_md5"] == first["settings_md5"] and pg._conf_t == conf_t
            assert "conf_t" not in raw
        assert pg.conn.execute("SELECT pg_conf_load_time()::text").fetchone()[0] == conf_t
        admin.execute("ALTER SYSTEM SET bgwriter_delay = '70ms'")
        admin.execute("SELECT pg_reload_conf()")
        changed, lines = None, []
        for _ in range(50):  # the backend re-reads the files when it next takes a command
            raw = pg.sample()
            lines += raw["log_lines"]
            if raw["settings_md5"] != first["settings_md5"]:
                changed = raw
                break
            admin.execute("SELECT pg_sleep(0.05)")
        assert changed is not None, "the reload was not seen"
        assert pg._conf_t != conf_t
        assert changed["settings_md5"] == _full_md5(pg.conn, pg.features.settings)
        for _ in range(50):  # the postmaster logs the reload: the tail still reads the file
            if any("bgwriter_delay" in ln for ln in lines):
                break
            admin.execute("SELECT pg_sleep(0.05)")
            lines += pg.sample()["log_lines"]
        assert any("bgwriter_delay" in ln for ln in lines), lines
    finally:
        admin.close()
        sampler.close()


def test_a_new_session_is_fingerprinted_anew(pg_cluster):
    """Settings a new session gets (ALTER ROLE ... SET) come with no reload: a reconnect must not
    take the last session's fingerprint for its own."""
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        sampler.pg.sample()
        assert sampler.pg._conf_t is not None
        sampler.pg.open()  # what a reconnect does
        assert sampler.pg._conf_t is None and sampler.pg._settings_md5 is None
        raw = sampler.pg.sample()
        assert raw["settings_md5"] == _full_md5(sampler.pg.conn, sampler.pg.features.settings)
    finally:
        sampler.close()


def _source(conninfo: str, plan_cache_mode: str | None = None) -> PostgresSource:
    """A PostgresSource as the sampler opens it, or on a connection made as connect() makes it
    but with another plan_cache_mode."""
    src = PostgresSource(conninfo)
    if plan_cache_mode is None:
        src.open()
        return src
    conn = psycopg.connect(conninfo, autocommit=True, application_name="pgio-tui", client_encoding="utf8",
                           options=f"-c plan_cache_mode={plan_cache_mode}")
    conn.prepare_threshold = 0
    src.open(conn)
    return src


def _tick_plans(src: PostgresSource) -> tuple[int, int]:
    """(generic, custom) plans made so far for this connection's tick statement (14+)."""
    return src.conn.execute("SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements "
                            "WHERE statement LIKE '%%pgio-tui tick%%'").fetchone()


def test_the_tick_is_planned_once_and_reads_what_a_plan_for_its_values_reads(make_cluster):
    """The tick statement runs on one generic plan (PLAN_CACHE_MODE), not on a plan made afresh
    for each tick's values (PostgreSQL's default here, 0.7 ms of server CPU a tick): both read the
    same pg_stat_statements rows and sums, new, changed and vanished entries alike."""
    cluster = make_cluster()  # its own: nothing else changes pg_stat_statements during the test
    work = cluster.connect()
    work.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    for i in range(40):
        work.execute(f"SELECT {', '.join(['1'] * (i + 1))}")
    generic, custom = _source(cluster.conninfo()), _source(cluster.conninfo(), "auto")
    try:
        work.execute("SELECT 'changed'")  # new entries for the filtered read
        work.execute("SELECT 1, 2, 3")  # an entry whose calls changed
        for kind in (NONE, SUMS, SUMS, NONE):  # each: its classification of the entries, the other's
            for src in (generic, custom):      # own statements (query ids) left out as well
                src.sample(kind)
        rows = generic.sample(ROWS)["pgss_rows"]  # every entry: nothing known
        entries = [r for r in rows if r[0] is not None and r[4] is not None]
        assert len(entries) >= 40
        known = {"pq": [], "pu": [], "pd": [], "pt": [], "pc": []}
        for r in entries[5:]:  # the first five: new to the reader
            for k, v in zip(("pq", "pu", "pd", "pt", "pc"), r[:4] + [r[4] - (1 if r is entries[5] else 0)]):
                known[k].append(v)
        for k, v in zip(("pq", "pu", "pd", "pt", "pc"), (123456789, entries[0][1], entries[0][2], True, 3)):
            known[k].append(v)  # an entry gone from the view
        for _ in range(2):  # known's parameter types are new: a new tick statement (and query id) at first
            a = generic.sample(ROWS | SUMS, known=known)
            b = custom.sample(ROWS | SUMS, known=known)
        # 13 has no query ids: the observers' own statements are known by their text (once classified)
        ours = {q for (q,) in work.execute("SELECT queryid FROM pg_stat_statements WHERE query LIKE '%/* pgio-tui%'")}
        rows_a, rows_b = ([repr(r) for r in x["pgss_rows"] if r[0] not in ours] for x in (a, b))
        assert len(rows_a) == 7  # 5 new, 1 changed, 1 vanished
        assert sorted(rows_a) == sorted(rows_b)
        if not ours - set(generic.own_queryids):  # 14+: ours are left out of the sums by their query ids
            assert a["pgss"] == b["pgss"] and a["pgss"]["entries"] >= 40
        if generic.features.major >= 14:  # pg_prepared_statements counts plans from 14 on
            assert _tick_plans(generic)[1] == 0 and _tick_plans(generic)[0] >= 5
            assert _tick_plans(custom)[1] >= 5
    finally:
        generic.close()
        custom.close()
        work.close()


def test_entries_left_out_by_a_hash_join_are_those_any_of_the_list_leaves_out(make_cluster):
    """The skip list is joined (statements_sql.SKIP_JOIN: a generic plan compares `= ANY` of a
    parameter with the whole list, entry by entry): the sums, the count and the rows read are
    those of `queryid = ANY(list)`, for a role that sees every query id and for one that sees
    other roles' entries with a NULL queryid, with an empty list, a list with repeats, a long one."""
    cluster = make_cluster()
    admin = cluster.connect(autocommit=True)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    for i in range(60):
        admin.execute(f"SELECT {', '.join(['1'] * (i + 1))}")
    admin.execute("CREATE ROLE lowly LOGIN")
    admin.execute("ALTER ROLE lowly SET pg_stat_statements.track = 'none'")  # the comparison changes nothing
    admin.execute("SET pg_stat_statements.track = 'none'")
    f = pgfeatures.detect(admin)
    ids = [q for (q,) in admin.execute("SELECT queryid FROM pg_stat_statements ORDER BY queryid")]
    top = " AND toplevel" if "toplevel" in f.pgss_cols else ""
    total = "total_exec_time" if "total_exec_time" in f.pgss_cols else "total_time"
    shown = f"queryid IS NOT NULL AND queryid <> ALL(%(skip_queryids)s::bigint[]){top}"
    by_any = (f"SELECT (sum(calls) FILTER (WHERE {shown}))::float8, (sum({total}) FILTER (WHERE {shown}))::float8, "
              f"count(*) FILTER (WHERE NOT queryid = ANY(%(skip_queryids)s::int8[])), "
              f"(SELECT array_agg(queryid ORDER BY queryid) FROM {f.pgss_schema}.pg_stat_statements(false) "
              f"WHERE NOT queryid = ANY(%(skip_queryids)s::int8[])) FROM {f.pgss_schema}.pg_stat_statements(false)")
    by_join = (f"SELECT x.calls, x.total_ms, x.entries, (SELECT array_agg(queryid ORDER BY queryid) "
               f"{_pgss_from(f)}) FROM ({statements_sql(f)}) x")
    lowly = psycopg.connect(make_conninfo(cluster.conninfo(), user="lowly"), autocommit=True)
    try:
        assert lowly.execute("SELECT count(*) FROM pg_stat_statements WHERE queryid IS NULL").fetchone()[0] >= 60
        for conn in (admin, lowly):
            conn.execute(f"SET plan_cache_mode = {PLAN_CACHE_MODE}")
            for skip in ([], ids[:3] + ids[:2], ids[10:50], [123, 456]):
                for _ in range(6):  # past the custom plans of the first executions, whatever the mode
                    want = conn.execute(by_any, {"skip_queryids": skip}, prepare=True).fetchone()
                    got = conn.execute(by_join, {"skip_queryids": skip}, prepare=True).fetchone()
                    assert got == want, (conn.info.user, len(skip))
    finally:
        lowly.close()
        admin.close()
