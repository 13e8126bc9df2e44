"""How long does `pgio-tui diff` take on two long recordings, and how big is a report?

Records two synthetic runs (tests/fixture_recording.py: the full metric catalog, 4 busy devices,
a checkpoint every 30 s) at 1 Hz, B with backend writes cut by 30 % and latency 5 % lower, then
times the diff (open both files, summarize, judge every row with the block bootstrap, render
markdown) and the HTML report of one hour and of the two-run comparison. Targets: diff <= 1 s for
two 4 h recordings; a 1 h report small enough to mail.

    python bench/diff_speed.py [--hours 4] [--report-hours 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixture_recording import DEVICES, synthetic_frames  # noqa: E402

from pgio_tui.analysis import report  # noqa: E402
from pgio_tui.analysis.compare import compare  # noqa: E402
from pgio_tui.analysis.formats import markdown  # noqa: E402
from pgio_tui.frame import Event  # noqa: E402
from pgio_tui.store.writer import Recorder  # noqa: E402

TARGET_S = 1.0


def record(path: Path, ticks: int, seed: int, backend: float = 1.0, latency: float = 1.0) -> Path:
    """A synthetic run at 1 Hz with a workload over all of it; B scales backend writes and latency."""
    with Recorder(path, force=True, meta={"interval_s": 1.0, "host": "bench"}) as rec:
        rec.set_settings([("backend_flush_after", "0" if backend == 1.0 else "256", "8kB", "postgres")])
        for f in synthetic_frames(ticks, seed=seed, devices=DEVICES, incidents=False):
            if f.tick == 0:
                f.events.append(Event("workload_start", "pgbench"))
            v = f.values
            if v.get("writes.backend") is not None:
                v["writes.backend"] *= backend
            for k in ("latency.mean_ms", "latency.p50_ms", "latency.p95_ms", "latency.p99_ms", "latency.max_ms"):
                v[k] *= latency
            rec.write(f)
    return path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def cpu_timed(fn):
    """(wall s, CPU s of this process, result): on a shared machine the CPU time is the steadier
    figure, the wall time is what a user waits."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=4.0, help="length of each diffed recording (default 4)")
    ap.add_argument("--report-hours", type=float, default=1.0, help="length of the reported recording (default 1)")
    ap.add_argument("--keep", type=Path, help="write the recordings and reports here instead of a temp dir")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        ticks = int(args.hours * 3600)
        t_rec, _ = timed(lambda: (record(d / "a.pgio", ticks, 1), record(d / "b.pgio", ticks, 2, 0.7, 0.95)))
        print(f"recorded:  2 x {ticks} ticks ({args.hours:g} h at 1 Hz, {len(DEVICES)} devices, full catalog) "
              f"in {t_rec:.0f} s; {(d / 'a.pgio').stat().st_size / 1e6:.1f} MB each")
        runs = [cpu_timed(lambda: compare(d / "a.pgio", d / "b.pgio", "start")) for _ in range(3)]
        best, cpu, comparison = min(runs, key=lambda r: r[0])
        t_md, text = timed(lambda: markdown(comparison))
        judged = sum(1 for r in comparison.rows if r.verdict)
        total = best + t_md
        print(f"diff:      {total:.2f} s wall, {cpu + t_md:.2f} s CPU (best of 3: compare + markdown "
              f"{t_md * 1000:.0f} ms; {len(comparison.rows)} rows, {judged} judged; target <= {TARGET_S:g} s: "
              f"{'OK' if total <= TARGET_S else 'OVER'})")
        changed = [f"{r.group}/{r.name} {r.change_pct:+.1f} %" for r in comparison.rows if r.verdict == "changed"]
        print(f"changed:   {', '.join(changed) or 'nothing'}")

        rticks = int(args.report_hours * 3600)
        record(d / "r1.pgio", rticks, 3)
        record(d / "r2.pgio", rticks, 4, 0.7, 0.95)
        for name, paths in (("report", [d / "r1.pgio"]), ("comparison", [d / "r1.pgio", d / "r2.pgio"])):
            t, html = timed(lambda paths=paths: report.build(paths))
            out = d / f"{name}.html"
            out.write_text(html, encoding="utf-8")
            print(f"{name + ':':<11}{len(html.encode()) / 1024:.0f} kB for {args.report_hours:g} h at 1 Hz "
                  f"({len(paths)} file{'s' if len(paths) > 1 else ''}), built in {t:.2f} s")


if __name__ == "__main__":
    main()
