"""The tick statement as sent: the same text psycopg would make of it, the settings fingerprint
taken only after a reload yet always what a full fingerprint gives, and the server log's file
named once."""

from __future__ import annotations

from psycopg.adapt import Transformer
from psycopg._queries import PostgresQuery

from pgio_tui.sampler import Sampler
from pgio_tui.sources.postgres import positional


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
