"""buffers.evictions_s (pg_stat_io, 16+) against the view's own delta read independently over the
same window: shared buffers evicted by every process, summed over backend types and contexts."""

from __future__ import annotations

import pytest
from view_counters import settled

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler


def _evictions(conn) -> float | None:
    if not conn.execute("SELECT to_regclass('pg_catalog.pg_stat_io') IS NOT NULL").fetchone()[0]:
        return None
    return float(conn.execute("SELECT sum(evictions) FROM pg_stat_io WHERE object = 'relation'").fetchone()[0])


@pytest.mark.matrix
def test_evictions_equal_the_views_delta(make_cluster):
    # 16 shared buffers: a table of a few hundred pages evicts on every pass
    cluster = make_cluster(autovacuum="off", shared_buffers="128kB")
    probe = cluster.connect()
    probe.execute("CREATE TABLE e (id int PRIMARY KEY, pad text)")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        for attempt in range(3):  # a background process publishing mid-window: take another window
            before = settled(lambda: _evictions(probe), "evictions")
            sampler.sample(0, 0.0)
            if _evictions(probe) != before:
                continue
            with cluster.connect() as work:
                work.execute("INSERT INTO e SELECT g, repeat('x', 200) FROM generate_series(%s::int, %s::int) g",
                             (attempt * 20000, attempt * 20000 + 19999))
                work.execute("SELECT count(*) FROM e WHERE id % 7 = 0 AND pad <> ''")
            after = settled(lambda: _evictions(probe), "evictions")
            sampler._final = True  # the window's last tick: pay out every burst (publication.py)
            frame = sampler.sample(1, 1.0)
            if _evictions(probe) == after:
                break
        else:
            pytest.fail("the server never stayed quiet around a tick")
    finally:
        sampler.close()
        probe.close()
    got = frame.values[M.BUFFERS_EVICTIONS_S]
    if before is None:  # before 16: no pg_stat_io, unknown rather than 0
        assert got is None
        return
    assert after - before > 100  # the workload really evicted
    assert got * frame.dt == pytest.approx(after - before, rel=1e-9)
    # the same view, by backend type (the io rows): the same total
    assert sum(row["evictions"] or 0 for row in frame.sources.values()) * frame.dt == pytest.approx(after - before,
                                                                                                  rel=1e-9)
