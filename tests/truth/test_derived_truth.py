"""Truth: a running checkpoint's figures, and checkpoint.progress recomputed from its named inputs.

pgbench fills WAL on a cluster with a small max_wal_size, so WAL-triggered checkpoints (spread over
checkpoint_completion_target of the WAL distance) run while ticks are taken every 0.5 s. Around each
tick the checkpointer's buffers-written counter (and, 16+, pg_buffercache_summary()'s dirty buffers)
are read here; the log's `checkpoint starting` lines give the starts.

- checkpoint.buffers_written (view): between the counter's reads around this tick minus its reads
  around the tick before the checkpoint was first shown (it started after that tick: the base).
  Tolerance: none beyond that sandwich.
- checkpoint.buffers_estimate (view, 16+): the dirty buffers at the tick the checkpoint was first shown
  plus the buffers written since the tick before, or the dirty buffers at the tick before when
  pg_buffercache was read then (sources/checkpoint.py; the first tick itself shows none yet), read
  here around those ticks, within 10 % + 64 buffers (backends dirty buffers meanwhile).
- checkpoint.elapsed_s (clock): the tick's time minus the log's start line, within one tick + 0.1 s
  (the start is seen at the tick after the line; the line's time is the server's clock, to 1 ms).
- checkpoint.progress (derived): recomputed from the tick's own inputs, to 1e-9: buffers written /
  estimate (capped at 1) or the schedule min(1, max(elapsed/timeout, WAL progress) / completion
  target), the one the checkpointer's state selects (sources/checkpoint.py); 1 on the tick it ends.
"""

from __future__ import annotations

import re
import subprocess
import time
from datetime import datetime, timezone

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler
from pgio_tui.workloads.pg_binaries import find_client

# metric -> reference kind (metrics.REFERENCE_KINDS)
CHECKS = {M.CHECKPOINT_BUFFERS_WRITTEN: "view", M.CHECKPOINT_BUFFERS_ESTIMATE: "view",
          M.CHECKPOINT_ELAPSED_S: "clock", M.CHECKPOINT_PROGRESS: "derived"}
TICK_S = 0.5
_START = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:  checkpoint starting: (.*)$")


def _starts(text: str) -> list[float]:
    return [datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
            for m in map(_START.match, text.splitlines()) if m]


def _reads(probe, counter_sql: str, bufcache: bool) -> tuple[float, float | None]:
    written = float(probe.execute(counter_sql).fetchone()[0])
    dirty = float(probe.execute("SELECT buffers_dirty FROM pg_buffercache_summary()").fetchone()[0]) if bufcache \
        else None
    return written, dirty


def _story(ticks, upto: int) -> list:
    """The ticks up to `upto` as the sampler told them, for a failure's message: a written figure off
    the view's range says on which tick the sampler took its base."""
    return [(f.tick, f.values.get(M.CHECKPOINT_BUFFERS_WRITTEN), f.values.get(M.CHECKPOINT_ELAPSED_S),
             [e.kind for e in f.events], b[0], a[0]) for f, b, a in ticks if f.tick <= upto]


