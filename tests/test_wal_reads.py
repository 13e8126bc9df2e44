"""WAL and reads-and-cache figures: against raw view deltas read independently over the same window,
on the view each version has (14-17 pg_stat_wal, 18 pg_stat_io WAL rows, 13 none)."""

from __future__ import annotations

import time

import pytest
from view_counters import quiet_window

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

WAL_FIGURES = (M.WAL_WRITES_S, M.WAL_SYNCS_S, M.WAL_WRITE_TIME_MS_S, M.WAL_SYNC_TIME_MS_S, M.WAL_RECORDS_S,
               M.WAL_FPI_S, M.WAL_BUFFERS_FULL_S)


def _raw_wal(conn, major: int) -> tuple | None:
    """The WAL counters read straight from the view this version has, in WAL_FIGURES order."""
    if major < 14:
        return None
    if major >= 18:  # writes and syncs moved to pg_stat_io; context 'init' (segment zero-fill) never counted
        io = conn.execute("SELECT sum(writes), sum(fsyncs), sum(write_time), sum(fsync_time) FROM pg_stat_io "
                          "WHERE object = 'wal' AND context = 'normal'").fetchone()
    else:
        io = conn.execute("SELECT wal_write, wal_sync, wal_write_time, wal_sync_time FROM pg_stat_wal").fetchone()
    wal = conn.execute("SELECT wal_records, wal_fpi, wal_buffers_full FROM pg_stat_wal").fetchone()
    return tuple(float(v) for v in (*io, *wal))


def _published(conn, major: int, before: tuple | None, timeout: float = 20.0) -> None:
    """Wait (bounded) until the work's own WAL writes show: its backend publishes them as it exits,
    after the client has already gone on."""
    deadline = time.monotonic() + timeout
    while before is not None and time.monotonic() < deadline:
        if _raw_wal(conn, major)[0] - before[0] >= 100:
            return
        time.sleep(0.2)


@pytest.mark.matrix
def test_wal_figures_equal_independent_view_deltas(make_cluster):
    cluster = make_cluster(autovacuum="off")  # nothing else writes WAL meanwhile
    major = cluster.major
    probe = cluster.connect()
    if major >= 14:  # WAL write and sync times (13 has no such setting)
        probe.execute("ALTER SYSTEM SET track_wal_io_timing = on")
        probe.execute("SELECT pg_reload_conf()")
    probe.execute("CREATE TABLE w (id int PRIMARY KEY, pad text)")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        assert sampler.pg.features.io_wal == (major >= 18)

        def work(attempt: int, before) -> None:
            with cluster.connect() as conn:  # commits: WAL writes and flushes by this backend
                for i in range(200):
                    conn.execute("INSERT INTO w VALUES (%s, repeat('x', 500))", (i + 1000 * attempt,))
                conn.execute("CHECKPOINT")
                conn.execute("UPDATE w SET pad = pad || 'y' WHERE id % 10 = 0")  # full-page images
            _published(probe, major, before)

        before, after, frame = quiet_window(sampler, lambda: _raw_wal(probe, major), work, "WAL counters")
    finally:
        sampler.close()
        probe.close()
    v, dt = frame.values, frame.dt
    if major < 14:  # no pg_stat_wal: the WAL rate comes from the insert position only
        assert all(v[m] is None for m in WAL_FIGURES) and v[M.WAL_BYTES_S] > 0
        return
    delta = dict(zip(WAL_FIGURES, (b - a for a, b in zip(before, after))))
    assert delta[M.WAL_WRITES_S] >= 100 and delta[M.WAL_SYNCS_S] >= 100 and delta[M.WAL_FPI_S] > 0
    assert delta[M.WAL_SYNC_TIME_MS_S] > 0  # track_wal_io_timing is on
    for metric, want in delta.items():
        assert v[metric] * dt == pytest.approx(want, rel=1e-9, abs=1e-9), metric


def test_buffer_cache_summary_read_every_ten_seconds_equals_an_independent_read(pg_cluster):
    conn = pg_cluster.connect()
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
    except Exception as exc:  # noqa: BLE001 (a build without contrib)
        pytest.skip(f"pg_buffercache not available: {exc}")
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        if sampler.pg.features.buffercache_summary is None:
            pytest.skip("pg_buffercache_summary() is 16+")
        first = sampler.sample(0, 0.0)
        used = conn.execute("SELECT buffers_used FROM pg_buffercache_summary()").fetchone()[0]
        second = sampler.sample(1, 1.0)
    finally:
        sampler.close()
        conn.close()
    assert first.values[M.BUFFERS_USED] == pytest.approx(used, abs=5)  # our own queries may load a page
    assert 0 <= first.values[M.BUFFERS_DIRTY] <= first.values[M.BUFFERS_USED]
    assert second.values[M.BUFFERS_USED] is None and second.values[M.BUFFERS_DIRTY] is None  # not every tick
