"""A real recording on a real cluster, checked against the server's own account of it.

pgbench runs while a CHECKPOINT command and a spread (timed) checkpoint happen. The recording
must show checkpoint.active at the ticks the server log says, checkpoint rows whose buffer counts
match the log's `wrote N buffers`, and per-source write rates that add up to the raw view deltas.
"""

from __future__ import annotations

import re
import subprocess
import threading
from datetime import datetime

import pytest
from log_ticks import ticks_for
from view_counters import raw_writes, settled_writes

from pgio_tui.sampler import Sampler
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.pg_binaries import find_client

INTERVAL = 0.5
LOG_LINE = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (?P<tz>\S+) .*?"
                      r"(?P<what>checkpoint (?:starting|complete)): (?P<rest>.*)$")


def log_checkpoints(text: str) -> list[dict]:
    """(start, end, wrote) per checkpoint, from the server log (log_line_prefix starts with %m)."""
    out, cur = [], None
    for line in text.splitlines():
        m = LOG_LINE.match(line)
        if not m:
            continue
        ts = datetime.strptime(m["ts"] + " +0000", "%Y-%m-%d %H:%M:%S.%f %z").timestamp()
        assert m["tz"] in ("UTC", "GMT"), "the test clusters log in UTC"
        if m["what"] == "checkpoint starting":
            cur = {"start": ts, "flags": m["rest"].strip()}
        elif cur is not None:
            cur["end"] = ts
            cur["wrote"] = int(re.match(r"wrote (\d+) buffers", m["rest"])[1])
            slru = re.search(r"wrote (\d+) SLRU buffers", m["rest"])
            cur["slru"] = int(slru[1]) if slru else None
            cur["pct"] = float(re.search(r"buffers \(([\d.]+)%\)", m["rest"])[1])
            cur["wal"] = tuple(int(x) for x in re.search(
                r"(\d+) WAL file\(s\) added, (\d+) removed, (\d+) recycled", m["rest"]).groups())
            cur["files"] = int(re.search(r"sync files=(\d+)", m["rest"])[1])
            cur["longest"] = float(re.search(r"longest=([\d.]+) s", m["rest"])[1])
            out.append(cur)
            cur = None
    return out


@pytest.fixture
def busy_cluster(make_cluster):
    c = make_cluster(checkpoint_timeout="30s", checkpoint_completion_target="0.3",
                     max_wal_size="1GB", log_timezone="UTC", shared_buffers="64MB")
    subprocess.run([str(find_client("pgbench")), "-i", "-s", "5", "-q", c.conninfo()],
                   check=True, capture_output=True)
    with c.connect() as conn:
        conn.execute("CHECKPOINT")
    return c


def record_scenario(cluster, path, conninfo=None, duration=54.0):
    """Record `duration` s: pgbench 1-30 s, CHECKPOINT at 6.2 s, the timed checkpoint ~36-46 s."""
    pgbench = [str(find_client("pgbench")), "-c", "2", "-j", "2", "-T", "29", cluster.conninfo()]
    with cluster.connect() as conn:
        before = settled_writes(conn)
    sampler = Sampler(conninfo or cluster.conninfo(), interval=INTERVAL)
    sampler.open()
    stop = threading.Event()
    procs = []

    def driver():
        if stop.wait(1):
            return
        procs.append(subprocess.Popen(pgbench, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        if stop.wait(5.2):  # off the tick grid: the test must not depend on a lucky alignment
            return
        with cluster.connect() as conn:
            conn.execute("CHECKPOINT")

    th = threading.Thread(target=driver)
    with Recorder(path, meta=sampler.meta()) as rec:
        rec.set_settings(sampler.settings_rows())
        th.start()
        try:
            for frame in sampler.frames(duration=duration):
                rec.write(frame)
        finally:
            stop.set()
            th.join()
            for p in procs:
                p.wait(timeout=60)
        sampler.close()
    with cluster.connect() as conn:
        after = raw_writes(conn)
    return before, after


@pytest.mark.slow
@pytest.mark.matrix
def test_checkpoints_and_writes_match_the_server(busy_cluster, tmp_path):
    path = tmp_path / "run.pgio"
    before, after = record_scenario(busy_cluster, path)
    logged = log_checkpoints(busy_cluster.log_text())
    rec = Recording(path)
    ticks = [(f.tick, f.t) for f in rec.frames()]
    active = {f.tick: f.values.get("checkpoint.active") for f in rec.frames()}
    rows = rec.checkpoints()
    t0, t1 = ticks[0][1], ticks[-1][1]
    in_window = [c for c in logged if t0 < c["start"] and c["end"] < t1]
    kinds = [c["flags"] for c in in_window]
    assert "immediate force wait" in kinds and "time" in kinds, kinds
    assert len(rows) == len(in_window), (rows, in_window)

    for row, c in zip(rows, in_window):
        # The tick that first follows the log's start/end time is where the recording puts them.
        assert row["start_tick"] in ticks_for(ticks, c["start"]), (row, c)
        assert row["end_tick"] in ticks_for(ticks, c["end"]), (row, c)
        for tick in range(row["start_tick"], row["end_tick"] + 1):
            assert active[tick] == 1, (tick, row)
        assert active[row["start_tick"] - 1] == 0
        assert active.get(row["end_tick"] + 1, 0) == 0
        # Buffers from the counters against the log's own count (14-17 add SLRU pages to it).
        logged_shared = c["wrote"]
        assert abs(row["buffers"] - logged_shared) <= max(0.01 * logged_shared, 1), (row, c)
        assert row["log_buffers"] == c["wrote"]
        assert row["kind"] == ("immediate" if "immediate" in c["flags"] else "time")
        # the checkpoint history's columns (H) are the log line's own
        assert (row["buffers_pct"], row["sync_files"], row["longest_s"]) == (c["pct"], c["files"], c["longest"])
        assert (row["wal_added"], row["wal_removed"], row["wal_recycled"]) == c["wal"]

    # Per-source write rates integrate back to the views' own deltas.
    frames = list(rec.frames())
    for name in ("writes.checkpointer", "writes.bgwriter", "writes.backend"):
        summed = sum((f.values.get(name) or 0) * f.dt for f in frames if f.dt)
        expected = after[name] - before[name]
        assert abs(summed - expected) <= max(0.005 * expected, 2), (name, summed, expected)
    rec.close()
