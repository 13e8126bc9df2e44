"""Findings on real planted scenarios, the four rules tests/test_findings.py does not plant
(issue 27): each must fire on the cluster set up to produce it, with figures equal to the
recording's own rows read here with sqlite3; the quiet run there (test_a_quiet_run_has_no_findings)
must give none of them.

- A slow PGDATA device (tests/slow_device.py: a loop device whose writes reach the disk through a
  4 MB/s blkio throttle on the server's processes), a timed checkpoint (checkpoint_timeout 30s,
  checkpoint_completion_target 0.1: 3 s to write) and an autovacuum started as the checkpoint
  begins: `checkpoint_write_phase` (or `checkpoint_sync_phase`, where the fsyncs are what wait),
  `device_saturation` and `autovacuum_spike` from one recording.
- A write burst on the PGDATA disk (2 GiB written and fsynced beside the cluster while pgbench
  commits): `latency_writeback`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time

import pytest
from slow_device import SlowDevice, SlowDeviceError
from test_findings import ByHand, found, record

from pgio_tui.experiments.page_cache import server_pids
from pgio_tui.quantiles import LatencyHistogram
from pgio_tui.workloads.cluster import Cluster
from pgio_tui.workloads.pg_binaries import find_client

THROTTLE = 4 * 10**6  # bytes/s: the slow device's writes


def window_p99(hand: ByHand, a: float, b: float) -> tuple[float, int]:
    """The p99 and count of the transactions of the ticks whose interval (t - dt, t] lies in (a, b], from
    latency_hist's rows (a window from 0 holds the first tick too: its interval began before the window's
    origin). By the interval's start, as the finding's windows begin, not by the tick before: t is the
    wall clock and dt the monotonic one, so t - dt and the previous tick's t differ by a little."""
    origin = hand.win.origin_t
    rows = hand.conn.execute(
        "SELECT bucket, sum(count) FROM latency_hist WHERE tick IN (SELECT tick FROM ticks WHERE t - dt >= ? "
        "AND t <= ? AND tick BETWEEN ? AND ?) GROUP BY bucket", (origin + a - 1e-4 if a > 0 else origin - 1e9,
                                                                 origin + b + 1e-6, hand.win.start_tick,
                                                                 hand.win.end_tick)).fetchall()
    hist = LatencyHistogram()
    hist.merge(dict(rows))
    return hist.percentile(99), hist.count


def ticks_where(hand: ByHand, sql: str, *params) -> list[float]:
    """x of the window's ticks that `sql` (a query of tick numbers) lists."""
    return [t - hand.win.origin_t for (t,) in hand.conn.execute(
        f"SELECT t FROM ticks WHERE tick BETWEEN ? AND ? AND tick IN ({sql})",
        (hand.win.start_tick, hand.win.end_tick, *params))]


def record_on_a_slow_device(pg_bindir, path) -> str:
    """The slow-device scenario recorded to `path`; the loop device's name. Skips where the host
    has no loop device or blkio throttle."""
    with contextlib.ExitStack() as stack:
        try:
            device = stack.enter_context(SlowDevice(1024))
        except (SlowDeviceError, OSError) as exc:
            pytest.skip(f"no slow device here: {exc}")
        cluster = Cluster(bindir=pg_bindir, temp_dir=device.mount, settings={
            "shared_buffers": "256MB", "checkpoint_timeout": "30s", "checkpoint_completion_target": "0.1",
            "max_wal_size": "1GB", "autovacuum_naptime": "1s"})
        stack.callback(cluster.destroy)
        cluster.init()
        cluster.start()
        subprocess.run([str(find_client()), "-i", "-s", "10", "-q", cluster.conninfo()], check=True,
                       capture_output=True, timeout=300)
        with cluster.connect() as conn:  # 400k dead rows for an autovacuum to clean, when allowed
            conn.execute("CREATE TABLE av (id int, pad text) WITH (autovacuum_enabled = off)")
            conn.execute("INSERT INTO av SELECT i, repeat('x', 100) FROM generate_series(1, 400000) i")
            conn.execute("DELETE FROM av")
            conn.execute("CHECKPOINT")  # the next, timed, checkpoint comes 30 s from here
        checkpointed = time.monotonic()
        try:
            device.throttle(server_pids(cluster.postmaster_pid), THROTTLE)
        except (SlowDeviceError, OSError) as exc:
            pytest.skip(f"no blkio throttle here: {exc}")

        def autovacuum_as_the_checkpoint_starts():
            time.sleep(max(0.0, checkpointed + 27 - time.monotonic()))
            with cluster.connect() as conn:
                conn.execute("ALTER TABLE av SET (autovacuum_enabled = on, autovacuum_vacuum_cost_delay = 50)")

        later = threading.Thread(target=autovacuum_as_the_checkpoint_starts)
        later.start()
        record(cluster, path, "-c", "2", "-R", "100", "-T", "65", scale=None)  # the checkpoint ends in it
        later.join()
        return device.name


