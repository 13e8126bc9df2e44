"""Statement latency without a launched workload (issue 11, item 3), against a real cluster running
an external pgbench: utility statements (BEGIN/END) and pgio-tui's own are left out, the figure is
close to what pg_stat_statements says for the plannable statements, and it is labelled as statement
execution time (`statements.*`), never as transaction latency (`latency.*`)."""

from __future__ import annotations

import os
import subprocess
import threading
import uuid

import pytest

from pgio_tui.analysis import report
from pgio_tui.analysis.align import window
from pgio_tui.analysis.summary import summarize
from pgio_tui.metrics import BY_NAME
from pgio_tui.sampler import Sampler
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.cluster import ClusterError, find_client

PLANNABLE = ("select", "insert", "update", "delete", "with")


def test_statement_metrics_are_their_own():
    for name in ("statements.mean_ms", "statements.stddev_ms", "statements.calls_s"):
        assert name in BY_NAME
    assert "not a transaction" in BY_NAME["statements.mean_ms"].help
    assert "pg_stat_statements" not in BY_NAME["latency.mean_ms"].source  # transactions only
    assert "latency.calls_s" not in BY_NAME


@pytest.mark.slow
def test_external_pgbench_statement_mean(pg_cluster, tmp_path):
    try:
        pgbench = str(find_client("pgbench"))
    except ClusterError as exc:
        pytest.skip(str(exc))
    db = f"pgss_{uuid.uuid4().hex[:8]}"
    with pg_cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {db}")
    with pg_cluster.connect(db) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    env = {**os.environ, "PGHOST": str(pg_cluster.sockdir), "PGPORT": str(pg_cluster.port), "PGUSER": "postgres",
           "PGDATABASE": db}
    subprocess.run([pgbench, "-i", "-s", "1", "-q"], env=env, check=True, capture_output=True)
    with pg_cluster.connect(db) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")

    path = tmp_path / "external.pgio"
    sampler = Sampler(pg_cluster.conninfo(db), interval=0.5)
    sampler.open()
    stop = threading.Event()
    with Recorder(path, meta=sampler.meta()) as rec:
        frames = sampler.frames(stop)
        for _ in range(3):  # baseline ticks before the load
            rec.write(next(frames))
        proc = subprocess.Popen([pgbench, "-c", "2", "-T", "5", "-n"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        values = []
        while proc.poll() is None:
            f = next(frames)
            rec.write(f)
            values.append(f.values)
        for _ in range(3):  # the last statements are in the sums
            f = next(frames)
            rec.write(f)
            values.append(f.values)
        stop.set()
    sampler.close()
    assert proc.returncode == 0

    with pg_cluster.connect(db) as conn:
        rows = conn.execute("SELECT query, calls, total_exec_time FROM pg_stat_statements "
                            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())").fetchall()
    plannable = [(c, t) for q, c, t in rows if q.lstrip().lower().startswith(PLANNABLE) and "pgio-tui" not in q]
    utility = [(c, t) for q, c, t in rows if q.strip().upper() in ("BEGIN", "END")]
    ref_calls = sum(c for c, _ in plannable)
    ref_mean = sum(t for _, t in plannable) / ref_calls
    all_mean = sum(t for _, _, t in rows) / sum(c for _, c, _ in rows)
    assert utility and sum(c for c, _ in utility) > 1000  # BEGIN/END were there to be left out

    got = [(v["statements.calls_s"], v["statements.mean_ms"]) for v in values if v.get("statements.mean_ms")]
    calls = [c * 0.5 for c, _ in got]  # calls_s over 0.5 s ticks (approximately)
    mean = sum(c * m for c, (_, m) in zip(calls, got)) / sum(calls)
    print(f"\nstatement mean: recorded {mean:.4f} ms, pg_stat_statements plannable {ref_mean:.4f} ms "
          f"(all entries incl. BEGIN/END: {all_mean:.4f} ms)")
    assert mean == pytest.approx(ref_mean, rel=0.1)
    assert mean > 1.25 * all_mean  # 5 plannable statements of 7 per transaction: BEGIN/END pulled it down
    assert all(v.get("latency.mean_ms") is None for v in values)  # not a transaction latency

    from pgio_tui.store.reader import Recording
    with Recording(path) as r:
        s = summarize(r, window(r, "auto"))
    assert s.get("latency", "mean") is None and s.value("statements", "mean") == pytest.approx(ref_mean, rel=0.1)
    assert any("not transaction latency" in n for n in s.notes)
    html = report.build([path])
    assert "statement execution time (pg_stat_statements, not transactions)" in html
