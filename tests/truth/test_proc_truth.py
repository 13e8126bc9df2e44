"""Truth: every proc-kind metric against /proc read here around the same tick.

The sampler's ticks are taken by hand while a backend writes and a file is written without fsync
(so Dirty, Writeback and the page cache move). Around each tick the same /proc files are read just
before and just after it: a level (Dirty, Writeback, the dirty thresholds, MemAvailable, Cached)
must lie between the two reads; a counter summed over the ticks (PSI stall time, the observer's
CPU time, a backend's /proc/<pid>/io bytes) must lie between the deltas the reads around the first
and the last tick allow. The backend's own PostgreSQL I/O figures (18+ pg_stat_get_backend_io,
view kind) are checked on the same ticks against that function's delta once published.

Tolerances: levels 1 % of the value plus 1 MiB beyond the reads around the tick (the kernel changes
them between any two reads; a level the tick read in between may still step outside by a page
batch); counters none beyond the sandwich, except the CPU time's clock ticks (10 ms either side:
os.times() and /proc/self/stat count whole clock ticks) and PSI's microsecond totals.
"""

from __future__ import annotations

import os
import time

import pytest
from view_counters import settled

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

_LEVELS = {M.MEM_DIRTY_KB: ("meminfo", "Dirty"), M.MEM_WRITEBACK_KB: ("meminfo", "Writeback"),
           M.MEM_AVAILABLE_KB: ("meminfo", "MemAvailable"), M.MEM_CACHED_KB: ("meminfo", "Cached"),
           M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB: ("vmstat", "nr_dirty_background_threshold"),
           M.MEM_DIRTY_THRESHOLD_KB: ("vmstat", "nr_dirty_threshold")}
# metric -> reference kind (metrics.REFERENCE_KINDS): /proc; the backend's pg_* figures: the view
CHECKS = {**dict.fromkeys(_LEVELS, "proc"), M.IO_PRESSURE_SOME_PCT: "proc", M.IO_PRESSURE_FULL_PCT: "proc",
          M.OBSERVER_CPU_MS: "proc", "backend.<pid>.read_bytes_s": "proc", "backend.<pid>.write_bytes_s": "proc",
          "backend.<pid>.pg_read_bytes_s": "view", "backend.<pid>.pg_write_bytes_s": "view"}
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
CLK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _proc(pid: int) -> dict:
    """Every reference, read here: levels in kB, counters cumulative."""
    out = {}
    mem = dict(line.split(":", 1) for line in open("/proc/meminfo"))
    vm = dict(line.split() for line in open("/proc/vmstat"))
    for m, (where, key) in _LEVELS.items():
        out[m] = int(mem[key].split()[0]) if where == "meminfo" else int(vm[key]) * PAGE_KB
    if os.path.exists("/proc/pressure/io"):
        for line in open("/proc/pressure/io"):
            kind, *fields = line.split()
            out[{"some": M.IO_PRESSURE_SOME_PCT, "full": M.IO_PRESSURE_FULL_PCT}[kind]] = int(
                dict(f.split("=") for f in fields)["total"])
    stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    out[M.OBSERVER_CPU_MS] = (int(stat[11]) + int(stat[12])) * CLK_MS  # utime, stime (fields 14, 15)
    io = dict(line.split(": ") for line in open(f"/proc/{pid}/io"))
    out["read_bytes_s"], out["write_bytes_s"] = int(io["read_bytes"]), int(io["write_bytes"])
    return out


def _backend(frame, pid: int) -> dict:
    (b,) = [b for b in frame.backends if b["pid"] == pid]
    return b


