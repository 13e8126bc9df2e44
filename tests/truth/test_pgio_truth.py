"""Truth: the pgio workload's own block figures against pg_statio_all_tables of its table and index.

`bench pgio` builds its table (once, apart), then a recorded run reads (and updates) it on a server
whose shared buffers hold a fraction of it. The run's pgio.reads_s and pgio.hits_s, rate x dt
summed over the recording, against the delta of heap_blks_read + idx_blks_read (hits: _hit) of the
workload's table and its indexes, read here once the statistics settled before and after the run
(nothing else touches that table).

Tolerance: the recording's precision, half a block per tick (a rate is kept to one event per nominal
interval) plus the stored dt's 1 ms, and 0.5 % (the workload counts blocks per slice in its own
sessions' transactions; the view counts the same blocks once its backends publish).
"""

from __future__ import annotations

import pytest
from view_counters import settled

from pgio_tui import cli
from pgio_tui import metrics as M
from pgio_tui.store.reader import Recording

# metric -> reference kind (metrics.REFERENCE_KINDS): pg_statio_all_tables, read by hand
CHECKS = {M.PGIO_READS_S: "view", M.PGIO_HITS_S: "view"}


def _statio(conn) -> tuple[float, float]:
    r, h = conn.execute("SELECT sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)), "
                        "sum(coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0)) FROM pg_statio_all_tables "
                        "WHERE relname LIKE 'pgio%'").fetchone()
    return float(r or 0), float(h or 0)


@pytest.mark.matrix
def test_pgio_blocks_equal_the_tables_statio(make_cluster, tmp_path, capsys):
    cluster = make_cluster(shared_buffers="16MB", autovacuum="off")
    conn_args = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]
    assert cli.main(["bench", "pgio", *conn_args, "--headless", "--scale", "32M", "--run-time", "1"]) == 0
    probe = cluster.connect(autocommit=True)
    before = settled(lambda: _statio(probe), "the table's statio")
    path = tmp_path / "pgio.pgio"
    assert cli.main(["bench", "pgio", *conn_args, "--headless", "--no-setup", "--scale", "32M", "--run-time", "5",
                     "--update-pct", "10", "--record", str(path)]) == 0
    after = settled(lambda: _statio(probe), "the table's statio")
    sums, err = {M.PGIO_READS_S: 0.0, M.PGIO_HITS_S: 0.0}, {M.PGIO_READS_S: 0.0, M.PGIO_HITS_S: 0.0}
    with Recording(path) as rec:
        interval = float(rec.meta["interval_s"])
        for frame in rec.frames():
            for m in sums:
                v = frame.values.get(m)
                if v is not None and frame.dt:
                    sums[m] += v * frame.dt
                    err[m] += 0.5 * frame.dt / interval + v * 0.0005
    lines = []
    for i, m in enumerate((M.PGIO_READS_S, M.PGIO_HITS_S)):
        ref = after[i] - before[i]
        lines.append(f"{m}: recorded {sums[m]:,.1f}, pg_statio {ref:,.0f} (tolerance {err[m] + 0.005 * ref:,.1f})")
        assert abs(sums[m] - ref) <= err[m] + 0.005 * ref, lines[-1]
    assert after[0] - before[0] > 100, "the run read nothing from the kernel"
    with capsys.disabled():
        print("\n" + "; ".join(lines))
