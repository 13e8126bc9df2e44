"""Truth: the pgio workload's own figures against pg_statio_all_tables / pg_stat_all_tables of its table and index.

`bench pgio` builds its table (once, apart), then a recorded run reads (and updates) it on a server
whose shared buffers hold a fraction of it. The run's pgio.reads_s and pgio.hits_s, rate x dt
summed over the recording, against the delta of heap_blks_read + idx_blks_read (hits: _hit) of the
workload's table and its indexes; pgio.tuples_s (rows its statements fetched) against the delta of
pg_stat_all_tables.idx_tup_fetch of its table (bitmap and index scans: the only way pgio reads it),
each read here once the statistics settled before and after the run (nothing else touches that table).
The rows are also the count pgio's statements ask for: every SELECT WORK_UNIT + 1 keys, every UPDATE
UPDATE_WORK_UNIT + 1 (BETWEEN k AND k + width, every key present), from the run's own summary.

Tolerance: the recording's precision, half a unit per tick (a rate is kept to one event per nominal
interval) plus the stored dt's 1 ms, and 0.5 % (the workload counts per slice in its own
sessions' transactions; the view counts the same once its backends publish).
"""

from __future__ import annotations

import pytest
from view_counters import settled

from pgio_tui import cli
from pgio_tui import metrics as M
from pgio_tui.store.reader import Recording

# metric -> reference kind (metrics.REFERENCE_KINDS): pg_statio_all_tables / pg_stat_all_tables, read by hand
CHECKS = {M.PGIO_READS_S: "view", M.PGIO_HITS_S: "view", M.PGIO_TUPLES_S: "view"}
WORK_UNIT, UPDATE_WORK_UNIT = 255, 8  # bench pgio's defaults (pgio.conf's)


def _counters(conn) -> tuple[float, float, float]:
    r, h = conn.execute("SELECT sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)), "
                        "sum(coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0)) FROM pg_statio_all_tables "
                        "WHERE relname LIKE 'pgio%'").fetchone()
    (t,) = conn.execute("SELECT sum(coalesce(idx_tup_fetch, 0)) FROM pg_stat_all_tables "
                        "WHERE relname LIKE 'pgio%'").fetchone()
    return float(r or 0), float(h or 0), float(t or 0)


@pytest.mark.matrix
def test_pgio_figures_equal_the_tables_statistics(make_cluster, tmp_path, capsys):
    cluster = make_cluster(shared_buffers="16MB", autovacuum="off")
    conn_args = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]
    assert cli.main(["bench", "pgio", *conn_args, "--headless", "--scale", "32M", "--run-time", "1"]) == 0
    probe = cluster.connect(autocommit=True)
    before = settled(lambda: _counters(probe), "the table's statistics")
    path = tmp_path / "pgio.pgio"
    assert cli.main(["bench", "pgio", *conn_args, "--headless", "--no-setup", "--scale", "32M", "--run-time", "5",
                     "--update-pct", "10", "--work-unit", str(WORK_UNIT), "--update-work-unit", str(UPDATE_WORK_UNIT),
                     "--record", str(path)]) == 0
    after = settled(lambda: _counters(probe), "the table's statistics")
    metrics = (M.PGIO_READS_S, M.PGIO_HITS_S, M.PGIO_TUPLES_S)
    sums, err = dict.fromkeys(metrics, 0.0), dict.fromkeys(metrics, 0.0)
    with Recording(path) as rec:
        interval = float(rec.meta["interval_s"])
        for frame in rec.frames():
            for m in sums:
                v = frame.values.get(m)
                if v is not None and frame.dt:
                    sums[m] += v * frame.dt
                    err[m] += 0.5 * frame.dt / interval + v * 0.0005
        summary = rec.workloads()[0]["summary"]
    lines = []
    for i, m in enumerate(metrics):
        ref = after[i] - before[i]
        lines.append(f"{m}: recorded {sums[m]:,.1f}, view {ref:,.0f} (tolerance {err[m] + 0.005 * ref:,.1f})")
        assert abs(sums[m] - ref) <= err[m] + 0.005 * ref, lines[-1]
    assert after[0] - before[0] > 100, "the run read nothing from the kernel"
    asked = summary["selects"] * (WORK_UNIT + 1) + summary["updates"] * (UPDATE_WORK_UNIT + 1)
    lines.append(f"rows asked for {asked:,} ({summary['selects']} selects, {summary['updates']} updates), "
                 f"the sessions' count {summary['pgio_tuples']:,}")
    assert summary["updates"] > 0 and summary["pgio_tuples"] == asked, lines[-1]
    with capsys.disabled():
        print("\n" + "; ".join(lines))
