"""Truth: a launched workload's tps against the workload's own count, never the server's commit
rate (which includes the observer's own statements: issue 22 item 4).

An experiment of `sql 'SELECT pg_sleep(1)' --times 3`: the reference is computed by hand from the
run's recording, the executions and their elapsed times the sql workload kept (3 executions of
~1 s: ~1 per second, where the server commits several transactions a second for the observer).

Tolerances: the whole-run tps exact (1e-9: the same executions over the same elapsed time, from the
recording); the per-tick series, time-weighted over the run, within 25 % of the executions over the
run's window (the window holds the run's start and end to the tick, 1 s, of a 3 s run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgio_tui import metrics as M
from pgio_tui.experiments.figures import run_figures
from pgio_tui.store.reader import Recording

ROOT = Path(__file__).resolve().parents[2]
# metric -> reference kind (metrics.REFERENCE_KINDS): the sql workload's executions, timed on the
# client's clock (pgbench's own summary and log, the catalog's reference for pgbench, are tests/test_bench_truth.py's)
CHECKS = {M.LATENCY_TPS: "clock", M.LATENCY_TXNS: "clock"}
pytestmark = pytest.mark.matrix  # version-sensitive: scripts/pg-matrix.sh runs it on 13-18
PER_TICK_REL = 0.25


def test_sql_workload_tps_is_its_own_executions(make_cluster, tmp_path):
    cluster = make_cluster()
    out = tmp_path / "exp"
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "experiment", "run", "-d", cluster.conninfo(),
                        "--allow-settings", "--set", "bgwriter_delay=200ms", "--repeat", "1", "--no-discard-first",
                        "--dirty-wait", "0", "-o", str(out), "--quiet", "sql", "SELECT pg_sleep(1)", "--times", "3"],
                       capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    plan = json.loads((out / "experiment.json").read_text())
    path = out / plan["runs"][0]["file"]
    fig = run_figures(path)
    with Recording(path) as rec:
        (w,) = rec.workloads()
        rows = list(rec.rows([M.LATENCY_TPS, M.DB_XACT_S]))
    elapsed_ms = w["summary"]["elapsed_ms"]
    by_hand = len(elapsed_ms) / (sum(elapsed_ms) / 1000)
    assert len(elapsed_ms) == 3 and 0.9 < by_hand <= 1.0
    assert fig.values["tps"] == pytest.approx(by_hand, abs=1e-9)
    # per tick: the workload's count while it ran (0 on ticks where nothing ended), not the commits
    win = fig.window
    # (the workload starts just after the first tick, so where its executions end in the ticks is the
    # phase of the two clocks: the executions counted over the ticks are what is conserved)
    ts = [t for _tick, t, *_ in rows]
    dts = dict(zip(ts[1:], (b - a for a, b in zip(ts, ts[1:]))))
    inside = [(t, tps, xact) for _tick, t, _elapsed, tps, xact in rows if win.origin_t < t <= win.end_t]
    assert inside and all(tps is not None for _, tps, _ in inside)
    counted = sum(tps * dts[t] for _tick, t, _elapsed, tps, _ in rows if tps is not None and t in dts)
    assert counted == pytest.approx(len(elapsed_ms), rel=PER_TICK_REL)  # over the run's file: every tick
    commits = [x for _, _, x in inside if x is not None]
    assert commits and max(commits) > 2 * by_hand  # the server's rate is another figure
