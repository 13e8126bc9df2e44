"""Two small recordings with known differences, for the diff and report tests (and their check).

Same benchmark, one setting changed, on two machines with different device names:

    A: backend_flush_after 0,   host lab-a, nvme0n1 (PGDATA) + nvme1n1 (WAL), 5 idle ticks first
    B: backend_flush_after 2MB, host lab-b, sda (PGDATA) + sdb (WAL),          2 idle ticks first

Each has LEAD idle ticks, WORK ticks of workload (events workload_start / workload_stop on the
first and last), then TAIL idle ticks; dt is exactly 1 s. During the workload, tick k = 0..29:

    figure                  A                                B
    latency.tps             100                              120
    latency.mean_ms         1.5 (k even) / 2.5 (k odd)       1.2 / 2.0
    latency.stddev_ms       1.0                              0.5
    p50 / p95 / p99         mean, 2 x mean, 3 x mean         same rule
    latency.max_ms          3 x mean + 1; 250 at k = 3       3 x mean + 1
    latency.over_100ms      2 at k = 3 (over_200ms 1)        0
    writes.checkpointer     300 while the checkpoint runs (k = 10..19), else 0
    writes.bgwriter         50                               50
    writes.backend          100                              20
    fsyncs.backend          1 at k = 4 and 5                 0
    mem.dirty_kb            100 MiB; 300 MiB at k = 7, 8     50 MiB
    mem.writeback_kb        10 MiB                           5 MiB
    thresholds              background 200 MiB, throttle 400 MiB (both)
    PGDATA util / w_await   50 + (7k mod 5 - 2), 2.0 ms      40 + (7k mod 5 - 2), 1.0 ms
    PGDATA wkB/s, w/s       1024, 100                        2048, 100
    WAL util / w_await      20 + (3k mod 5 - 2), 0.5 ms      20 + (2k mod 5 - 2), 0.5 ms
    checkpoint (k 10..19)   time: write 8.0 s, sync 0.6 s,   wal: write 8.0 s, sync 0.2 s,
                            total 8.7 s, 3000 buffers        total 8.3 s, 3000 buffers

Idle ticks: tps 0, no latency, no writes but 5 bgwriter buffers/s, Dirty 20 MiB, devices idle.
Tick 0 has no rates (as a real first tick). tests/test_diff.py works the expected figures out by
hand from this table.
"""

from __future__ import annotations

from pathlib import Path

from pgio_tui.frame import Event, Frame
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder

T0 = 1_700_000_000.0
WORK, TAIL = 30, 3
MIB = 1024
CP_FIRST, CP_LAST = 10, 19  # workload ticks k of the checkpoint

RUNS = {
    "A": {"lead": 5, "host": "lab-a", "data": "nvme0n1", "wal": "nvme1n1", "tps": 100, "mean": (1.5, 2.5), "sd": 1.0,
          "backend": 100, "dirty": (100, {7: 300, 8: 300}), "writeback": 10, "util_data": 50, "await_data": 2.0,
          "wkb_data": 1024, "wal_mult": 3, "fsync_ticks": (4, 5), "slow_tick": 3, "cp_kind": "time", "sync": 0.6,
          "total": 8.7, "flush_after": "0", "bg_ratio": "10", "scheduler": "none", "cpus": "8"},
    "B": {"lead": 2, "host": "lab-b", "data": "sda", "wal": "sdb", "tps": 120, "mean": (1.2, 2.0), "sd": 0.5,
          "backend": 20, "dirty": (50, {}), "writeback": 5, "util_data": 40, "await_data": 1.0,
          "wkb_data": 2048, "wal_mult": 2, "fsync_ticks": (), "slow_tick": None, "cp_kind": "wal", "sync": 0.2,
          "total": 8.3, "flush_after": "256", "bg_ratio": "5", "scheduler": "mq-deadline", "cpus": "4"},
}


