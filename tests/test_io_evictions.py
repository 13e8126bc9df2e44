"""buffers.evictions_s (pg_stat_io, 16+) against the view's own delta read independently over the
same window: shared buffers evicted by every process, summed over backend types and contexts."""

from __future__ import annotations

import pytest
from view_counters import quiet_window

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler


def _evictions(conn) -> float | None:
    if not conn.execute("SELECT to_regclass('pg_catalog.pg_stat_io') IS NOT NULL").fetchone()[0]:
        return None
    return float(conn.execute("SELECT sum(evictions) FROM pg_stat_io WHERE object = 'relation'").fetchone()[0])


@pytest.mark.matrix
def test_evictions_equal_the_views_delta(make_cluster):
    # 256 shared buffers, filled by a table of ~300 pages before the sampler starts. Each window then
    # adds ~60 pages: fewer than one pass of the clock, so it evicts the table's own cold pages while
    # the pages every tick reads (used by each tick since the warm-up) stay; a tick that still evicts
    # one spoils the window, and quiet_window takes another.
    cluster = make_cluster(autovacuum="off", shared_buffers="2MB")
    probe = cluster.connect()
    probe.execute("CREATE TABLE e (id int PRIMARY KEY, pad text)")
    probe.execute("INSERT INTO e SELECT g, repeat('x', 200) FROM generate_series(-8000, -1) g")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        for tick in range(5):  # warm-up: the pages every tick reads are in, and hot
            sampler.sample(tick, float(tick))
            _evictions(probe)

        def work(attempt: int, _before) -> None:
            with cluster.connect() as conn:
                conn.execute("INSERT INTO e SELECT g, repeat('x', 200) FROM generate_series(%s::int, %s::int) g",
                             (attempt * 2000, attempt * 2000 + 1999))

        before, after, frame = quiet_window(sampler, lambda: _evictions(probe), work, "evictions")
    finally:
        sampler.close()
        probe.close()
    got = frame.values[M.BUFFERS_EVICTIONS_S]
    if before is None:  # before 16: no pg_stat_io, unknown rather than 0
        assert got is None
        return
    assert after - before > 20  # the workload really evicted
    assert got * frame.dt == pytest.approx(after - before, rel=1e-9)
    # the same view, by backend type (the io rows): the same total
    assert sum(row["evictions"] or 0 for row in frame.sources.values()) * frame.dt == pytest.approx(after - before,
                                                                                                  rel=1e-9)
