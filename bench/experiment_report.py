"""How long does `experiment report` take on a big experiment, and how big is its HTML page?

Makes an experiment folder of synthetic runs (tests/fixture_recording.py: the full metric catalog,
4 busy devices, 20 top statements every 5 s) — a 3 × 3 grid with 2 repeats by default, 18 runs — of
`--minutes` each at 1 Hz, then times the figures of every run (collect), the text table and the
HTML page (the charts read every run's ticks again), and prints the page's size.

    python bench/experiment_report.py [--minutes 60] [--values 3] [--repeat 2] [--keep DIR]

--keep DIR makes the folder there, or reuses it when it holds an experiment (its runs as they are).
PGIO_BENCH_TREE=DIR measures that checkout's pgio_tui (before and after on one folder).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [os.environ.get("PGIO_BENCH_TREE", str(ROOT)), str(ROOT / "tests")]  # another checkout's pgio_tui

from fixture_recording import write_fixture  # noqa: E402

from pgio_tui.experiments import results  # noqa: E402
from pgio_tui.experiments.plan import Plan, load, save  # noqa: E402
from pgio_tui.experiments.report import render  # noqa: E402


def make(folder: Path, values: int, repeat: int, ticks: int) -> Plan:
    plan = Plan(sweep={"shared_buffers": [f"{64 * (i + 1)}MB" for i in range(values)],
                       "os.page_cache": [f"{100 * (i + 1)}MB" for i in range(values)]}, repeat=repeat,
                order="interleaved", workload={"kind": "pgbench", "args": ["-T", str(ticks)]}, target={"lab": True})
    plan.make_runs()
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    for run in plan.runs:
        run.file = plan.run_file(run)
        write_fixture(folder / run.file, n=ticks, seed=run.index, incidents=False, force=True)
        run.state = "done"
    save(plan, folder)
    return plan


def cpu_timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--values", type=int, default=3, help="values per setting (a values × values grid)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="make the folder here and keep it")
    args = ap.parse_args()
    ticks = int(args.minutes * 60)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "exp"
        if (folder / "experiment.json").exists():
            plan = load(folder)
            print(f"{folder}: {len(plan.runs)} runs, load average {os.getloadavg()[0]:.2f}")
        else:
            wall, _, plan = cpu_timed(lambda: make(folder, args.values, args.repeat, ticks))
            print(f"{len(plan.runs)} runs of {ticks} ticks written in {wall:.1f} s")
        baseline = results.parse_baseline(None, plan)
        wall, cpu, res = cpu_timed(lambda: results.collect(plan, folder, baseline))
        print(f"figures of every run (collect): {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"({wall / len(plan.runs) * 1000:.0f} ms per run)")
        wall, cpu, text = cpu_timed(lambda: render(res, "table"))
        print(f"table: {wall:.3f} s wall, {cpu:.2f} s CPU, {len(text.splitlines())} lines")
        wall, cpu, page = cpu_timed(lambda: render(res, "html"))
        print(f"html: {wall:.2f} s wall, {cpu:.2f} s CPU, {len(page.encode()) / 1024:.0f} KiB "
              f"({page.count('<svg')} charts)")


if __name__ == "__main__":
    main()