def _frame(run: dict, tick: int) -> Frame:
    lead = run["lead"]
    k = tick - lead
    working = 0 <= k < WORK
    f = Frame(tick=tick, t=T0 + tick, elapsed=float(tick), dt=None if tick == 0 else 1.0)
    dirty_base, dirty_spikes = run["dirty"]
    v: dict = {
        "mem.dirty_kb": (dirty_spikes.get(k, dirty_base) if working else 20) * MIB,
        "mem.writeback_kb": (run["writeback"] if working else 0) * MIB,
        "mem.dirty_background_threshold_kb": 200 * MIB,
        "mem.dirty_threshold_kb": 400 * MIB,
        "checkpoint.active": int(working and CP_FIRST <= k <= CP_LAST),
    }
    if tick > 0:  # rates need a previous tick
        cp = working and CP_FIRST <= k <= CP_LAST
        v.update({
            "latency.tps": float(run["tps"] if working else 0),
            "writes.checkpointer": 300.0 if cp else 0.0,
            "writes.bgwriter": 50.0 if working else 5.0,
            "writes.backend": float(run["backend"] if working else 0),
            "fsyncs.backend": 1.0 if working and k in run["fsync_ticks"] else 0.0,
        })
        if cp:
            v["checkpoint.progress"] = (k - CP_FIRST + 1) / (CP_LAST - CP_FIRST + 1)
    if working and tick > 0:
        mean = run["mean"][k % 2]
        v.update({"latency.mean_ms": mean, "latency.stddev_ms": run["sd"], "latency.p50_ms": mean,
                  "latency.p95_ms": 2 * mean, "latency.p99_ms": 3 * mean,
                  "latency.max_ms": 250.0 if k == run["slow_tick"] else 3 * mean + 1,
                  "latency.over_100ms": 2.0 if k == run["slow_tick"] else 0.0,
                  "latency.over_200ms": 1.0 if k == run["slow_tick"] else 0.0,
                  "latency.over_300ms": 0.0, "latency.over_400ms": 0.0, "latency.over_500ms": 0.0})
    f.values = v
    f.device_roles = {run["data"]: "data", run["wal"]: "wal"}
    if tick > 0:
        idle = dict.fromkeys(("r_s", "w_s", "rkb_s", "wkb_s", "r_await_ms", "w_await_ms", "aqu_sz", "util_pct"), 0.0)
        f.devices = {run["data"]: dict(idle), run["wal"]: dict(idle)}
        if working:
            f.devices[run["data"]].update(w_s=100.0, wkb_s=float(run["wkb_data"]), w_await_ms=run["await_data"],
                                          util_pct=float(run["util_data"] + (7 * k % 5 - 2)), aqu_sz=1.0)
            f.devices[run["wal"]].update(w_s=50.0, wkb_s=512.0, w_await_ms=0.5,
                                         util_pct=float(20 + (run["wal_mult"] * k % 5 - 2)), aqu_sz=0.5)
    if k == 0:
        f.events.append(Event("workload_start", "pgbench started"))
    if k == WORK - 1:
        f.events.append(Event("workload_stop", "pgbench finished"))
    if k == CP_FIRST:
        f.events.append(Event("checkpoint_start", f"checkpoint starting: {run['cp_kind']}", {"kind": run["cp_kind"]}))
    if k == CP_LAST:
        start = lead + CP_FIRST
        f.checkpoints.append({"start_t": T0 + start, "end_t": T0 + tick, "start_tick": start, "end_tick": tick,
                              "kind": run["cp_kind"], "buffers": 3000, "write_s": 8.0, "sync_s": run["sync"],
                              "total_s": run["total"], "source": "log"})
        f.events.append(Event("checkpoint_end", "checkpoint complete"))
    return f


def write_run(path: str | Path, name: str) -> Path:
    """Record run "A" or "B" of RUNS to `path`."""
    run = RUNS[name]
    meta = {"host": run["host"], "os": "Linux-6.1 (fixture)", "server_version": "17.2", "interval_s": 1.0,
            "created_at": "2024-06-17T10:00:00+00:00"}
    n = run["lead"] + WORK + TAIL
    with Recorder(path, force=True, meta=meta) as rec:
        rec.set_settings([
            ("backend_flush_after", run["flush_after"], "8kB", "postgres"),
            ("shared_buffers", "16384", "8kB", "postgres"),
            ("checkpoint_timeout", "300", "s", "postgres"),
            ("vm.dirty_background_ratio", run["bg_ratio"], "", "kernel"),
            ("vm.dirty_ratio", "20", "", "kernel"),
            ("cpu.count", run["cpus"], "", "kernel"),
            (f"{run['data']}.scheduler", run["scheduler"], "", "device"),
            (f"{run['wal']}.scheduler", "none", "", "device"),
            ("sdc.scheduler", "bfq", "", "device"),  # a device PostgreSQL does not use: not compared
        ])
        wid = rec.workload_start("pgbench", ["pgbench", "-c", "4", "-T", str(WORK)], {"clients": 4},
                                 t=T0 + run["lead"])
        for tick in range(n):
            rec.write(_frame(run, tick))
        rec.workload_stop(wid, 0, {"tps": float(run["tps"])}, t=T0 + run["lead"] + WORK - 1)
        rec.close("done", t=T0 + n)
    return Path(path)


def write_pair(folder: str | Path) -> tuple[Path, Path]:
    folder = Path(folder)
    return write_run(folder / "a.pgio", "A"), write_run(folder / "b.pgio", "B")


def test_fixture_holds_what_the_table_says(tmp_path):
    a, b = write_pair(tmp_path)
    with Recording(a) as ra, Recording(b) as rb:
        assert ra.tick_count == 5 + WORK + TAIL and rb.tick_count == 2 + WORK + TAIL
        assert ra.devices == {"nvme0n1": "data", "nvme1n1": "wal"}
        assert rb.devices == {"sda": "data", "sdb": "wal"}
        assert [c["kind"] for c in ra.checkpoints()] == ["time"]
        assert [e.tick for e in rb.events(["workload_start", "workload_stop"])] == [2, 31]
        assert "latency.over_100ms" in ra.metric_names()
        assert sum(v for _, _, v in ra.series("latency.over_100ms") if v) == 2
