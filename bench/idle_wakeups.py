"""What a TUI left standing costs: CPU and wake-ups per thread while nothing changes on screen.

Each case runs in a real terminal (a detached tmux pane, 120x40) on the recordings in tests/data:
a replay paused with space, a replay that played to the end of a closed file, the diff screen and
the replay picker. After --warmup seconds (and the keys the case sends), it reads every thread's
utime+stime and voluntary context switches (wake-ups after sleeping) from /proc over --duration
seconds. A screen with nothing to do should use no CPU and wake no thread.

    python bench/idle_wakeups.py [--duration 20] [--warmup 4] [--baseline TREE]

--baseline TREE runs each case from that tree too, right after this one's, for a before/after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import tui_cpu as T  # noqa: E402  (tmux panes, bytecode compiled first, /proc CPU)

DATA = ROOT / "tests" / "data" / "recordings"
CASES = {  # name: (pgio-tui arguments, keys sent after the warm-up)
    "replay, paused": (f"replay {DATA / 'fixture-v2.sqlite'}", ["space"]),
    "replay, at the end": (f"replay {DATA / 'fixture-v2.sqlite'} --speed 100", []),  # 59 s: played in 0.6 s
    "diff": (f"diff {DATA / 'fixture-v1.sqlite'} {DATA / 'fixture-v2.sqlite'}", []),
    "replay picker": (f"replay {DATA}", []),
}


def wakeups(pid: int) -> dict[int, tuple[float, int]]:
    """Each thread's CPU seconds and voluntary context switches."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            cpu = T.cpu_seconds(f"{pid}/task/{tid}")
            with open(f"/proc/{pid}/task/{tid}/status") as fh:
                vol = int(next(ln for ln in fh if ln.startswith("voluntary_ctxt_switches")).split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
        out[int(tid)] = (cpu, vol)
    return out


def measure(tree: Path, args: str, keys: list[str], warmup: float, duration: float) -> tuple[float, list[str]]:
    """The pane's process CPU % and, per thread (the main one first), 'cpu% / wake-ups a second'."""
    name = "idle"
    pid = T.start_pane(name, 120, 40, f"env {T.compiled(tree)} {sys.executable} -m pgio_tui {args}",
                       {"XDG_CONFIG_HOME": str(Path(os.environ.get("TMPDIR", "/tmp")))}, tree)
    try:
        time.sleep(warmup)
        for key in keys:
            T.tmux("send-keys", "-t", name, key)
        time.sleep(1.0 if keys else 0.0)
        before, t0 = wakeups(pid), time.monotonic()
        time.sleep(duration)
        after, wall = wakeups(pid), time.monotonic() - t0
    finally:
        subprocess.run([*T.TMUX, "kill-session", "-t", name], capture_output=True)
    rows = []
    for tid in sorted(after, key=lambda t: t != pid):
        cpu, vol = after[tid]
        cpu0, vol0 = before.get(tid, (0.0, 0))
        rows.append(f"{100 * (cpu - cpu0) / wall:.2f}% / {(vol - vol0) / wall:.2f}")
    total = sum(after[t][0] - before.get(t, (0.0, 0))[0] for t in after)
    return 100 * total / wall, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=20, help="seconds measured per case (default 20)")
    ap.add_argument("--warmup", type=float, default=4, help="seconds before (default 4)")
    ap.add_argument("--baseline", type=Path, help="another pgio-tui source tree, measured after this one")
    args = ap.parse_args()
    trees = [("now", ROOT)] + ([("before", args.baseline.resolve())] if args.baseline else [])
    load0 = os.getloadavg()[0]
    print(f"120x40, {args.duration:g} s per case; CPU % of a core / wake-ups a second, per thread (main first)")
    try:
        for case, (cmd, keys) in CASES.items():
            for label, tree in trees:
                total, rows = measure(tree, cmd, keys, args.warmup, args.duration)
                print(f"  {case:20} {label:7} total {total:.2f}%   " + "   ".join(rows), flush=True)
    finally:
        subprocess.run([*T.TMUX, "kill-server"], capture_output=True)
    print(f"load average (1 min) {load0:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
