"""How fast does a `record --rotate` folder open as one timeline, and seek in it?

Writes a synthetic folder (tests/fixture_recording.py frames at 1 Hz through the real
RotatingRecorder, one file per --rotate seconds), then times: opening the Timeline (every file
opened and checked), the Player's index of every tick, and 10 seeks to random times, each reading
the 5-minute window the replay screen loads. Prints figures; asserts nothing.

    python bench/timeline_open.py [--files 168] [--rotate 3600] [--ticks-per-file 300]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixture_recording import START_T, synthetic_frames  # noqa: E402

from pgio_tui.store.player import Player  # noqa: E402
from pgio_tui.store.rotation import Rotation, RotatingRecorder  # noqa: E402
from pgio_tui.store.timeline import Timeline  # noqa: E402


def write(folder: Path, files: int, rotate: float, per_file: int) -> None:
    """`files` periods of `rotate` s, each holding its first `per_file` ticks (a gap after them:
    the write stays short, the layout is that of a long folder)."""
    rec = RotatingRecorder(folder, Rotation(rotate), meta={"interval_s": 1.0, "host": "bench"}, now=lambda: START_T)
    for i in range(files):
        t0 = START_T + i * rotate
        for f in synthetic_frames(per_file, interval=1.0, start_t=t0, incidents=False):
            f.tick += int(i * rotate)
            rec.write(f)
    rec.close("stopped")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=168)
    ap.add_argument("--rotate", type=float, default=3600.0)
    ap.add_argument("--ticks-per-file", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "always"
        t0 = time.perf_counter()
        write(folder, args.files, args.rotate, args.ticks_per_file)
        print(f"wrote {args.files} files of {args.ticks_per_file} ticks in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        with Timeline(folder) as t:
            opened = time.perf_counter() - t0
            t0 = time.perf_counter()
            player = Player(t)
            indexed = time.perf_counter() - t0
            rng = random.Random(1)
            seeks = []
            for _ in range(10):
                at = rng.uniform(t.start_t, t.end_t)
                t0 = time.perf_counter()
                player.seek_time(at)
                first = player.tick_since(player.t - 300)
                n = sum(1 for _ in t.frames(first, player.tick))
                seeks.append(time.perf_counter() - t0)
            from pgio_tui.store.timeline import copy_window
            t0 = time.perf_counter()
            copied = copy_window(t, Path(tmp) / "window.pgio", t.tick_at(t.start_t + 2 * args.rotate),
                                 t.tick_at(t.start_t + 3 * args.rotate))
            copy_s = time.perf_counter() - t0
            print(f"load average {os.getloadavg()[0]:.2f}")
            print(f"{len(t.files)} files, {t.tick_count} ticks: open {opened * 1000:.0f} ms "
                  f"({opened * 1000 / len(t.files):.1f} ms a file), player index {indexed * 1000:.0f} ms, "
                  f"seek + 5-minute window ({n} frames) median {sorted(seeks)[5] * 1000:.0f} ms, "
                  f"max {max(seeks) * 1000:.0f} ms; a window of {copied} ticks copied to one file (diff, report) "
                  f"in {copy_s:.2f} s")


if __name__ == "__main__":
    main()