# Solo: the throttled device's dirty pages count against the kernel's dirty limits, which throttle
# every writer on the machine (a recorder beside it never wrote a tick in 60 s), and the other
# worker's I/O would blur the device's figures.
@pytest.mark.solo
def test_a_slow_device_gives_the_checkpoint_device_and_autovacuum_findings(pg_bindir, tmp_path):
    path = tmp_path / "slow.pgio"
    name = record_on_a_slow_device(pg_bindir, path)
    got, win = found(path)
    hand = ByHand(path, win)
    seen = []

    # checkpoint_phases: the checkpoints table (the server log's lines). The throttle holds the
    # checkpoint in its write phase (its writeback requests wait: seen on 15 and 18) or in its sync
    # phase (the fsyncs wait: seen once on 18): either is one of the rule's two findings.
    cps = [c for c in hand.conn.execute("SELECT kind, start_t, write_s, sync_s, buffers FROM checkpoints")
           if win.origin_t - 1e-6 <= c[1] <= win.end_t + 1e-6]
    target = float(hand.setting("checkpoint_timeout")) * float(hand.setting("checkpoint_completion_target"))
    writes = [(w, n) for kind, _, w, _, n in cps if kind not in ("immediate", "shutdown") and w > target * 1.1]
    syncs = [y for *_, y, _ in cps if y > 10]
    assert writes or syncs, cps
    if writes:
        f = got["checkpoint_write_phase"]
        worst = max(writes)
        seen.append(f"write phase by hand {worst[0]} s ({worst[1]} buffers) over target {target} s, "
                    f"{len(writes)} checkpoint(s) | finding {f.figure('longest write phase')} s "
                    f"({f.figure('buffers')}) over {f.figure('target')} s, {f.figure('checkpoints over target')}")
        assert target == f.figure("target") == 3.0
        assert (f.figure("longest write phase"), f.figure("buffers")) == worst
        assert f.figure("checkpoints over target") == len(writes) >= 1
        assert f"to {name}" in f.text
    if syncs:
        f = got["checkpoint_sync_phase"]
        seen.append(f"sync phase by hand {max(syncs)} s, {len(syncs)} checkpoint(s) over 10 s | finding "
                    f"{f.figure('longest sync phase')} s, {f.figure('checkpoints over')}")
        assert f.figure("longest sync phase") == max(syncs) and f.figure("checkpoints over") == len(syncs)
        assert f"on {name}" in f.text

    # device_saturation: the loop device's util and await while a checkpoint ran, and between, each tick
    # weighted by the seconds of it inside a checkpoint: the checkpoints table's spans, and the one still
    # running at the end from its first tick's checkpoint.elapsed_s
    f = got["device_saturation"]
    rows = hand.conn.execute(
        'SELECT ticks.t, ticks.dt, coalesce(ticks."checkpoint.active", 0), ticks."checkpoint.elapsed_s", '
        'd.util_pct, d.w_await_ms FROM ticks JOIN disk_named d ON d.tick = ticks.tick AND d.device = ? '
        'WHERE ticks.tick BETWEEN ? AND ? ORDER BY ticks.tick', (name, win.start_tick, win.end_tick)).fetchall()
    spans = [(a, b) for a, b in hand.conn.execute("SELECT start_t, end_t FROM checkpoints")]
    last_end = max((b for _, b in spans), default=float("-inf"))
    starts = [t - e / hand.scales["checkpoint.elapsed_s"] for t, _, act, e, *_ in rows if act and e is not None]
    running = next((t for t in starts if t > last_end), None)
    if running is not None:
        spans.append((running, float("inf")))

    def inside(t: float, dt: float) -> float:
        return sum(max(0.0, min(t, b) - max(t - dt, a)) for a, b in spans) / dt

    def mean(col: int, in_checkpoints: bool) -> float:
        pairs = [(r[col], inside(r[0], r[1]) if in_checkpoints else 1 - inside(r[0], r[1]))
                 for r in rows if r[4] is not None and r[col] is not None]
        return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)

    by_hand = {k: mean(c, a) for k, c, a in (("util in checkpoints", 4, True), ("util between", 4, False),
                                              ("w_await in checkpoints", 5, True), ("w_await between", 5, False))}
    seen.append(f"device {name} by hand {by_hand} | finding "
                f"{ {k: f.figure(k) for k in by_hand} }")
    for k, v in by_hand.items():
        assert f.figure(k) == pytest.approx(v, rel=1e-3), (k, seen[-1])
    assert by_hand["util in checkpoints"] >= 90 and by_hand["w_await in checkpoints"] > 2 * by_hand["w_await between"]

    # autovacuum_spike: a latency window 3x the median's with an autovacuum worker sampled in it
    f = got["autovacuum_spike"]
    worker = ticks_where(hand, "SELECT tick FROM waits_named WHERE backend_type = 'autovacuum worker' AND count > 0")
    if hand.conn.execute("SELECT 1 FROM pragma_table_info('ticks') WHERE name = 'writes.autovacuum'").fetchone():
        worker += ticks_where(hand, 'SELECT tick FROM ticks WHERE "writes.autovacuum" > 0')  # 16+: pg_stat_io
    a, b = max(f.windows, key=lambda w: window_p99(hand, *w)[0])
    p99, n = window_p99(hand, a, b)
    seen.append(f"autovacuum sampled at x {[round(x) for x in worker]}; worst window {a:.0f}-{b:.0f} s by hand "
                f"p99 {p99:.1f} ms of {n} transactions | finding {f.figure('worst window p99'):.1f} ms, typical "
                f"{f.figure('typical window p99'):.1f} ms")
    assert p99 == pytest.approx(f.figure("worst window p99")) and n >= 100
    assert p99 >= 3 * f.figure("typical window p99")
    assert all(any(x0 < x <= x1 + 1e-6 for x in worker) for x0, x1 in f.windows)
    told = [t for (t,) in hand.conn.execute("SELECT text FROM events WHERE kind = 'autovacuum'")]  # as recorded
    assert any(t.startswith("autovacuum: VACUUM") and " public.av" in t for t in told) and "(public.av" in f.text, \
        (told, f.text)
    print("", *seen, *(f"{k}: {f.text}" for k, f in got.items()), sep="\n")


