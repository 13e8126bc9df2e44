"""How long, and how much memory, do replay's moments (n/N, the scrubber's marks) take on a long file?

Runs what replay's moments worker runs on a finished recording (store/moments.find_moments, then
the findings' moments: analysis/findings_out.with_findings), each part in a fresh interpreter, and
prints its wall and CPU time, the moments found and the process's peak RSS (the interpreter and its
imports included: `python -c pass` with the same imports is printed as the floor). With --baseline
DIR, another checkout's pgio_tui is measured on the same file, interleaved (baseline, this, this,
baseline). The recording is one of bench/replay_open_seek.py's (--keep).

    python bench/replay_moments.py FILE [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = "PGIO_BENCH_TREE"  # the child measures the pgio_tui of this checkout (--baseline)
sys.path[:0] = [os.environ.get(TREE, str(ROOT))]

from cpu_and_load import interleaved  # noqa: E402 (beside this script)

PARTS = ("imports only", "find_moments", "find_moments + findings")


def measure(path: str, part: str) -> dict:
    """In its own interpreter: the peak RSS is this part's."""
    from pgio_tui.analysis.findings_out import with_findings
    from pgio_tui.store.moments import find_moments
    from pgio_tui.store.timeline import open_recording

    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    if part != "imports only":
        with open_recording(path) as rec:  # as the worker opens it
            found = find_moments(rec)
            if part == "find_moments + findings":
                found = with_findings(found, rec)
            n = len(found)
    return {"s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "moments": n,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--baseline", type=Path, help="also measure this checkout's pgio_tui, interleaved")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # the child: the part to run; JSON on stdout
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(str(args.file), args.measure)))
        return
    print(f"file: {args.file} ({args.file.stat().st_size / 1e6:.1f} MB)")
    for label, tree in interleaved(ROOT, args.baseline):
        print(f"== {label}")
        for part in PARTS:
            r = subprocess.run([sys.executable, __file__, str(args.file), "--measure", part], capture_output=True,
                               text=True, env={**os.environ, TREE: tree})
            if r.returncode:
                sys.exit(r.stderr)
            m = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"  {part:24s} {m['s']:6.1f} s (CPU {m['cpu_s']:5.1f} s)  {m['moments']:6d} moments  "
                  f"peak RSS {m['peak_rss_mb']:6.0f} MB  (load average {m['load']:.2f})")


if __name__ == "__main__":
    main()
