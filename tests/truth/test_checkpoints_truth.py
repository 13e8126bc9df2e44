"""Truth: checkpoint count, kind and duration of a recording against the server's log_checkpoints
lines, one checkpoint still running when the recording ends included.

A 36 s recording with pgbench writing throughout: an explicit CHECKPOINT 3 s in (immediate: it
finishes in the window) resets the checkpointer's timer, so the timed one starts about 30 s later
and, spread over checkpoint_completion_target x checkpoint_timeout (27 s), is still running at the
end. The reference is the server log, parsed here on its own (not by the code under test).

Tolerances: count and kinds exact. A finished checkpoint's total: 0.01 s (the log line's own
rounding to milliseconds, and the recording's whole milliseconds). The running one's elapsed time
at the end: 1.5 s, one tick (1 s: the start is seen at the tick after the log line) plus the
log line's write delay.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import closing
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pgio_tui.analysis.align import window
from pgio_tui.analysis.summary import summarize
from pgio_tui.store.reader import Recording
from pgio_tui.workloads.pg_binaries import find_client

ROOT = Path(__file__).resolve().parents[2]
# metric -> reference kind (metrics.REFERENCE_KINDS): the log_checkpoints lines, for the catalog's
# checkpoint metrics the summary is made of and the summary's and experiment's figures made of them
CHECKS = {"checkpoint.kind": "log", "checkpoint.active": "log", "checkpoints.count": "log",
          "checkpoints.total_s": "log", "checkpoints.running_at_end": "log", "experiment.flag.no_checkpoint": "log"}
TOTAL_TOL_S, RUNNING_TOL_S = 0.01, 1.5

_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:  checkpoint (starting|complete): ?(.*)$")


def _log_checkpoints(text: str) -> list[dict]:
    """Checkpoints from the server log: start time, kind (a word of the flags), total if finished."""
    out: list[dict] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        t = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
        if m[2] == "starting":
            words = m[3].split()
            kind = next((k for k in ("shutdown", "immediate", "wal", "time") if k in words), "requested")
            out.append({"start_t": t, "kind": kind, "total_s": None})
        elif out and out[-1]["total_s"] is None:
            out[-1]["total_s"] = float(re.search(r"total=([\d.]+) s", m[3])[1])
    return out


def _wait_for_ticks(path: Path, n: int, timeout: float = 60) -> None:
    """Until the recording being written holds n ticks."""
    import sqlite3
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                if db.execute("SELECT count(*) FROM ticks").fetchone()[0] >= n:
                    return
        except sqlite3.Error:
            pass  # not created yet
        time.sleep(0.1)
    raise AssertionError(f"{path} has fewer than {n} ticks after {timeout} s")


@pytest.mark.slow
def test_checkpoints_match_the_log_including_one_running_at_the_end(make_cluster, tmp_path):
    cluster = make_cluster(checkpoint_timeout="30s", checkpoint_completion_target="0.9", log_timezone="UTC",
                           shared_buffers="64MB")
    cluster.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    pgbench = str(find_client())
    subprocess.run([pgbench, "-i", "-s", "5", "-q", cluster.conninfo()], check=True, capture_output=True, timeout=120)
    path = tmp_path / "cp.pgio"
    rec_proc = subprocess.Popen([sys.executable, "-m", "pgio_tui", "record", "-o", str(path), "--duration", "36",
                                 "--quiet", cluster.conninfo()], env={**os.environ, "PYTHONPATH": str(ROOT)})
    bench = subprocess.Popen([pgbench, "-T", "38", "-c", "2", "-R", "300", cluster.conninfo()],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_ticks(path, 2)  # the CHECKPOINT inside the recording's window, however slow its start
        with cluster.connect(autocommit=True) as conn:
            conn.execute("CHECKPOINT")
        assert rec_proc.wait(timeout=90) == 0
    finally:
        bench.terminate()
        bench.wait(timeout=30)
    with Recording(path) as rec:
        win = window(rec, "start")
        s = summarize(rec, win)
    log = [c for c in _log_checkpoints(cluster.log_text()) if win.origin_t <= c["start_t"] <= win.end_t]
    finished = [c for c in log if c["total_s"] is not None and c["start_t"] + c["total_s"] <= win.end_t]
    running = [c for c in log if c not in finished]
    assert [c["kind"] for c in log] == ["immediate", "time"] and len(running) == 1, log  # the run did what it means to
    assert s.value("checkpoints", "count") == len(log)
    for kind in {c["kind"] for c in log}:
        assert s.value("checkpoints", f"count ({kind})") == sum(c["kind"] == kind for c in log)
    mean = sum(c["total_s"] for c in finished) / len(finished)
    assert s.value("checkpoints", "total mean") == pytest.approx(mean, abs=TOTAL_TOL_S)
    assert s.value("checkpoints", "running at end") == 1
    elapsed = win.end_t - running[0]["start_t"]
    assert s.value("checkpoints", "running at end: elapsed (partial)") == pytest.approx(elapsed, abs=RUNNING_TOL_S)


def _experiment(cluster, out: Path, statement: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "experiment", "run", "-d", cluster.conninfo(),
                        "--allow-settings", "--set", "bgwriter_delay=200ms", "--repeat", "1", "--no-discard-first",
                        "--dirty-wait", "0", "-o", str(out), "--quiet", "sql", statement, "--times", "2"],
                       capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    return json.loads((out / "experiment.json").read_text())["runs"][0]


def test_a_run_without_any_checkpoint_is_flagged_and_says_why(make_cluster, tmp_path):
    """Issue 22 item 10: a run in which the log shows no checkpoint starting (and none running) is
    flagged with its reason; a run with one is not. Reference: the log_checkpoints lines in the run's
    window (from the runner's CHECKPOINT, which comes before it, to the run's end)."""
    cluster = make_cluster(log_timezone="UTC")
    quiet = _experiment(cluster, tmp_path / "quiet", "SELECT pg_sleep(1)")
    busy = _experiment(cluster, tmp_path / "busy", "CHECKPOINT")
    starts = [c["start_t"] for c in _log_checkpoints(cluster.log_text())]

    def in_run(run):  # the run's recording: its first and last tick
        with Recording(tmp_path / ("quiet" if run is quiet else "busy") / run["file"]) as rec:
            return [t for t in starts if rec.start_t <= t <= rec.end_t]

    assert in_run(quiet) == [] and in_run(busy)  # two CHECKPOINTs: one may start before the first tick
    flags = [f for f in quiet["flags"] if f["kind"] == "no_checkpoint"]
    assert len(flags) == 1 and "checkpoint_timeout (300s)" in flags[0]["text"] and "max_wal_size" in flags[0]["text"]
    assert not [f for f in busy["flags"] if f["kind"] == "no_checkpoint"]
