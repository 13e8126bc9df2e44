"""The pgio-style workload against real PostgreSQL: setup layout, RIOPS over the true run time,
per-tick reads, immediate stop, deadlocks, and the one-line hints."""

from __future__ import annotations

import time
import uuid

import pytest

from pgio_tui import cli
from pgio_tui.sampler import Sampler
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.pgio import PgioWorkload
from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale


def test_scale_like_pgio():
    assert parse_scale("64M") == 8192 and parse_scale("1G") == 131072 and parse_scale("1T") == 2**27
    assert parse_scale("8192") == 8192 and parse_scale(2048) == 2048
    for bad in ("1000", "4M", "64K", "lots"):
        with pytest.raises(WorkloadError):
            parse_scale(bad)


def test_config_checks():
    for pct in (0, 1, 50, 100):
        PgioConfig(update_pct=pct).check()
    for pct in (-1, 51, 99, 101):
        with pytest.raises(WorkloadError, match="0, 1-50 or 100"):
            PgioConfig(update_pct=pct).check()
    with pytest.raises(WorkloadError):
        PgioConfig(scale=1024, work_unit=1024).check()


def _setup(conninfo: str, scale: int = 8192, schemas: int = 1) -> None:
    w = PgioWorkload(conninfo, PgioConfig(scale=scale, schemas=schemas, run_time=0.3, setup=True))
    w.start()
    assert w.wait(180) and w.error is None, w.output_tail(5)


def _db_reads(cluster) -> int:
    with cluster.connect() as conn:
        return conn.execute("SELECT blks_read FROM pg_stat_database WHERE datname = current_database()").fetchone()[0]


def _pgio_backends(cluster) -> int:
    with cluster.connect() as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pgio%'").fetchone()[0]


@pytest.mark.slow
def test_setup_64mb_and_riops_over_true_run_time(make_cluster):
    c = make_cluster(shared_buffers="16MB")  # far below the table: most reads miss
    conninfo = c.conninfo()
    _setup(conninfo, parse_scale("64M"))
    with c.connect() as conn:  # one row per block, as pgio lays it out
        blocks = conn.execute("SELECT pg_relation_size('pgio1') / 8192").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM pgio1").fetchone()[0]
    assert blocks == rows == 8192
    w = PgioWorkload(conninfo, PgioConfig(scale=8192, sessions=2, run_time=10, setup=False))
    sampler = Sampler(conninfo)
    sampler.open()
    sampler.tick_sources.append(w)
    before = _db_reads(c)
    t_start = time.monotonic()
    w.start()
    per_tick_reads = statements = 0.0
    try:
        for frame in sampler.frames(duration=60):
            per_tick_reads += (frame.values.get("pgio.reads_s") or 0) * (frame.dt or 0)
            statements += frame.values.get("latency.txns") or 0
            if w.done:
                break
    finally:
        sampler.close()
    wall = time.monotonic() - t_start
    after = _db_reads(c)
    s = w.summary
    assert w.error is None and not s["stopped"]
    assert 10.0 <= s["run_s"] < 10.5 and s["run_s"] < wall  # the clock ran from release to the last session
    independent = after - before  # the test's own snapshots, around everything
    err = abs(s["riops"] * s["run_s"] - independent) / independent
    print(f"RIOPS {s['riops']:.0f} over {s['run_s']:.3f} s; blks_read delta {independent} "
          f"-> {independent / s['run_s']:.0f}/s ({err:.3%}); pgio's own reads {s['pgio_reads']}, per tick "
          f"{per_tick_reads:.0f}")
    assert err < 0.01
    assert s["riops"] == pytest.approx(s["blks_read"] / s["run_s"], rel=1e-4)  # run_s is rounded to ms
    assert per_tick_reads == pytest.approx(s["pgio_reads"], rel=0.001)  # every slice counted in a tick
    assert statements == s["selects"] + s["updates"] and s["updates"] == 0
    assert s["pgio_reads"] == pytest.approx(s["blks_read"], rel=0.05)  # the database's reads are pgio's
    assert s["latency"]["count"] == statements and s["latency"]["p99_ms"] >= s["latency"]["p50_ms"] > 0
    assert _pgio_backends(c) == 0


def test_stop_takes_effect_at_once(make_cluster):
    c = make_cluster(shared_buffers="16MB")
    conninfo = c.conninfo()
    _setup(conninfo, 2048)
    w = PgioWorkload(conninfo, PgioConfig(scale=2048, sessions=2, run_time=60, setup=False, slice_s=5))
    w.start()
    deadline = time.monotonic() + 30
    while w.phase != "run":
        assert time.monotonic() < deadline and not w.finished, w.output_tail(5)
        time.sleep(0.05)
    time.sleep(1.5)
    t0 = time.monotonic()
    w.stop()  # slices of 5 s: only cancelling them ends the run at once
    assert w.wait(10)
    assert w.run_s < 2.5 and time.monotonic() - t0 < 3
    assert w.error is None and w.summary["stopped"] and w.summary["riops"] > 0
    assert sum(s["cancelled"] for s in w.summary["sessions"]) >= 1
    assert _pgio_backends(c) == 0


