"""Backend counters published in bursts become a steady rate with the same total.

PostgreSQL < 17 publishes buffers_backend in lumps every few seconds, and 16+'s pg_stat_io and
every version's pg_stat_database are flushed by backends at most about once a second. Sampled
every 0.25 s under a steady pgbench load that makes backends write, the recorded writes.backend
must be steady (no run of zeros between spikes) and integrate to the views' own delta.
"""

from __future__ import annotations

import subprocess

import pytest
from view_counters import raw_writes, settled_writes

from pgio_tui import metrics as M
from pgio_tui.publication import Spreader
from pgio_tui.sampler import Sampler
from pgio_tui.workloads.pg_binaries import find_client


def test_spreader_pays_a_burst_over_the_ticks_it_took_and_keeps_the_total():
    s = Spreader()
    published = [0, 0, 0, 0, 800, 0, 0, 0, 800, 0, 0, 0, 0, 0, 0, 0]
    paid = [s.delta("c", d, tick, 0.25) for tick, d in enumerate(published, start=1)]
    assert paid[:4] == [0, 0, 0, 0]
    # 800 over the 5 ticks it took; then the 160 left and 800 more over the cadence (5 ticks)
    assert paid[4:13] == pytest.approx([160] * 4 + [192] * 5)
    assert sum(paid) == pytest.approx(sum(published))
    assert all(p == int(p) for p in paid)  # whole buffers per tick: what the recording stores
    odd = Spreader()
    shares = [odd.delta("o", d, t, 1.0) for t, d in enumerate([0, 0, 7, 0, 0, 0, 0], start=1)]
    assert sum(shares) == 7 and all(s == int(s) for s in shares)
    assert s.delta("c", -5, 17, 0.25) is None  # a reset: unknown, and the state is forgotten
    assert s.delta("c", 10, 18, 0.25) == 10
    quiet = Spreader()  # after a silence longer than MAX_SPREAD_S: shown at once
    assert [quiet.delta("d", d, t, 1.0) for t, d in enumerate([0] * 30 + [50], start=1)][-1] == 50


@pytest.mark.slow
@pytest.mark.matrix
def test_backend_writes_are_steady_and_total_unchanged(make_cluster):
    cluster = make_cluster(shared_buffers="16MB", bgwriter_lru_maxpages="0", checkpoint_timeout="1h")
    pgbench = str(find_client("pgbench"))
    subprocess.run([pgbench, "-i", "-s", "10", "-q", cluster.conninfo()], check=True, capture_output=True)
    with cluster.connect() as conn:
        conn.execute("CHECKPOINT")
    sampler = Sampler(cluster.conninfo(), interval=0.25)
    sampler.open()
    # One watching connection, opened while every buffer is clean: a connection opened after the load
    # evicts dirty buffers while it starts, and those writes (~30) would be outside the sampled window.
    with cluster.connect() as watch:
        before = settled_writes(watch)[M.WRITES_BACKEND]
        frames, load = [], None
        for frame in sampler.frames(duration=30.0):
            frames.append(frame)
            if frame.tick == 2:
                load = subprocess.Popen([pgbench, "-c", "4", "-j", "2", "-T", "12", cluster.conninfo()],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        load.wait(timeout=30)
        after = raw_writes(watch)[M.WRITES_BACKEND]
    sampler.close()
    series = [f.values.get("writes.backend") or 0 for f in frames if f.dt]
    paid = sum((f.values.get("writes.backend") or 0) * f.dt for f in frames if f.dt)
    assert after - before > 2000, "the load made too few backend writes to judge"
    assert paid == pytest.approx(after - before, rel=0.005, abs=2)
    # During the load (after the first publication, before pgbench stops): no run of zeros.
    first = next(i for i, v in enumerate(series) if v > 0)
    during = series[first:first + 30]
    zeros = sum(1 for v in during if v == 0)
    assert zeros <= 3, during  # sampled as published it reads 0, 0, 0, burst, 0, 0, 0, burst
    # A burst is paid over the longest of the last few gaps (publication.py): one published later
    # than all of them, as on a loaded machine, leaves a tick or two at zero before it. What the
    # unspread counter shows is a run of three zeros every publication.
    assert not any(a == b == c == 0 for a, b, c in zip(during, during[1:], during[2:])), during
