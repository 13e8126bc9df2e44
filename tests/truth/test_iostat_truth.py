"""Truth: every device metric against sysstat's `iostat -x` over the same seconds.

iostat runs with a 1 s interval on a pty (each report arrives as it is printed); the sampler takes a
tick the moment each report shows up, so both cover the same second give or take the time to print
a line (bench/iostat_compare.py prints the per-second figures side by side). The data directory's
device works under pgbench (WAL flushes, data writes) plus a reader and an O_DSYNC writer with dd.

Compared over the whole run, so that the few milliseconds between iostat's read of
/proc/diskstats and the tick's fall only at the run's two ends: counts (r/s, w/s, kB/s, f/s
times each interval) summed; awaits weighted by their requests; aqu-sz and %util weighted by time.
Tolerance 3 % + 0.05 (the ends' offsets over an 8 s run, and iostat's two printed decimals); for
aqu-sz and %util 6 %: iostat divides by /proc/uptime's centiseconds (1 % of a 1 s interval each) and
the queue under pgbench and O_DSYNC writes changes within the milliseconds between the two reads
(4.27 vs 4.43 seen once on 18, 3.5 %).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler
from pgio_tui.workloads.pg_binaries import find_client

IOSTAT_COLUMN = {M.DISK_R_S: "r/s", M.DISK_W_S: "w/s", M.DISK_RKB_S: "rkB/s", M.DISK_WKB_S: "wkB/s",
                 M.DISK_R_AWAIT_MS: "r_await", M.DISK_W_AWAIT_MS: "w_await", M.DISK_AQU_SZ: "aqu-sz",
                 M.DISK_UTIL_PCT: "util", M.DISK_F_S: "f/s", M.DISK_F_AWAIT_MS: "f_await"}
_WEIGHT = {M.DISK_R_AWAIT_MS: M.DISK_R_S, M.DISK_W_AWAIT_MS: M.DISK_W_S, M.DISK_F_AWAIT_MS: M.DISK_F_S}
# metric -> reference kind (metrics.REFERENCE_KINDS): iostat -x
CHECKS = {f"disk.<device>.{f}": "iostat" for f in IOSTAT_COLUMN}
SECONDS = 8
# iostat on a pty, each report as it is printed: bench/iostat_compare.py's reader, one copy
_spec = importlib.util.spec_from_file_location("iostat_compare", Path(__file__).parents[2] / "bench" / "iostat_compare.py")
_IOSTAT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_IOSTAT)
LOAD = """
dd if=/dev/zero of=seed bs=1M count=32 oflag=direct status=none
while :; do dd if=seed of=/dev/null bs=16k iflag=direct status=none; done &
while :; do dd if=/dev/zero of=synced bs=8k count=100 oflag=dsync conv=notrunc status=none; done &
wait
"""


def _totals(rows: list[tuple[dict, float]], col) -> dict:
    """Whole-run figures from per-interval (row, seconds): counts summed, awaits per request, levels per second."""
    out = {}
    for f in IOSTAT_COLUMN:
        if f in _WEIGHT:
            n = sum(r[col(_WEIGHT[f])] * s for r, s in rows)
            out[f] = sum(r[col(f)] * r[col(_WEIGHT[f])] * s for r, s in rows) / n if n else 0.0
        elif f in (M.DISK_AQU_SZ, M.DISK_UTIL_PCT):
            out[f] = sum(r[col(f)] * s for r, s in rows) / sum(s for _, s in rows)
        else:
            out[f] = sum(r[col(f)] * s for r, s in rows)
    return out


@pytest.mark.solo
@pytest.mark.skipif(not shutil.which("iostat"), reason="sysstat's iostat is not installed")
def test_device_figures_equal_iostat_over_the_same_seconds(make_cluster, tmp_path, capsys):
    cluster = make_cluster(autovacuum="off", synchronous_commit="on")
    cluster.connect(autocommit=True).execute("CREATE DATABASE iostat")
    pgbench = [str(find_client("pgbench")), "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres"]
    subprocess.run([*pgbench, "-i", "-q", "-s", "2", "iostat"], check=True, capture_output=True, timeout=120)
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    devices = [d for d, role in sampler.device_roles.items() if "data" in role]
    assert devices, f"no device found for the data directory: {sampler.device_roles}"
    scratch = tmp_path / "load"
    scratch.mkdir()
    load = subprocess.Popen(["sh", "-c", LOAD], cwd=scratch, start_new_session=True)
    bench = subprocess.Popen([*pgbench, "-n", "-c", "2", "-T", str(SECONDS + 3), "iostat"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ours: dict[str, list] = {d: [] for d in devices}
    theirs: dict[str, list] = {d: [] for d in devices}
    try:
        for i, report in enumerate(_IOSTAT.iostat_reports(devices, SECONDS + 1)):
            frame = sampler.sample(i, float(i))
            if i == 0:
                continue  # iostat's first report is since boot; the tick's is the baseline
            for d in devices:
                ours[d].append((frame.devices[d], frame.dt))
                theirs[d].append((report[d], frame.dt))
    finally:
        os.killpg(load.pid, 15)
        load.wait()
        bench.wait(60)
        sampler.close()
    lines = []
    for d in devices:
        a = _totals(ours[d], lambda f: f)
        b = _totals(theirs[d], lambda f: IOSTAT_COLUMN[f])
        for f in IOSTAT_COLUMN:
            lines.append(f"{d} {f}: ours {a[f]:.2f}, iostat {b[f]:.2f}")
            counted = f in (M.DISK_R_S, M.DISK_W_S, M.DISK_F_S, M.DISK_RKB_S, M.DISK_WKB_S)
            rel = 0.06 if f in (M.DISK_AQU_SZ, M.DISK_UTIL_PCT) else 0.03
            assert a[f] == pytest.approx(b[f], rel=rel, abs=0.05 * (SECONDS if counted else 1)), lines[-1]
        assert a[M.DISK_W_S] > 0 and a[M.DISK_R_S] > 0, "the load did not reach the device"
    with capsys.disabled():
        print("\n" + "\n".join(lines))