@pytest.mark.matrix
def test_running_checkpoint_figures(make_cluster, capsys):
    cluster = make_cluster(autovacuum="off", shared_buffers="32MB", max_wal_size="48MB", min_wal_size="32MB",
                           checkpoint_completion_target="0.9", checkpoint_timeout="1h")
    probe = cluster.connect(autocommit=True)
    probe.execute("CREATE DATABASE ck")
    bufcache = probe.execute("SELECT to_regproc('pg_buffercache_summary') IS NOT NULL OR EXISTS (SELECT FROM "
                             "pg_available_extension_versions WHERE name = 'pg_buffercache' AND "
                             "version >= '1.4')").fetchone()[0]
    if bufcache:
        probe.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
    counter_sql = ("SELECT buffers_written FROM pg_stat_checkpointer"
                   if probe.execute("SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL").fetchone()[0]
                   else "SELECT buffers_checkpoint FROM pg_stat_bgwriter")
    pgbench = [str(find_client("pgbench")), "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres"]
    subprocess.run([*pgbench, "-i", "-q", "-s", "3", "ck"], check=True, capture_output=True, timeout=120)
    probe.execute("CHECKPOINT")
    log = cluster.server_log_path()
    log_from = log.stat().st_size
    sampler = Sampler(cluster.conninfo(), interval=TICK_S)
    sampler.open()
    bench = subprocess.Popen([*pgbench, "-n", "-c", "2", "-T", "14", "ck"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    ticks = []  # (frame, reads before, reads after)
    try:
        t0 = time.monotonic()
        for k in range(26):
            time.sleep(max(0.0, t0 + k * TICK_S - time.monotonic()))
            before = _reads(probe, counter_sql, bufcache)
            frame = sampler.sample(k, k * TICK_S)
            ticks.append((frame, before, _reads(probe, counter_sql, bufcache)))
    finally:
        bench.wait(60)
        sampler.close()
    with open(log, "rb") as f:
        f.seek(log_from)
        starts = _starts(f.read().decode(errors="replace"))
    running, checked, prev = None, {m: 0 for m in CHECKS}, ticks[0]
    for frame, before, after in ticks:
        prev, (_, prev_before, prev_after) = (frame, before, after), prev
        v = frame.values
        if v.get(M.CHECKPOINT_BUFFERS_WRITTEN) is None:
            running = None
            continue
        elapsed = v[M.CHECKPOINT_ELAPSED_S]
        # first shown, or the next one began (a WAL checkpoint right after another: its elapsed need not
        # be below the last one's): it started after the previous tick, whose counter is its base
        began = any(e.kind == "checkpoint_start" for e in frame.events)
        if running is None or began or elapsed < running[0]:
            running = (elapsed, prev_before, prev_after, before, after)
        running = (elapsed, *running[1:])
        _, base_before, base_after, eb, ea = running
        written = v[M.CHECKPOINT_BUFFERS_WRITTEN]
        assert before[0] - base_after[0] <= written <= after[0] - base_before[0], \
            f"tick {frame.tick}: written {written}, the view {before[0]}..{after[0]} from {base_before[0]}..{base_after[0]}" \
            f"; so far (tick, written, elapsed, events, view before..after): {_story(ticks, frame.tick)}"
        checked[M.CHECKPOINT_BUFFERS_WRITTEN] += 1
        est = v[M.CHECKPOINT_BUFFERS_ESTIMATE]
        if bufcache and est is None:  # the first tick it is shown: pg_buffercache is read at the next
            assert elapsed <= TICK_S + 0.1, f"tick {frame.tick}: no estimate {elapsed} s into the checkpoint"
        elif bufcache:
            # the dirty buffers at the tick it was first shown plus those written since the tick before,
            # or, when pg_buffercache was read at the tick before (every 10 s), the count read then
            lo = min(min(eb[1], ea[1]) + eb[0] - base_after[0], base_before[1], base_after[1])
            hi = max(max(eb[1], ea[1]) + ea[0] - base_before[0], base_before[1], base_after[1])
            assert lo * 0.9 - 64 <= est <= hi * 1.1 + 64, f"tick {frame.tick}: estimate {est} vs {lo}..{hi}"
            checked[M.CHECKPOINT_BUFFERS_ESTIMATE] += 1
        else:
            assert est is None  # before 16: unknown, never a guess
        # the start it implies is a logged one (on the tick a checkpoint ends the next may have begun)
        start = min(starts, key=lambda s: abs(frame.t - elapsed - s), default=None)
        assert start is not None and abs(elapsed - (frame.t - start)) <= TICK_S + 0.1, \
            f"tick {frame.tick}: elapsed {elapsed}, logged starts {starts}"
        checked[M.CHECKPOINT_ELAPSED_S] += 1
        progress = v[M.CHECKPOINT_PROGRESS]
        by_buffers = min(1.0, written / est) if est else None
        schedule = min(1.0, max(elapsed / v[M.CHECKPOINT_TIMEOUT_S], v[M.CHECKPOINT_WAL_PROGRESS] or 0.0)
                       / v[M.CHECKPOINT_COMPLETION_TARGET])
        assert any(c is not None and abs(progress - c) <= 1e-9 for c in (by_buffers, schedule, 1.0)), \
            f"tick {frame.tick}: progress {progress}, by buffers {by_buffers}, by schedule {schedule}"
        checked[M.CHECKPOINT_PROGRESS] += 1
    assert len(starts) >= 1 and checked[M.CHECKPOINT_BUFFERS_WRITTEN] >= 3, (starts, checked)
    with capsys.disabled():
        print(f"\n{len(starts)} checkpoints started; ticks checked: {checked}")