def test_deadlocks_are_counted_and_the_run_goes_on(make_cluster):
    c = make_cluster(deadlock_timeout="50ms")
    conninfo = c.conninfo()
    _setup(conninfo, 1024)
    w = PgioWorkload(conninfo, PgioConfig(scale=1024, sessions=4, run_time=4, update_pct=50, work_unit=16,
                                          update_work_unit=64, setup=False))
    w.start()
    assert w.wait(60)
    s = w.summary
    assert w.error is None, w.error
    print(f"deadlocks {s['deadlocks']} (server: {s['db_deadlocks']}), updates {s['updates']} selects {s['selects']}")
    assert s["deadlocks"] == sum(x["deadlocks"] for x in s["sessions"]) == s["db_deadlocks"]
    assert s["deadlocks"] > 0
    assert 0.4 < s["updates"] / (s["updates"] + s["selects"]) < 0.6  # 50 per window of 100


def test_run_without_setup_gives_a_one_line_hint(pg_cluster, capsys):
    db = f"pgio_{uuid.uuid4().hex[:8]}"
    with pg_cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {db}")
    rc = cli.main(["bench", "pgio", "-h", str(pg_cluster.sockdir), "-p", str(pg_cluster.port), "-U", "postgres",
                   "-d", db, "--no-setup", "--headless", "--run-time", "5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert err[-1] == (f"pgio-tui: pgio: no pgio table pgio1 (or its index) in database {db}: run with --setup "
                       "first (pgio-tui bench pgio --setup --scale 8192 --schemas 1)")


def test_stop_during_setup(make_cluster):
    c = make_cluster()
    w = PgioWorkload(c.conninfo(), PgioConfig(scale=parse_scale("512M"), run_time=5, setup=True))
    w.start()
    deadline = time.monotonic() + 60
    while not any("Base table" in line for line in w.output_tail(10)):
        assert time.monotonic() < deadline and not w.finished, w.output_tail(5)
        time.sleep(0.05)
    time.sleep(0.3)  # loading pgio1 now
    t0 = time.monotonic()
    w.stop()
    assert w.wait(10) and time.monotonic() - t0 < 5
    assert w.exit_code == 130 and w.error is None and w.summary is None
    assert "run --setup again" in w.output_tail(3)[-1]
    assert _pgio_backends(c) == 0


def test_an_older_function_without_tuples_is_replaced(make_cluster):
    """A database that ran an older pgio-tui holds pgio_tui_slice without its `tuples` column, which
    CREATE OR REPLACE cannot change: it is dropped and made again, and the run counts the rows."""
    import re
    cluster = make_cluster()
    conninfo = cluster.conninfo()
    _setup(conninfo, scale=2048)
    with cluster.connect(autocommit=True) as conn:  # the setup made the current one: the older one's shape instead
        conn.execute("DROP FUNCTION pgio_tui_slice(regclass, oid[], int, double precision, bigint, int, int)")
        conn.execute("CREATE FUNCTION pgio_tui_slice(regclass, oid[], int, double precision, bigint, int, int, "
                     "OUT selects int, OUT updates int, OUT select_us int[], OUT update_us int[], "
                     "OUT blks_fetched bigint, OUT blks_hit bigint) LANGUAGE sql "
                     "AS 'SELECT 0, 0, ''{}''::int[], ''{}''::int[], 0::bigint, 0::bigint'")
        assert conn.execute("SELECT proargnames FROM pg_proc WHERE proname = 'pgio_tui_slice'").fetchone()[0][-1] \
            == "blks_hit"
    w = PgioWorkload(conninfo, PgioConfig(scale=2048, run_time=1, setup=False))
    w.start()
    assert w.wait(60) and w.error is None, w.output_tail(5)
    assert w.summary["pgio_tuples"] == w.summary["selects"] * 256 + w.summary["updates"] * 9 > 0
    with cluster.connect(autocommit=True) as conn:
        names = conn.execute("SELECT proargnames FROM pg_proc WHERE proname = 'pgio_tui_slice'").fetchall()
    assert len(names) == 1 and names[0][0][-1] == "tuples"
    assert re.search(r"rows fetched by pgio statements/s \d+", "\n".join(w.report_lines()))
