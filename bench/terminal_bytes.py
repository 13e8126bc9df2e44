"""Bytes `pgio-tui live` sends to its terminal, row by row: where the bytes of bench/tui_cpu.py go.

Starts a lab cluster under pgbench (-c 4, scale 10, as tui_cpu.py), runs `pgio-tui live` from each
tree given in a tmux pane of SIZE, waits --warmup seconds, captures every byte it writes for
--seconds (tmux pipe-pane) and prints the rate, the share that is colour codes (SGR) and text, and
the bytes per screen row (the row of the last cursor move before them). Trees run one after the
other on the same cluster, so the load is alike but not the same moment.

Early in a session the monitor's window is fitted to its length (10 s, 20 s, ... 5 min), so the
charts scroll faster then: --warmup 10 (the default) measures that; --warmup 310 the steady state.

    python bench/terminal_bytes.py [--tree DIR ...] [--size 80x24] [--warmup 10] [--seconds 40]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import tui_cpu as T  # noqa: E402  (tmux, the pgbench load, compiled trees)

from pgio_tui.workloads.cluster import Cluster  # noqa: E402

TOKEN = re.compile(rb"\x1b\[(\d+);(\d+)H|(\x1b\[[0-9;:]*m)|(\x1b\[[^a-zA-Z]*[a-zA-Z])|([^\x1b]+)")


def per_row(data: bytes) -> tuple[int, int, dict[int, int]]:
    """(SGR bytes, text bytes, bytes per screen row) of a capture."""
    rows: dict[int, int] = collections.Counter()
    sgr = text = row = 0
    for m in TOKEN.finditer(data):
        if m.group(1):
            row = int(m.group(1))
        elif m.group(3):
            sgr += len(m.group(0))
        elif m.group(5):
            text += len(m.group(0))
        rows[row] += len(m.group(0))
    return sgr, text, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tree", type=Path, action="append", help="a pgio-tui source tree (default: this one)")
    ap.add_argument("--size", type=T.parse_size, default=(80, 24))
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--seconds", type=float, default=40)
    args = ap.parse_args()
    trees = [t.resolve() for t in args.tree or [ROOT]]
    out = Path(tempfile.mkdtemp(prefix="pgio-tui-bytes-"))
    with Cluster(settings={"shared_buffers": "128MB", "checkpoint_timeout": "60s", "max_wal_size": "256MB"}) as c:
        load = T.pgbench_load(c, 4, len(trees) * (args.warmup + args.seconds + 10) + 30, 10)
        try:
            for k, tree in enumerate(trees):
                name, capture = f"bytes{k}", out / f"{k}.bytes"
                cmd = f"env {T.compiled(tree)} {sys.executable} -m pgio_tui live '{c.conninfo()}' --interval 1"
                T.start_pane(name, *args.size, cmd, {"XDG_CONFIG_HOME": str(out)}, tree)
                time.sleep(args.warmup)
                T.tmux("pipe-pane", "-o", "-t", name, f"cat >> '{capture}'")
                time.sleep(args.seconds)
                T.tmux("pipe-pane", "-t", name)
                T.tmux("kill-session", "-t", name)
                data = capture.read_bytes() if capture.exists() else b""
                sgr, text, rows = per_row(data)
                print(f"{tree}: {len(data) / 1024 / args.seconds:.2f} KiB/s at {args.size[0]}x{args.size[1]} "
                      f"({args.seconds:g} s after {args.warmup:g} s; colour codes {sgr}, text {text} of "
                      f"{len(data)} bytes; load average {os.getloadavg()[0]:.2f})")
                print("  bytes per row: " + " ".join(f"{r}:{n}" for r, n in sorted(rows.items())))
        finally:
            load.terminate()
            load.communicate(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
