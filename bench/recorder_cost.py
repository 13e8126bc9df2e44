"""What recording costs: client CPU, server time per tick, bytes per hour — under pgbench load.

Starts a lab cluster (or uses --dsn), runs pgbench for the whole window, and records with the real
`pgio-tui record` command at 1 Hz. Prints figures; asserts nothing (these machines are noisy).

    python bench/recorder_cost.py --seconds 300
    python bench/recorder_cost.py --seconds 300 --rotate 1m   # the always-on recorder, rotations included
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from cpu_and_load import cpu_seconds, pct, pgbench_load

from pgio_tui.store.reader import Recording


def snapshot_size(path: Path, copy: Path) -> tuple[int, int]:
    """Size a finished file would have now: a consistent copy, vacuumed like close() does."""
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    ticks = dst.execute("SELECT count(*) FROM ticks").fetchone()[0]
    dst.execute("PRAGMA journal_mode=DELETE")
    dst.execute("VACUUM")
    dst.close()
    src.close()
    return copy.stat().st_size, ticks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--rotate", metavar="PERIOD", help="record --rotate PERIOD into a folder (cost with rotations)")
    args = ap.parse_args()
    if args.rotate:
        return rotating(args)

    with pgbench_load(args.clients, args.scale, args.seconds + 30) as (cluster, tmp):
        time.sleep(3)
        out = tmp / "cost.pgio"
        rec = subprocess.Popen([sys.executable, "-m", "pgio_tui", "record", "-d", cluster.conninfo(), "-o", str(out),
                                "--interval", str(args.interval), "--duration", str(args.seconds), "--quiet"])
        time.sleep(2)  # leave start-up (imports, connect) out of the steady-state figure
        c0, w0 = cpu_seconds(rec.pid), time.monotonic()
        early = args.seconds / 5  # a snapshot of the file then: the growth after it is the steady rate
        time.sleep(early)
        size_early, ticks_early = snapshot_size(out, tmp / "early.pgio")
        time.sleep(max(1.0, args.seconds - 4 - early))
        c1, w1 = cpu_seconds(rec.pid), time.monotonic()
        rec.wait(timeout=60)

        with Recording(out) as r:
            frames = list(r.frames())
            server = [f.values["observer.server_ms"] for f in frames if f.values.get("observer.server_ms") is not None]
            collect = [f.values["observer.collect_ms"] for f in frames if f.values.get("observer.collect_ms") is not None]
            duration, devices = r.duration, len(r.devices)
        size = out.stat().st_size
        steady = (c1 - c0) / (w1 - w0) * 100
        print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}, "
              f"{len(frames)} ticks at {args.interval:g} s, {devices} device(s)")
        print(f"recorder CPU (steady state)   : {steady:.2f} % of one core  (target <= 0.5 %)")
        print(f"server ms per tick            : mean {sum(server) / len(server):.3f}, p95 {pct(server, .95):.3f}, "
              f"max {max(server):.3f}  (target <= 2 ms)")
        print(f"client collect ms per tick    : mean {sum(collect) / len(collect):.2f}, p95 {pct(collect, .95):.2f}")
        steady_rate = (size - size_early) / ((len(frames) - ticks_early) * args.interval) * 3600 / 1e6
        print(f"recording size                : {size} bytes for {duration:.0f} s = "
              f"{size / duration * 3600 / 1e6:.2f} MB per hour including the fixed part (schema, settings); "
              f"steady growth {steady_rate:.2f} MB per hour  (target <= 2 MB/h with 4 devices)")


def rotating(args) -> None:
    """The always-on recorder: CPU over whole periods (each rotation closes and vacuums a file),
    bytes per hour of the files it leaves."""
    from pgio_tui.store.rotation import rotated_files
    from pgio_tui.store.timeline import Timeline
    with pgbench_load(args.clients, args.scale, args.seconds + 30) as (cluster, tmp):
        time.sleep(3)
        out = tmp / "always"
        rec = subprocess.Popen([sys.executable, "-m", "pgio_tui", "record", "-d", cluster.conninfo(), "-o", str(out),
                                "--interval", str(args.interval), "--duration", str(args.seconds), "--quiet",
                                "--rotate", args.rotate])
        time.sleep(2)
        c0, w0 = cpu_seconds(rec.pid), time.monotonic()
        time.sleep(max(1.0, args.seconds - 4))
        c1, w1 = cpu_seconds(rec.pid), time.monotonic()
        rec.wait(timeout=60)
        files = rotated_files(out)
        with Timeline(out) as t:
            duration, ticks = t.duration, t.tick_count
        sizes = []
        for p in files:
            with Recording(p) as r:
                sizes.append((r.tick_count, p.stat().st_size))
        size = sum(b for _, b in sizes)
        # size = fixed + per_tick * ticks over the files (least squares): what an hour's file would be
        n = len(sizes)
        mx, my = sum(t for t, _ in sizes) / n, size / n
        var = sum((t - mx) ** 2 for t, _ in sizes)
        per_tick = sum((t - mx) * (b - my) for t, b in sizes) / var if var else my / mx
        fixed = my - per_tick * mx
        hour = fixed + per_tick * 3600 / args.interval
        shutil.rmtree(out)  # pgbench_load's clean-up removes files only
        print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}, {ticks} ticks at "
              f"{args.interval:g} s in {len(files)} files (--rotate {args.rotate})")
        print(f"recorder CPU (rotations included): {(c1 - c0) / (w1 - w0) * 100:.3f} % of one core  (target <= 0.2 %)")
        print(f"files                            : {size} bytes for {duration:.0f} s; per file {fixed / 1e3:.0f} kB "
              f"fixed + {per_tick:.0f} bytes a tick: an hour's file {hour / 1e6:.2f} MB  (target <= 3 MB/h)")


if __name__ == "__main__":
    main()
