"""How fast does a `record --rotate` folder open as one timeline, and seek in it?

Writes a synthetic folder (tests/fixture_recording.py frames at 1 Hz through the real
RotatingRecorder, one file per --rotate seconds), then times: opening the Timeline (every file
opened and checked), the Player's index of every tick, and 10 seeks to random times, each reading
the 5-minute window the replay screen loads. Prints figures; asserts nothing.

With --baseline DIR (another checkout), the same folder is measured with that tree's pgio_tui and
this one's, interleaved (baseline, this, this, baseline); --keep DIR writes the folder once.

    python bench/timeline_open.py [--files 168] [--rotate 3600] [--ticks-per-file 300] [--keep DIR] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = "PGIO_BENCH_TREE"  # the child measures the pgio_tui of this checkout (--baseline)
sys.path[:0] = [os.environ.get(TREE, str(ROOT)), str(ROOT / "tests")]

from cpu_and_load import interleaved  # noqa: E402 (beside this script)

from fixture_recording import START_T, synthetic_frames  # noqa: E402

from pgio_tui.store.rotation import Rotation, RotatingRecorder  # noqa: E402


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


def measure(folder: Path, tmp: Path, rotate: float) -> None:
    """Open, index and seek in `folder` with the pgio_tui first on sys.path; prints one line."""
    from pgio_tui.store.player import Player
    from pgio_tui.store.timeline import Timeline, copy_window
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
            since = getattr(player, "tick_since", None)  # a baseline tree from before the span index
            first = since(player.t - 300) if since else player.ticks[max(0, player.index - 300)]
            n = sum(1 for _ in t.frames(first, player.tick))
            seeks.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        (tmp / "window.pgio").unlink(missing_ok=True)  # the previous child's
        copied = copy_window(t, tmp / "window.pgio", t.tick_at(t.start_t + 2 * rotate), t.tick_at(t.start_t + 3 * rotate))
        copy_s = time.perf_counter() - t0
        print(f"load average {os.getloadavg()[0]:.2f}: {len(t.files)} files, {t.tick_count} ticks: open "
              f"{opened * 1000:.0f} ms ({opened * 1000 / len(t.files):.1f} ms a file), player index {indexed * 1000:.0f} ms, "
              f"seek + 5-minute window ({n} frames) median {sorted(seeks)[5] * 1000:.0f} ms, "
              f"max {max(seeks) * 1000:.0f} ms; a window of {copied} ticks copied to one file (diff, report) "
              f"in {copy_s:.2f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=168)
    ap.add_argument("--rotate", type=float, default=3600.0)
    ap.add_argument("--ticks-per-file", type=int, default=300)
    ap.add_argument("--keep", type=Path, help="write the folder here (reused when it exists)")
    ap.add_argument("--baseline", type=Path, help="also measure this checkout's pgio_tui, interleaved")
    ap.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # the child: FOLDER TMP
    args = ap.parse_args()
    if args.measure:
        measure(Path(args.measure[0]), Path(args.measure[1]), args.rotate)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "always"
        if not folder.exists():
            t0 = time.perf_counter()
            write(folder, args.files, args.rotate, args.ticks_per_file)
            print(f"wrote {args.files} files of {args.ticks_per_file} ticks in {time.perf_counter() - t0:.1f} s")
        for label, tree in interleaved(ROOT, args.baseline):
            print(f"{label}: ", end="", flush=True)
            subprocess.run([sys.executable, __file__, "--rotate", str(args.rotate), "--measure", str(folder), tmp],
                           check=True, env={**os.environ, TREE: tree})


if __name__ == "__main__":
    main()