def test_levels_and_counters_against_proc(make_cluster, tmp_path, capsys):
    cluster = make_cluster(autovacuum="off")
    work = cluster.connect(autocommit=True)
    work.execute("CREATE TABLE p (id int, pad text)")
    pid = work.execute("SELECT pg_backend_pid()").fetchone()[0]
    probe = cluster.connect(autocommit=True)
    has_backend_io = probe.execute("SELECT to_regproc('pg_stat_get_backend_io') IS NOT NULL").fetchone()[0]

    def pg_io():
        if not has_backend_io:
            return None
        return tuple(map(float, probe.execute("SELECT coalesce(sum(read_bytes), 0), coalesce(sum(write_bytes), 0) "
                                              "FROM pg_stat_get_backend_io(%s)", (pid,)).fetchone()))

    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    sums: dict[str, float] = {}
    level_lines, ticks = [], 8
    try:
        sampler.sample(0, 0.0)  # the baseline of the kernel's and the backends' counters
        sampler.sample(1, 1.0)
        pg0 = settled(pg_io, "the backend's I/O")
        first_before = _proc(pid)
        sampler.sample(2, 2.0)  # the counters' base: the sums below start after it
        first_after = _proc(pid)
        for k in range(3, 3 + ticks):
            work.execute("INSERT INTO p SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g")
            with open(tmp_path / f"dirty-{k}", "wb") as f:  # page cache dirtied, no fsync
                f.write(os.urandom(4 << 20))
            if k == 2 + ticks:
                time.sleep(1.5)  # the backend publishes its statistics (at most once a second)
            before = _proc(pid)
            frame = sampler.sample(k, float(k))
            after = _proc(pid)
            for m in _LEVELS:
                lo, hi, got = min(before[m], after[m]), max(before[m], after[m]), frame.values[m]
                slack = 0.01 * hi + 1024
                assert lo - slack <= got <= hi + slack, f"tick {k} {m}: {got} kB, /proc {before[m]} then {after[m]}"
                level_lines.append(abs(got - (lo + hi) / 2))
            for m in (M.IO_PRESSURE_SOME_PCT, M.IO_PRESSURE_FULL_PCT):
                if frame.values.get(m) is not None:
                    sums[m] = sums.get(m, 0.0) + frame.values[m] * frame.dt * 1e4  # % of dt -> microseconds
            sums[M.OBSERVER_CPU_MS] = sums.get(M.OBSERVER_CPU_MS, 0.0) + frame.values[M.OBSERVER_CPU_MS]
            b = _backend(frame, pid)
            for f in ("read_bytes_s", "write_bytes_s", "pg_read_bytes_s", "pg_write_bytes_s"):
                if b[f] is not None:
                    sums[f] = sums.get(f, 0.0) + b[f] * frame.dt
        pg1 = settled(pg_io, "the backend's I/O")
    finally:
        sampler.close()
    lines = []
    for m in (M.IO_PRESSURE_SOME_PCT, M.IO_PRESSURE_FULL_PCT, M.OBSERVER_CPU_MS, "read_bytes_s", "write_bytes_s"):
        if m not in first_before:  # no /proc/pressure/io here: the sampler has none either
            assert m not in sums
            continue
        lo, hi = before[m] - first_after[m], after[m] - first_before[m]  # around the first and last ticks
        slack = 2 * CLK_MS if m == M.OBSERVER_CPU_MS else 1.0 if m in (M.IO_PRESSURE_SOME_PCT, M.IO_PRESSURE_FULL_PCT) else 0
        lines.append(f"{m}: summed {sums.get(m)}, /proc between {lo} and {hi}")
        assert lo - slack <= sums[m] <= hi + slack, lines[-1]
    assert sums["write_bytes_s"] > 1e6  # the backend really wrote
    if has_backend_io:
        for i, f in enumerate(("pg_read_bytes_s", "pg_write_bytes_s")):
            lines.append(f"{f}: summed {sums[f]}, pg_stat_get_backend_io {pg1[i] - pg0[i]}")
            assert sums[f] == pytest.approx(pg1[i] - pg0[i], abs=1e-6), lines[-1]
        assert pg1[1] - pg0[1] > 0
    else:
        assert "pg_read_bytes_s" not in sums and "pg_write_bytes_s" not in sums
    with capsys.disabled():
        print(f"\nlevels within their reads, at most {max(level_lines):.0f} kB from the middle; " + "; ".join(lines))