def test_a_write_burst_gives_the_latency_writeback_finding(make_cluster, tmp_path):
    """2 GiB written beside PGDATA and fsynced while pgbench commits at 100/s: the kernel writes it
    back in one burst (Writeback far above 32 MiB), the commits' WAL fsyncs wait behind it."""
    cluster = make_cluster(shared_buffers="128MB")
    path = tmp_path / "burst.pgio"

    def burst():
        time.sleep(11)
        junk = cluster.base_dir / "burst"
        fd = os.open(junk, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            block = b"\1" * 2**20
            for _ in range(2048):
                os.write(fd, block)
            os.fsync(fd)
        finally:
            os.close(fd)
            junk.unlink()

    writer = threading.Thread(target=burst)
    writer.start()
    record(cluster, path, "-c", "1", "-R", "100", "-T", "30", scale="1", interval="0.25")  # 6 windows: a median
    writer.join()
    got, win = found(path)
    f = got["latency_writeback"]
    hand = ByHand(path, win)
    a, b = next(w for w in f.windows if window_p99(hand, *w)[0] == pytest.approx(f.figure("worst window p99")))
    p99, n = window_p99(hand, a, b)
    wb = max(v for (v,) in hand.conn.execute(  # in the window, or up to 5 s before it (latency lags)
        'SELECT "mem.writeback_kb" FROM ticks WHERE t > ? AND t <= ? AND "mem.writeback_kb" IS NOT NULL '
        'AND tick BETWEEN ? AND ?', (win.origin_t + a - 5, win.origin_t + b + 1e-6, win.start_tick, win.end_tick)))
    print(f"\nby hand: window {a:.1f}-{b:.1f} s p99 {p99:.1f} ms of {n}, max Writeback {wb:.0f} kB | finding: "
          f"{f.figure('worst window p99'):.1f} ms, {f.figure('max Writeback in and before worst window'):.0f} kB, typical "
          f"{f.figure('typical window p99'):.1f} ms\n{f.text}")
    assert n >= 100 and p99 >= 3 * f.figure("typical window p99")
    assert wb == f.figure("max Writeback in and before worst window") >= 32768
    assert "Writeback reached" in f.text
