"""How big is an hour of recording, and how fast is it to write, open, seek and read?

Records synthetic but realistic Frames (tests/fixture_recording.py: the full metric catalog with
noisy values, 4 busy devices, 8 pg_stat_io backend types, a few waits, a checkpoint every 30 s, 20
top statements per 5 s statement window) at 1 Hz, then prints bytes per hour, the share of each
table (its share and kB per hour), and read timings. Target: the whole file <= 3 MB/hour.

    python bench/recording_size.py [--ticks 3600] [--devices 4] [--keep FILE]
"""

from __future__ import annotations

import argparse
import io
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixture_recording import DEVICES, synthetic_frames  # noqa: E402

from pgio_tui.metrics import CATALOG  # noqa: E402
from pgio_tui.store.export import export  # noqa: E402
from pgio_tui.store.reader import Recording  # noqa: E402
from pgio_tui.store.writer import Recorder  # noqa: E402

TARGET_BYTES_PER_HOUR = 3_000_000


def table_sizes(path: Path) -> dict[str, int]:
    """Bytes per table, indexes included (needs SQLite's dbstat table; empty when missing)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat s "
            "LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:
        rows = []
    conn.close()
    return dict(rows)


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    t0 = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    return (time.perf_counter() - t0) / repeat * 1000, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=3600)
    ap.add_argument("--devices", type=int, default=4, choices=range(1, len(DEVICES) + 1))
    ap.add_argument("--keep", type=Path, help="write the recording here instead of a temp file")
    args = ap.parse_args()

    devices = dict(list(DEVICES.items())[: args.devices])
    frames = list(synthetic_frames(args.ticks, devices=devices, incidents=False))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.sqlite"
        # interval_s=0 sends every frame through the "commit at most once per second" path; the
        # bench writes faster than real time, so that makes the WAL see realistic commit sizes.
        rec = Recorder(path, force=True, meta={"interval_s": 1.0})
        t0 = time.perf_counter()
        for f in frames:
            rec.write(f)
        write_ms = (time.perf_counter() - t0) * 1000 / len(frames)
        close_ms, _ = timed(lambda: rec.close("bench"))
        size = path.stat().st_size
        per_hour = size * 3600 / args.ticks

        windows = [f for f in frames if f.statements]
        print(f"recording: {args.ticks} ticks at 1 Hz, {args.devices} devices, {len(CATALOG)} scalar metrics, "
              f"8 io backend types, ~{sum(len(f.waits) for f in frames) / len(frames):.1f} waits/tick, "
              f"{len(windows[0].statements) if windows else 0} top statements per "
              f"{frames[-1].t - frames[0].t and (frames[-1].t - frames[0].t) / max(1, len(windows)):.0f} s window")
        print(f"size:      {size:,} bytes = {per_hour / 1e6:.2f} MB ({per_hour / 2**20:.2f} MiB) per hour, "
              f"{per_hour / 3600:.0f} bytes/tick; target <= 3 MB/hour: "
              f"{'OK' if per_hour <= TARGET_BYTES_PER_HOUR else 'OVER'}")
        sizes = table_sizes(path)
        if sizes:
            print("by table:  " + ", ".join(f"{t} {b / size:.0%} ({b * 3600 / args.ticks / 1e3:.0f} kB/h)"
                                            for t, b in sizes.items() if b / size >= 0.005))
        print(f"write:     {write_ms:.3f} ms per frame (buffer + commit every frame at 1 Hz); "
              f"close (VACUUM, WAL checkpoint) {close_ms:.0f} ms")

        open_ms, rec_r = timed(lambda: Recording(path), 5)
        r = Recording(path)
        mid_t = (r.start_t + r.end_t) / 2
        seek_ms, _ = timed(lambda: r.tick_at(mid_t), 200)
        frame_ms, _ = timed(lambda: r.frame(r.tick_at(mid_t)), 50)
        frames_ms, n = timed(lambda: sum(1 for _ in r.frames()))
        series_ms, _ = timed(lambda: r.series("disk.nvme0n1.w_await_ms"), 5)
        names_ms, names = timed(lambda: Recording(path).metric_names())
        export_ms, _ = timed(lambda: export(r, io.StringIO(), "csv"))
        print(f"read:      open {open_ms:.1f} ms, tick_at {seek_ms:.3f} ms, frame {frame_ms:.2f} ms, "
              f"all frames {frames_ms:.0f} ms ({frames_ms / n * 1000:.0f} us/frame), "
              f"series {series_ms:.1f} ms, metric_names {names_ms:.1f} ms ({len(names)} names), "
              f"export csv {export_ms:.0f} ms")
        r.close()
        rec_r.close()


if __name__ == "__main__":
    main()
