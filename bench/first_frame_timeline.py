"""Where `pgio-tui live`'s start-up goes in time: wall and CPU at each step, on which thread.

Each start runs on a pseudo-terminal of 80x24 (bench/first_frame.py's screen model) against a lab
cluster under pgbench (or --conn), with marks patched in by a wrapper as the modules are imported
(pgio-tui itself has no hooks): the interpreter up, the CLI imported, the connection thread
started, `App.run`, the monitor's first paint (header and panes: the moment the connection is let
go, on the thread that lets it go), the sampler opened, the first sample, the first data drawn, the
second frame (the first rates). Printed: the median of each mark's wall time from exec and of the
process's CPU by then, the thread, and when the first frame was seen on the terminal; the load
average beside. bench/first_frame.py times the same starts from outside, against the bare Textual
app and pg_activity; bench/first_frame_split.py counts their instructions.

--profile also profiles the main thread from `App.run` to the first paint (cProfile, every run
merged) and prints the functions by cumulative time. A tree older than the first paint's mark
(issue 28) prints the marks it has.

    python bench/first_frame_timeline.py [--runs 8] [--conn CONNINFO] [--tree DIR] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import first_frame as ff  # noqa: E402  (the pty, the needles, the lab cluster)

WRAPPER = r'''
import json, os, sys, threading, time
T0, OUT, PROF = float(os.environ["T0"]), os.environ["MARKS_OUT"], os.environ.get("PROF")
prof = None

def mark(name):
    with open(OUT, "a") as fh:  # a line a mark: nothing to gather at the end
        fh.write(json.dumps([name, time.time() - T0, time.process_time(), threading.current_thread().name]) + "\n")

def stop_profile():
    global prof
    if prof is not None:
        prof.disable()
        prof.dump_stats(PROF)
        prof = None

mark("interpreter up")

def patch_feed(m):
    C = m.Connecting
    init = C.__init__
    def __init__(self, *a, **k):
        mark("connection thread started")
        init(self, *a, **k)
    C.__init__ = __init__
    if hasattr(C, "ui_painted"):
        painted = C.ui_painted
        def ui_painted(self):
            if not getattr(self, "_marked", False):
                self._marked = True
                mark("first paint: header and panes (the connection let go)")
            painted(self)
        C.ui_painted = ui_painted
    prime = m.LiveFeed.prime
    def primed(self, *a, **k):
        mark("sampler opened (psycopg imported, connected, features detected)")
        frame = prime(self, *a, **k)
        mark("first sample")
        return frame
    m.LiveFeed.prime = primed

def patch_app(m):
    A = m.MonitorApp
    run = A.run
    def app_run(self, *a, **k):
        global prof
        mark("App.run")
        if PROF:
            import cProfile
            prof = cProfile.Profile()
            prof.enable()
        return run(self, *a, **k)
    A.run = app_run
    if hasattr(A, "_painted"):
        painted = A._painted
        def composed(self):
            stop_profile()
            painted(self)
        A._painted = composed
    drawn = A._first_frame_drawn
    def first_drawn(self):
        stop_profile()
        mark("first data drawn")
        drawn(self)
    A._first_frame_drawn = first_drawn
    arrived = A.on_frame_arrived
    def on_frame_arrived(self, message):
        arrived(self, message)
        if len(self.history) == 2:
            mark("second frame drawn: the first rates")
    A.on_frame_arrived = on_frame_arrived

PATCHES = {"pgio_tui.tui.feed": patch_feed, "pgio_tui.tui.app": patch_app}

''' + ff.RUN_PATCHED.replace("MARK", "pgio_tui.cli imported")
RATES = "second frame drawn: the first rates"


def run(tree: Path, conninfo: str, outdir: Path, index: int, profile: bool) -> tuple[float | None, list]:
    """One start: when the first frame was seen on the terminal, and the marks."""
    marks = outdir / "marks.jsonl"
    marks.unlink(missing_ok=True)
    env = {"PYTHONPATH": str(tree), "XDG_CONFIG_HOME": str(outdir), "MARKS_OUT": str(marks)}
    if profile:
        env["PROF"] = str(outdir / f"profile{index}.out")

    def until_rates(proc) -> None:  # the frame is seen: let the start go on to its first rates
        limit = time.monotonic() + 10
        while time.monotonic() < limit and not (marks.exists() and RATES in marks.read_text()):
            time.sleep(0.02)

    env["T0"] = f"{time.time():.6f}"
    r = ff.run_once([sys.executable, str(outdir / "wrapper.py"), "live", conninfo, "--interval", "1"], env,
                    (80, 24), ff.LIVE_FRAME, at_first=until_rates)
    lines = marks.read_text().splitlines() if marks.exists() else []
    return r["first"], [json.loads(line) for line in lines]


def measure(tree: Path, conninfo: str, outdir: Path, runs: int, profile: bool) -> tuple[list, dict, list]:
    """`runs` starts: when each first frame was seen, each mark's (wall, CPU, thread), the load averages."""
    seen, got = [], {}
    loads = [os.getloadavg()]
    for i in range(runs):
        first, marks = run(tree, conninfo, outdir, i, profile)
        seen.append(first)
        for name, wall, cpu, thread in marks:
            got.setdefault(name, []).append((wall, cpu, thread))
    loads.append(os.getloadavg())
    return seen, got, loads


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--conn", help="a running server's conninfo (default: a lab cluster under pgbench)")
    ap.add_argument("--tree", type=Path, default=ff.ROOT, help="the pgio-tui source tree (default: this one)")
    ap.add_argument("--profile", action="store_true", help="cProfile the main thread, App.run to the first paint")
    args = ap.parse_args()
    tree = args.tree.resolve()
    ff.compiled(tree)
    outdir = Path(tempfile.mkdtemp(prefix="pgio-tui-timeline-"))
    (outdir / "wrapper.py").write_text(WRAPPER)
    try:
        with ff.lab_server(args.conn) as (conninfo, described):
            seen, got, loads = measure(tree, conninfo, outdir, args.runs, args.profile)
        print(f"pgio-tui live from {tree} against {described}, {args.runs} starts on an 80x24 pty; medians: "
              "wall s from exec, process CPU s by then, thread")
        for name, values in sorted(got.items(), key=lambda kv: statistics.median(v[0] for v in kv[1])):
            print(f"  {name:62} {statistics.median(v[0] for v in values):6.3f} "
                  f"{statistics.median(v[1] for v in values):6.3f}  {values[0][2]}"
                  + (f"  ({len(values)} of {args.runs})" if len(values) < args.runs else ""))
        shown = [s for s in seen if s is not None]
        if shown:
            print(f"  {'first frame seen on the terminal (header, a pane, the footer)':62} "
                  f"{statistics.median(shown):6.3f}")
        print("load average (1/5/15 min) before / after: "
              + " / ".join(" ".join(f"{v:.2f}" for v in la) for la in loads) + f" on {os.cpu_count()} CPUs")
        profiles = [str(p) for p in sorted(outdir.glob("profile*.out"))]
        if profiles:
            print(f"main thread, App.run to the first paint (cProfile, {len(profiles)} runs merged):")
            pstats.Stats(*profiles, stream=sys.stdout).sort_stats("cumulative").print_stats(30)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
