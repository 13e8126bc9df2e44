"""How fast does replay open a day-long recording and seek in it?

Generates a synthetic 24 h recording at 1 Hz (tests/fixture_recording.py: 4 devices, the full
metric catalog, 8 pg_stat_io backend types, waits, a checkpoint every 30 s), or reuses one given
with --file. Then, in a fresh interpreter (so the generator's memory does not count): open it in a
headless ReplayApp and time until the first frame is drawn, seek to 10 random positions (history
window rebuilt from one batched read, panes redrawn), then back a little from there 9 times (1 tick,
30 s, 60 s: the window shares most of its ticks with the one before), and print ms and peak RSS.
Targets: <= 0.5 s to open, <= 50 ms per seek.

With --baseline DIR (another checkout, e.g. /work/main), the same file is measured with that
tree's pgio_tui and this one's, interleaved (baseline, this, this, baseline), so before and after
come from one run at one load.

    python bench/replay_open_seek.py [--hours 24] [--file F] [--keep F] [--baseline DIR] [--size 160x48] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = "PGIO_BENCH_TREE"  # the child measures the pgio_tui of this checkout (--baseline)
sys.path[:0] = [os.environ.get(TREE, str(ROOT)), str(ROOT / "tests")]

from cpu_and_load import interleaved  # noqa: E402 (beside this script)

OPEN_TARGET_MS, SEEK_TARGET_MS = 500, 50


def generate(path: Path, ticks: int) -> float:
    from fixture_recording import DEVICES, synthetic_frames

    from pgio_tui.store.writer import Recorder

    t0 = time.perf_counter()
    with Recorder(path, force=True, meta={"interval_s": 1.0, "host": "bench-host", "server_version": "17.2"}) as rec:
        for f in synthetic_frames(ticks, devices=DEVICES, incidents=False):
            rec.write(f)
    return time.perf_counter() - t0


def measure(path: str, size: tuple[int, int], seed: int) -> dict:
    """Runs in its own interpreter: imports first (not part of "open"), then the clock starts."""
    from pgio_tui.store.reader import Recording
    from pgio_tui.tui.replay import ReplayApp

    out: dict = {}

    async def run() -> None:
        t0, t0_mono, c0 = time.perf_counter(), time.monotonic(), time.process_time()
        try:
            rec = Recording(path, lazy=True)  # as `replay` opens a file
        except TypeError:  # a baseline tree from before lazy opening
            rec = Recording(path)
        out["recording_open_ms"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        app = ReplayApp(rec, playing=False)
        out["player_and_window_ms"] = (time.perf_counter() - t1) * 1000
        async with app.run_test(size=size) as pilot:
            while app.first_frame_at is None:
                await pilot.pause(0.005)
            out["first_frame_ms"] = (app.first_frame_at - t0_mono) * 1000
            out["first_frame_cpu_ms"] = (time.process_time() - c0) * 1000  # polled: up to 5 ms late
            await app.workers.wait_for_complete()
            out["moments_background_ms"] = (time.monotonic() - t0_mono) * 1000
            out["moments"] = len(app.player.moments)
            rng = random.Random(seed)
            seeks, drawn, cpu = [], [], []
            for _ in range(10):
                tick = rng.randrange(rec.first_tick, rec.last_tick + 1)
                s0, sc0 = time.perf_counter(), time.process_time()
                app.seek_tick(tick)  # player move + one batched read of the window + redraw
                seeks.append((time.perf_counter() - s0) * 1000)
                cpu.append((time.process_time() - sc0) * 1000)
                await pilot.pause()  # the compositor paints it
                drawn.append((time.perf_counter() - s0) * 1000)
                assert app.history.last.tick == app.player.tick
            out["seek_ms"], out["seek_painted_ms"], out["seek_cpu_ms"] = seeks, drawn, cpu
            near = []  # back a little from there: the window read again (what it shares with the last reused)
            for back in (1, 1, 1, 30, 30, 30, 60, 60, 60):
                s0 = time.perf_counter()
                app.seek_tick(app.player.tick - back)
                near.append((time.perf_counter() - s0) * 1000)
                await pilot.pause()
            out["near_seek_ms"] = near
            out["window_ticks"] = len(app.history)
            out["ticks"] = len(app.player)  # counted now (a lazy Recording counts on the first ask)
        rec.close()

    asyncio.run(run())
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["load"] = os.getloadavg()[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--file", type=Path, help="measure this recording (no generation)")
    ap.add_argument("--keep", type=Path, help="write the generated recording here (reused next time)")
    ap.add_argument("--size", default="160x48", help="terminal size, WxH")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--baseline", type=Path, help="also measure this checkout's pgio_tui, interleaved")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # the child: JSON on stdout
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.split("x"))
    if args.measure:
        print(json.dumps(measure(args.measure, (w, h), args.seed)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or args.keep or Path(tmp) / "day.pgio"
        ticks = int(args.hours * 3600)
        if args.file is None and not (args.keep and args.keep.exists()):
            print(f"generating {ticks} ticks ({args.hours:g} h at 1 Hz, 4 devices, full catalog)...", flush=True)
            secs = generate(path, ticks)
            print(f"  written in {secs:.1f} s")
        print(f"file: {path.stat().st_size / 1e6:.1f} MB")
        for label, tree in interleaved(ROOT, args.baseline):
            r = subprocess.run([sys.executable, __file__, "--measure", str(path), "--size", args.size,
                                "--seed", str(args.seed)], capture_output=True, text=True, env={**os.environ, TREE: tree})
            if r.returncode:
                sys.exit(r.stderr)
            report(label, json.loads(r.stdout.strip().splitlines()[-1]), args.size)


def report(label: str, m: dict, size: str) -> None:
    seeks, painted = sorted(m["seek_ms"]), sorted(m["seek_painted_ms"])
    ok = lambda v, target: "OK" if v <= target else "OVER"  # noqa: E731
    print(f"== {label}: load average {m['load']:.2f}")
    print(f"ticks: {m['ticks']}, history window at a seek: {m['window_ticks']} ticks, terminal {size}")
    print(f"open:  Recording() {m['recording_open_ms']:.1f} ms, player index + first window "
          f"{m['player_and_window_ms']:.1f} ms, first frame drawn {m['first_frame_ms']:.0f} ms "
          f"(target <= {OPEN_TARGET_MS} ms: {ok(m['first_frame_ms'], OPEN_TARGET_MS)})")
    print(f"seek:  10 random positions: median {seeks[4]:.1f} ms, max {seeks[-1]:.1f} ms "
          f"(target <= {SEEK_TARGET_MS} ms: {ok(seeks[-1], SEEK_TARGET_MS)}); "
          f"until painted: median {painted[4]:.1f} ms, max {painted[-1]:.1f} ms")
    print(f"       each: {', '.join(f'{v:.0f}' for v in m['seek_ms'])} ms")
    near = sorted(m["near_seek_ms"])
    print(f"seek back nearby (1 tick, 30 s, 60 s; 3 each): median {near[4]:.1f} ms, max {near[-1]:.1f} ms "
          f"({', '.join(f'{v:.0f}' for v in m['near_seek_ms'])})")
    print(f"CPU (what the machine's load does not stretch): to the first frame {m['first_frame_cpu_ms']:.0f} ms, "
          f"a seek median {sorted(m['seek_cpu_ms'])[4]:.1f} ms, max {max(m['seek_cpu_ms']):.1f} ms")
    print(f"moments (n/N, scrubber marks): {m['moments']} found on a worker, ready "
          f"{m['moments_background_ms']:.0f} ms after opening (the first frame does not wait for them)")
    print(f"peak RSS: {m['peak_rss_mb']:.0f} MB (the replaying process)")


if __name__ == "__main__":
    main()
