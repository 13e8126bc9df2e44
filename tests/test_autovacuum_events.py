"""Autovacuum in a recording, in the server's own words (issue 27: "an autovacuum (anti-wraparound said
so)"): the tick reads an autovacuum worker's query, which PostgreSQL writes ("autovacuum: VACUUM
public.t (to prevent wraparound)"; no user's query is read), and tells each once as an `autovacuum`
event; the findings name the tables and say anti-wraparound. Planted for real: autovacuum_freeze_max_age
at its least (100,000) and 110,000 transactions burnt, then a paced table that takes seconds."""

from __future__ import annotations

import threading
import time

from pgio_tui.analysis.align import window
from pgio_tui.analysis.findings import Scope, vacuumed
from pgio_tui.sampler import Sampler
from pgio_tui.sources.backends import AUTOVACUUM, ROW, BackendTracker
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder

BURN = """CREATE PROCEDURE burn(n int) LANGUAGE plpgsql AS $$
BEGIN FOR i IN 1..n LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$"""


def test_an_anti_wraparound_autovacuum_is_recorded_and_named(make_cluster, tmp_path):
    cluster = make_cluster(autovacuum_freeze_max_age="100000", autovacuum_naptime="1s", autovacuum="on")
    conn = cluster.connect(autocommit=True)
    conn.execute("CREATE TABLE paced (a int, b text) WITH (autovacuum_vacuum_cost_delay = 100, "
                 "autovacuum_vacuum_cost_limit = 1)")
    conn.execute("INSERT INTO paced SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g")  # ~300 pages
    conn.execute(BURN.replace("pg_current_xact_id()", "txid_current()")
                 if conn.execute("SELECT to_regproc('pg_current_xact_id') IS NULL").fetchone()[0] else BURN)
    conn.execute("SET synchronous_commit = off")
    path = tmp_path / "av.pgio"
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    burner = threading.Thread(target=conn.execute, args=("CALL burn(110000)",))
    told: list[str] = []
    try:
        with Recorder(path, meta=sampler.meta()) as rec:
            burner.start()
            t0 = time.monotonic()
            for k in range(240):  # at most 2 minutes
                time.sleep(max(0.0, t0 + k * 0.5 - time.monotonic()))
                frame = sampler.sample(k, k * 0.5)
                rec.write(frame)
                told += [e.text for e in frame.events if e.kind == "autovacuum"]
                if any("public.paced" in t and "wraparound" in t for t in told) and not burner.is_alive():
                    break
    finally:
        burner.join(120)
        sampler.close()
    assert any(t.startswith("autovacuum: VACUUM") and "public.paced" in t and t.endswith("(to prevent wraparound)")
               for t in told), told
    assert all(t.startswith("autovacuum: ") for t in told)  # the server's words, nothing else of pg_stat_activity
    with Recording(path) as r:
        stored = [e.event.text for e in r.events(["autovacuum"])]
        assert stored == told  # recorded as the sampler told them
        said = vacuumed(Scope(r, window(r, "start")))
    assert said.startswith(" (anti-wraparound: ") and "public.paced" in said, said  # the user's table first


def test_a_worker_is_told_once_while_it_runs_and_again_after_a_reset():
    """Told once per worker and query; after a reconnect or restart (reset) a worker listed with the
    same pid and text is a new one, told again."""
    row: list = [None] * len(ROW)
    row[0], row[1] = 4242, "autovacuum worker"
    row[AUTOVACUUM] = "autovacuum: VACUUM public.t (to prevent wraparound)"
    t = BackendTracker()
    assert t.vacuums([row]) == ["autovacuum: VACUUM public.t (to prevent wraparound)"]
    assert t.vacuums([row]) == []
    t.reset()
    assert t.vacuums([row]) == ["autovacuum: VACUUM public.t (to prevent wraparound)"]


def test_the_tables_vacuumed_are_named_before_the_ones_only_analyzed():
    """A finding names three tables at most: the users' tables a worker VACUUMed (they write) come before
    the ones it only ANALYZEd (a read of a sample) and the system catalogs, whatever order they began in
    (the planted slow-device run began pgbench's ANALYZEs before its own table's VACUUM)."""
    from pgio_tui.analysis.findings import _user_first
    from pgio_tui.sources.backends import AUTOVACUUM_QUERY
    told = ["autovacuum: ANALYZE public.pgbench_history", "autovacuum: VACUUM pg_catalog.pg_class",
            "autovacuum: VACUUM ANALYZE public.av", "autovacuum: ANALYZE public.pgbench_tellers",
            "autovacuum: BRIN summarize public.b", "autovacuum: VACUUM public.pgbench_history",
            "autovacuum: VACUUM public.av (to prevent wraparound)"]
    begun = [(m.group(2), m.group(1)) for t in told if (m := AUTOVACUUM_QUERY.match(t))]
    assert _user_first(begun) == ["public.pgbench_history", "public.av", "public.pgbench_tellers", "public.b",
                                  "pg_catalog.pg_class"]
    assert _user_first(begun[:4]) == ["public.av", "public.pgbench_history", "public.pgbench_tellers",
                                      "pg_catalog.pg_class"]
