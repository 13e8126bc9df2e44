"""Truth: the observer's clock figures against clocks read here and pg_stat_statements.

- observer.collect_ms against the wall time of the sample() call around it (it can only be less);
- observer.server_ms against pg_stat_statements' execution time of the observer's own tick
  statement over the same ticks, and never more than collect_ms;
- observer.statements_ms: 0 < it <= server_ms on ticks that read pg_stat_statements;
- statements.window_s against the difference of the two reads' tick times (frame.t, the client's
  clock when the server answered);
- observer.late_ms against this test's own clock after a deliberate stall of the consumer.

Tolerances: collect_ms none (a strict bound). server_ms summed within 25 % + 1 ms of
pg_stat_statements' (the statement's clock_timestamp() is taken before its last columns and the
executor's end, which pg_stat_statements counts). window_s 25 ms (each side's tick query time:
the server reads its clock inside the query, the client after the answer). late_ms: 25 ms (the
generator's first call and this test's clock reading are microseconds to milliseconds apart).
"""

from __future__ import annotations

import time

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

# metric -> reference kind (metrics.REFERENCE_KINDS)
CHECKS = dict.fromkeys((M.OBSERVER_COLLECT_MS, M.OBSERVER_SERVER_MS, M.OBSERVER_STATEMENTS_MS,
                        M.STATEMENTS_WINDOW_S, M.OBSERVER_LATE_MS), "clock")


def _own_exec_ms(probe) -> float:
    """pg_stat_statements' execution time of pgio-tui's own statements (marked /* pgio-tui */)."""
    return float(probe.execute("SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements "
                               "WHERE query LIKE '%pgio-tui%' AND query NOT LIKE '%pg_stat_statements WHERE%'"
                               ).fetchone()[0])


@pytest.mark.matrix
def test_observer_times_against_clocks_and_pg_stat_statements(make_cluster, capsys):
    cluster = make_cluster()
    probe = cluster.connect(autocommit=True)
    probe.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    try:
        sampler.sample(0, 0.0)
        pgss0 = _own_exec_ms(probe)
        frames, server_ms = [], 0.0
        for k in range(1, 130):  # more than two statement windows (10 s = 50 ticks of 0.2 s)
            t0 = time.perf_counter()
            frame = sampler.sample(k, k * 0.2)
            wall_ms = (time.perf_counter() - t0) * 1000
            v = frame.values
            assert 0 < v[M.OBSERVER_COLLECT_MS] <= wall_ms, f"tick {k}: collect {v[M.OBSERVER_COLLECT_MS]} > {wall_ms}"
            assert 0 < v[M.OBSERVER_SERVER_MS] <= v[M.OBSERVER_COLLECT_MS]
            server_ms += v[M.OBSERVER_SERVER_MS]
            if v.get(M.OBSERVER_STATEMENTS_MS):
                assert v[M.OBSERVER_STATEMENTS_MS] <= v[M.OBSERVER_SERVER_MS] + 1e-6
            frames.append(frame)
        pgss = _own_exec_ms(probe) - pgss0
        reads = [f for f in frames if f.values.get(M.OBSERVER_STATEMENTS_MS)]
        assert reads, "no tick read pg_stat_statements"
        rows_reads = [i for i, f in enumerate(frames) if f.values.get(M.STATEMENTS_WINDOW_S) is not None]
        assert len(rows_reads) >= 2, f"fewer than two statement windows in {len(frames)} ticks"
        for a, b in zip(rows_reads, rows_reads[1:]):
            want = frames[b].t - frames[a].t
            got = frames[b].values[M.STATEMENTS_WINDOW_S]
            assert abs(got - want) <= 0.025, f"window_s {got} vs the ticks' {want}"
        # the late tick: stall the consumer of frames() for 1.3 intervals of 1 s
        sampler.interval = 1.0
        gen = sampler.frames(duration=4)
        m0 = time.monotonic()
        first = next(gen)
        time.sleep(1.45)
        resumed = time.monotonic()
        late = next(gen)
        want_ms = (resumed - m0 - late.tick * 1.0) * 1000
        gen.close()
    finally:
        sampler.close()
    assert late.tick == first.tick + 1 and want_ms > 300
    assert abs(late.values[M.OBSERVER_LATE_MS] - want_ms) <= 25, f"late {late.values[M.OBSERVER_LATE_MS]} vs {want_ms}"
    assert server_ms == pytest.approx(pgss, rel=0.25, abs=1.0), f"server_ms summed {server_ms} vs pg_stat_statements {pgss}"
    with capsys.disabled():
        print(f"\nserver_ms summed {server_ms:.2f} vs pg_stat_statements {pgss:.2f} over {len(frames)} ticks; "
              f"{len(rows_reads)} statement reads; late {late.values[M.OBSERVER_LATE_MS]:.1f} ms vs {want_ms:.1f}")
