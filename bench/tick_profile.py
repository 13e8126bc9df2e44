"""Where a live tick's time goes outside painting: the sampler thread, the delivery into the app,
the figures derived from the history, and the server's side, in-process, on a real pgbench load.

A lab cluster runs pgbench (-c 4 -j 2, scale 10, as bench/tui_cpu.py); the real live monitor
(MonitorApp with a LiveFeed, Textual's headless driver at --size) samples it for --warm ticks,
then --ticks ticks unprofiled (CPU per tick of each thread, the server backend's CPU per tick),
then --ticks ticks under cProfile on both threads with a CPU-time clock (time.thread_time), so
waiting on the server or the schedule costs nothing and each line is CPU.

Prints, per tick: CPU of the sampler thread and of the UI thread, the sampler's backend CPU and
its own server time (observer.server_ms); for the UI thread, unprofiled, the garbage collections
(count and CPU by generation), the screen's layouts (count and CPU) and the notifications shown
(they are on, as in a terminal: a toast lays the screen out); then a split by phase (microseconds,
cumulative, outermost calls) and the functions that cost most outside painting. `--record` adds the recorder, as
`pgio-tui live --record` has it. Run it on another tree with PYTHONPATH=/that/tree for before/after.

    python bench/tick_profile.py [--ticks 60] [--warm 10] [--interval 1] [--size 120x40] [--record] [--top 25]
    python bench/tick_profile.py --baseline /path/to/other/tree [same options]

--baseline runs this bench twice at once on one cluster and one load, one monitor from the other
tree and one from this one, so that both see the same machine load: a before/after side by side.
    python bench/tick_profile.py --history 7200 [--ticks 300] [--major 15]

--history N runs no cluster: it fills a FrameHistory with N synthetic ticks (2 h at 1 s is its
capacity) and times, per tick, a push and what the panes ask of the history outside painting.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after PYTHONPATH: another tree can be benched

from pgio_tui.workloads.cluster import Cluster  # noqa: E402
from pgio_tui.workloads.pg_binaries import find_client  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
# (label, function names, a part of their file's path): cumulative time of the outermost calls.
SAMPLER_PHASES = (
    ("sampler tick (Sampler.sample), of which:", ("sample",), "sampler/loop.py"),
    ("  query: execute, fetch, JSON decode", ("sample",), "sources/postgres.py"),
    ("  server figures (_pg_values)", ("_pg_values",), "sampler/postgres_tick.py"),
    ("    rates + publication spreading", ("_rates",), "sampler/postgres_tick.py"),
    ("    statements", ("_statements",), "sampler/postgres_tick.py"),
    ("    backends (+ /proc/<pid>/io)", ("_backends",), "sampler/backends_tick.py"),
    ("    checkpoint tracker", ("update",), "sources/checkpoint.py"),
    ("  kernel (/proc/stat, meminfo, vmstat)", ("sample",), "sources/kernel.py"),
    ("  disks (/proc/diskstats)", ("sample",), "sources/disks.py"),
    ("recorder (Recorder.write)", ("write",), "store/writer.py"),
    ("hand-over (post_message)", ("deliver",), "pgio_tui/tui/app.py"),
)
UI_PHASES = (
    ("frame arrived (history, notices, header)", ("on_frame_arrived",), "pgio_tui/tui/app.py"),
    ("  history.push", ("push",), "pgio_tui/tui/history.py"),
    ("  redraw (panes' draw: repaint's part)", ("_redraw_tick",), "pgio_tui/tui/app.py"),
    ("    derived: waits_summary", ("waits_summary",), "pgio_tui/tui/history.py"),
    ("    derived: sources_summary", ("sources_summary",), "pgio_tui/tui/history.py"),
    ("    derived: history.has", ("has",), "pgio_tui/tui/history.py"),
    ("    derived: history.window/total/latest", ("window", "total", "latest"), "pgio_tui/tui/history.py"),
    ("compositor and screen update (Textual)", ("_compositor_refresh", "_refresh_layout"), "textual/screen.py"),
    ("message dispatch (Textual, all messages)", ("_dispatch_message",), "textual/message_pump.py"),
)
PAINT = ("/pgio_tui/tui/widgets/", "/pgio_tui/tui/plot.py", "/pgio_tui/tui/raster.py", "/pgio_tui/tui/drawing.py",
         "/textual/", "/rich/")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def cum(stats: pstats.Stats, names: tuple[str, ...], part: str) -> float:
    """Seconds in the outermost calls of `names` in files whose path holds `part`."""
    total = 0.0
    for (file, _line, func), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
        f = file.replace("\\", "/")
        if func in names and part in f:
            if all(not (c[2] in names and part in c[0]) for c in callers):
                total += ct
    return total


class Probe:
    """Counts frames on both threads and starts/stops the measurements at the given frames."""

    def __init__(self, warm: int, ticks: int):
        self.marks = (warm, warm + ticks, warm + 2 * ticks)  # plain from marks[0], profiled from marks[1]
        self.sampler_cpu: list[float] = []  # thread_time at the marks (sampler thread)
        self.ui_cpu: list[float] = []
        self.backend_cpu: list[float] = []
        self.sampler_prof = cProfile.Profile(time.thread_time)
        self.ui_prof = cProfile.Profile(time.thread_time)
        self.frames = []
        self.done = threading.Event()
        self.backend_pid: int | None = None
        self.server_version = ""
        self._n_sampler = self._n_ui = 0
        # the unprofiled window, UI thread: garbage collections (count, CPU s by generation), the
        # screen's layouts (count, CPU s) and the notifications shown (toasts: each lays out again)
        self.plain = False
        self.gc: dict[int, list] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
        self.layouts = [0, 0.0]
        self.notices = 0
        self._gc_t0: float | None = None
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict) -> None:
        if not self.plain or threading.current_thread() is not threading.main_thread():
            return  # the collections a tick's garbage triggers run on the UI thread (checked: all there)
        if phase == "start":
            self._gc_t0 = time.thread_time()
        elif self._gc_t0 is not None:
            row = self.gc[info["generation"]]
            row[0] += 1
            row[1] += time.thread_time() - self._gc_t0

    def on_sampler_frame(self) -> None:
        """On the sampler thread, after the frame was handed over."""
        self._n_sampler += 1
        n = self._n_sampler
        if n in self.marks:
            self.sampler_cpu.append(time.thread_time())
            if self.backend_pid:
                self.backend_cpu.append(cpu_seconds(self.backend_pid))
        if n == self.marks[1]:
            self.sampler_prof.enable()
        elif n == self.marks[2]:
            self.sampler_prof.disable()

    def on_ui_frame(self, frame) -> None:
        """On the UI thread, as the frame arrives (before the app's handler)."""
        self._n_ui += 1
        n = self._n_ui
        if self.marks[0] < n <= self.marks[2]:
            self.frames.append(frame)
        if n in self.marks:
            self.ui_cpu.append(time.thread_time())
        self.plain = self.marks[0] <= n < self.marks[1]
        if n == self.marks[1]:
            self.ui_prof.enable()
        elif n == self.marks[2]:
            self.ui_prof.disable()
            self.done.set()


def pgbench_load(cluster: Cluster, seconds: float) -> subprocess.Popen:
    pgbench = str(find_client("pgbench"))
    conn = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres"]
    subprocess.run([pgbench, *conn, "-i", "-q", "-s", "10", "postgres"], check=True, capture_output=True)
    return subprocess.Popen([pgbench, *conn, "-c", "4", "-j", "2", "-T", str(int(seconds)), "postgres"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def drive(conninfo: str, args, probe: Probe, record: str | None) -> None:
    from pgio_tui.session import open_sampler
    from pgio_tui.tui.app import MonitorApp
    from pgio_tui.tui.feed import LiveFeed
    from pgio_tui.tui.session import session_from_sampler

    sampler = open_sampler(conninfo, interval=args.interval)
    probe.backend_pid = sampler.pg.conn.info.backend_pid
    probe.server_version = sampler.pg.features.version
    feed = LiveFeed(sampler, record_path=record, force=True)
    first = feed.prime()

    class Counted(MonitorApp):  # Textual finds handlers on the class, not the instance
        CSS_PATH = [str(Path(sys.modules[MonitorApp.__module__].__file__).parent / p) for p in
                    ([MonitorApp.CSS_PATH] if isinstance(MonitorApp.CSS_PATH, (str, Path)) else MonitorApp.CSS_PATH)]

        def deliver(self, frame, status):  # the sampler thread, as in a live run
            super().deliver(frame, status)
            probe.on_sampler_frame()

        def on_frame_arrived(self, message):  # runs before MonitorApp's handler (Textual calls both)
            probe.on_ui_frame(message.frame)

        def notify(self, *args, **kwargs):
            probe.notices += probe.plain
            return super().notify(*args, **kwargs)

    count_layouts(probe)

    app = Counted(session_from_sampler(sampler), source=feed, frames=[first] if first else [])
    try:
        # notifications shown, as in a terminal (run_test hides them by default): a toast lays the screen out
        async with app.run_test(size=args.size, notifications=True) as pilot:
            while not probe.done.is_set():
                await asyncio.sleep(0.2)  # not pilot.pause: its screen waits would be profiled
            feed.stop()
    finally:
        feed.wait_closed(15)
        sampler.close()


def count_layouts(probe: Probe) -> None:
    """Count the screen's layouts (Textual 8's Screen._refresh_layout) and their CPU in the
    unprofiled window; says so when that method is not there."""
    from textual.screen import Screen
    layout = getattr(Screen, "_refresh_layout", None)
    if layout is None:
        probe.layouts = None
        return

    def counted(self, *args, **kwargs):
        t0 = time.thread_time()
        try:
            return layout(self, *args, **kwargs)
        finally:
            if probe.plain:
                probe.layouts[0] += 1
                probe.layouts[1] += time.thread_time() - t0
    Screen._refresh_layout = counted


def report(args, probe: Probe, cluster_version: str) -> None:
    t = args.ticks
    s_cpu = (probe.sampler_cpu[1] - probe.sampler_cpu[0]) / t * 1e3
    u_cpu = (probe.ui_cpu[1] - probe.ui_cpu[0]) / t * 1e3
    b_cpu = (probe.backend_cpu[1] - probe.backend_cpu[0]) / t * 1e3 if len(probe.backend_cpu) > 1 else float("nan")
    plain = probe.frames[:t]
    server = [f.values.get("observer.server_ms") for f in plain if f.values.get("observer.server_ms") is not None]
    w, h = args.size
    print(f"PostgreSQL {cluster_version}, pgbench -c 4 -j 2 scale 10; {w}x{h}, {t} ticks at {args.interval:g} s"
          f"{', recording' if args.record else ''}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"unprofiled, per tick: sampler thread {s_cpu:.2f} ms CPU, UI thread {u_cpu:.2f} ms CPU; "
          f"server backend {b_cpu:.2f} ms CPU, observer.server_ms mean {statistics.mean(server):.2f} "
          f"median {statistics.median(server):.2f}")
    gcs = sum(n for n, _ in probe.gc.values())
    print(f"unprofiled, UI thread per tick: {gcs / t:.2f} garbage collections, {1e6 * sum(s for _, s in probe.gc.values()) / t:.0f} µs ("
          + ", ".join(f"gen{g} {n / t:.2f} x {1e6 * s / n if n else 0:.0f} µs" for g, (n, s) in probe.gc.items()) + "); "
          + (f"{probe.layouts[0] / t:.2f} screen layouts, {1e6 * probe.layouts[1] / t:.0f} µs"
             if probe.layouts is not None else "screen layouts not counted (no Screen._refresh_layout)")
          + f"; {probe.notices / t:.2f} notifications")
    for title, prof, phases in (("sampler thread", probe.sampler_prof, SAMPLER_PHASES),
                                ("UI thread", probe.ui_prof, UI_PHASES)):
        stats = pstats.Stats(prof)
        if args.dump:
            stats.dump_stats(f"{args.dump}-{title.split()[0]}.prof")
        total = sum(v[2] for v in stats.stats.values())
        print(f"{title} under cProfile (CPU clock): {1e6 * total / t:.0f} µs per tick, of which:")
        for label, names, part in phases:
            print(f"    {label:46}{1e6 * cum(stats, names, part) / t:8.0f} µs")
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])
        if title == "UI thread":  # painting is another bench's (bench/repaint_profile.py)
            rows = [kv for kv in rows if not any(p in kv[0][0].replace("\\", "/") for p in PAINT)]
        print(f"  top {args.top} functions by own time{' outside painting' if title == 'UI thread' else ''} "
              f"(µs per tick, calls per tick):")
        for (file, line, func), (_cc, nc, tt, _ct, _callers) in rows[:args.top]:
            where = "/".join(Path(file).parts[-2:]) if file != "~" else ""
            print(f"    {1e6 * tt / t:7.0f} {nc / t:8.1f}  {func}  {where}:{line}")


def history_mode(args) -> None:
    """No cluster: a FrameHistory full (--history ticks of tests/fixture_recording.py's synthetic
    frames, PostgreSQL --major), then per tick one push and what the monitor's panes ask of it
    outside painting (has() of the writes, reads and WAL panes' metrics, waits_summary over the
    5-minute and the 1-hour window), timed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from fixture_recording import synthetic_frames

    from pgio_tui import metrics as M
    from pgio_tui.tui.history import FrameHistory
    from pgio_tui.tui.widgets import reads_pane, writes_pane

    frames = list(synthetic_frames(args.history + 3 * args.ticks, incidents=False, major=args.major))
    has_metrics = ([s.metric for s in writes_pane.SOURCES] + [s.metric for s in reads_pane.CHART.series]
                   + [M.FSYNCS_BACKEND, M.EXTENDS_BACKEND, M.WRITEBACKS_TOTAL, M.BGWRITER_MAXWRITTEN_S,
                      M.WAL_RECORDS_S, M.WAL_BYTES_S, M.WAL_WRITES_S, M.WAL_SYNCS_S])
    clock = time.perf_counter
    h = FrameHistory()
    h.extend(frames[:args.history])
    spent = {"push": 0.0, "has (panes' metrics)": 0.0, "waits_summary 5 min": 0.0, "waits_summary 1 h": 0.0}
    for k, window in enumerate((None, 300, 3600)):  # a pass per window, as the monitor shows one at a time
        for f in frames[args.history + k * args.ticks:args.history + (k + 1) * args.ticks]:
            a = clock()
            h.push(f)
            b = clock()
            if window is None:
                for m in has_metrics:
                    h.has(m)
                spent["has (panes' metrics)"] += clock() - b
            else:
                h.waits_summary(h.end_t - window, h.end_t, top=12)
                spent[f"waits_summary {'5 min' if window == 300 else '1 h'}"] += clock() - b
            spent["push"] += (b - a) / 3
    absent = [m for m in has_metrics if not h.has(m)]
    print(f"FrameHistory of {len(h)} ticks (synthetic, major {args.major}; {len(absent)} of the {len(has_metrics)} "
          f"metrics asked for absent), {args.ticks} ticks per pass; load average {os.getloadavg()[0]:.2f}; µs per tick:")
    for k, v in spent.items():
        print(f"    {k:28}{1e6 * v / args.ticks:8.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=60, help="ticks measured, unprofiled and profiled each")
    ap.add_argument("--warm", type=int, default=10, help="ticks before measuring (first reads, imports)")
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--size", type=lambda s: tuple(int(x) for x in s.lower().split("x")), default=(120, 40))
    ap.add_argument("--record", action="store_true", help="record too (pgio-tui live --record)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--dump", metavar="PREFIX", help="also save the profiles as PREFIX-sampler.prof, PREFIX-ui.prof")
    ap.add_argument("--history", type=int, metavar="N", help="no cluster: time a full history of N ticks (below)")
    ap.add_argument("--major", type=int, default=17, help="--history: the synthetic frames' PostgreSQL major")
    ap.add_argument("--baseline", type=Path, metavar="TREE", help="also run TREE's monitor, at the same time (above)")
    ap.add_argument("--conninfo", help=argparse.SUPPRESS)  # a server already under load (--baseline's runs)
    args = ap.parse_args()
    if args.history:
        history_mode(args)
        return 0
    if args.conninfo:
        probe = Probe(args.warm, args.ticks)
        with tempfile.TemporaryDirectory(prefix="pgio-tick-") as tmp:
            asyncio.run(drive(args.conninfo, args, probe, os.path.join(tmp, "r.pgio") if args.record else None))
        report(args, probe, probe.server_version)
        return 0
    seconds = (args.warm + 2 * args.ticks + 5) * args.interval + 60
    with tempfile.TemporaryDirectory(prefix="pgio-tick-") as tmp, \
            Cluster(settings={"shared_buffers": "128MB", "checkpoint_timeout": "60s",
                              "max_wal_size": "256MB"}) as cluster:
        load = pgbench_load(cluster, seconds)
        try:
            if args.baseline:
                side_by_side(args, cluster.conninfo())
            else:
                probe = Probe(args.warm, args.ticks)
                asyncio.run(drive(cluster.conninfo(), args, probe, os.path.join(tmp, "r.pgio") if args.record else None))
        finally:
            load.terminate()
            load.wait(30)
        if not args.baseline:
            report(args, probe, cluster.version)
    return 0


def side_by_side(args, conninfo: str) -> None:
    """This bench with --conninfo, once with the baseline tree first on PYTHONPATH and once with
    this one, both at once; their reports one after the other."""
    here = Path(__file__).resolve().parent.parent
    common = ["--conninfo", conninfo, "--ticks", str(args.ticks), "--warm", str(args.warm),
              "--interval", str(args.interval), "--size", "x".join(map(str, args.size)), "--top", str(args.top)]
    common += ["--record"] if args.record else []
    runs = {}
    for label, tree in (("baseline", args.baseline.resolve()), ("this tree", here)):
        env = dict(os.environ, PYTHONPATH=str(tree))
        runs[(label, tree)] = subprocess.Popen([sys.executable, __file__, *common], env=env, text=True,
                                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for (label, tree), proc in runs.items():
        out, _ = proc.communicate()
        print(f"=== {label}: {tree} (exit {proc.returncode})")
        print(out.rstrip())


if __name__ == "__main__":
    raise SystemExit(main())
