"""Our per-device figures next to sysstat's `iostat -x` over the same seconds, and how far apart they are.

    python bench/iostat_compare.py [--path DIR] [--seconds N] [--no-load] [--clock monotonic|uptime]

iostat is started with `-o JSON` on a pty (so each report arrives as it is printed) and DiskSource
samples /proc/diskstats the moment each report shows up, so both cover the same second give or take
the time to print a line. Our dt is time.monotonic() like the sampler's (`--clock uptime` uses
/proc/uptime deltas like iostat, leaving only the sampling offset). Unless --no-load, a background
dd reads and writes with O_DIRECT, and another writes 8 kB blocks with O_DSYNC (flush requests, as
WAL commits make), in a scratch directory under DIR (64 MB files, removed at the end).
The final lines give the largest absolute difference per column (ours rounded to iostat's 2
decimals) and the largest relative one among values iostat printed as >= 1.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pgio_tui.frame import DEVICE_FIELDS  # noqa: E402
from pgio_tui.sources.disks import DiskSource, devices_for_path  # noqa: E402

IOSTAT_COLUMNS = ("r/s", "w/s", "rkB/s", "wkB/s", "r_await", "w_await", "aqu-sz", "util", "f/s", "f_await")
LOAD = """
dd if=/dev/zero of=seed bs=1M count=64 oflag=direct status=none
while :; do dd if=/dev/zero of=direct bs=64k count=1024 oflag=direct conv=notrunc status=none; done &
while :; do dd if=seed of=/dev/null bs=16k iflag=direct status=none; done &
while :; do dd if=/dev/zero of=synced bs=8k count=200 oflag=dsync conv=notrunc status=none; done &
wait
"""


def start_load(where: str) -> tuple[subprocess.Popen, str]:
    scratch = tempfile.mkdtemp(prefix=".pgio-iostat-compare-", dir=where)
    proc = subprocess.Popen(["sh", "-c", LOAD], cwd=scratch, start_new_session=True)
    time.sleep(1.0)  # let the seed file exist before the readers start timing
    return proc, scratch


def stop_load(proc: subprocess.Popen, scratch: str) -> None:
    os.killpg(proc.pid, signal.SIGTERM)  # the session we started: the shell, its loops, their dd
    proc.wait()
    shutil.rmtree(scratch, ignore_errors=True)


def iostat_reports(devices: list[str], count: int):
    """Yield each iostat -x report as {device: row}, as soon as its lines are printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(["iostat", "-x", "-d", "-k", "-o", "JSON", "1", str(count), *devices],
                            stdout=slave, stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
    os.close(slave)
    report: dict[str, dict] = {}
    try:
        with os.fdopen(master, "r", errors="replace") as out:
            for line in out:
                line = line.strip().rstrip(",")
                if line.startswith('{"disk_device"'):
                    row = json.loads(line)
                    report[row["disk_device"]] = row
                    if len(report) == len(devices):
                        yield report
                        report = {}
    except OSError:  # EIO on the pty once iostat exits
        pass
    finally:
        proc.wait()


def uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", default="/", help="compare the devices under this directory (default /)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--no-load", action="store_true", help="do not generate I/O")
    ap.add_argument("--clock", choices=("monotonic", "uptime"), default="monotonic")
    args = ap.parse_args()
    if not shutil.which("iostat"):
        sys.exit("iostat not found: apt-get install sysstat")
    devices = devices_for_path(args.path)
    if not devices:
        sys.exit(f"no block device found under {args.path}")
    clock = time.monotonic if args.clock == "monotonic" else uptime

    load = None if args.no_load else start_load(args.path)
    source = DiskSource(devices=devices)
    diffs: dict[str, list[tuple[float, float]]] = {f: [] for f in DEVICE_FIELDS}
    head = f"{'s':>3} {'device':<8} {'':<6}" + "".join(f"{c:>11}" for c in IOSTAT_COLUMNS)
    print(f"devices under {args.path}: {', '.join(devices)}; load: {'none' if load is None else 'dd O_DIRECT'}; "
          f"our dt: {args.clock}")
    print(head)
    try:
        t_prev = None
        for i, report in enumerate(iostat_reports(devices, args.seconds + 1)):
            t = clock()
            ours = source.sample(None if t_prev is None else t - t_prev)
            t_prev = t
            if i == 0:
                continue  # iostat's first report is since boot
            for dev in devices:
                a, b = ours[dev], report[dev]
                print(f"{i:>3} {dev:<8} {'pgio':<6}" + "".join(f"{a[f]:>11.2f}" for f in DEVICE_FIELDS))
                print(f"{'':>3} {'':<8} {'iostat':<6}" + "".join(f"{b[c]:>11.2f}" for c in IOSTAT_COLUMNS))
                for f, c in zip(DEVICE_FIELDS, IOSTAT_COLUMNS):
                    diffs[f].append((round(a[f], 2), b[c]))  # as iostat would print ours
    finally:
        if load is not None:
            stop_load(*load)

    # relative differences only where iostat printed >= 1: below that its 2 decimals dominate
    absmax = {f: max((abs(a - b) for a, b in v), default=0.0) for f, v in diffs.items()}
    rel = {f: [abs(a - b) / abs(b) for a, b in v if abs(b) >= 1] for f, v in diffs.items()}
    print(f"{'':>3} {'max |diff|':<15}" + "".join(f"{absmax[f]:>11.2f}" for f in DEVICE_FIELDS))
    print(f"{'':>3} {'max rel diff':<15}" + "".join(f"{100 * max(r):>10.2f}%" if r else f"{'-':>11}"
                                                    for r in rel.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
