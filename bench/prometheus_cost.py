"""What the Prometheus endpoint costs: scrape duration, and the recorder's CPU with and without
`--listen`, at 1 Hz under pgbench load.

Starts a lab cluster, runs pgbench for the whole window, and runs the real `pgio-tui record` in
rounds: without `--listen`, then with it for each --scrape-every (scraped by this script as
Prometheus does: one kept-alive connection, OpenMetrics and gzip asked for). 15 s is the interval
of Prometheus's example configuration (its built-in default is 1 min); 1 s is the worst case.
Targets: a scrape <= 10 ms; the endpoint's CPU <= 10 % of the recorder's.

Two figures for the CPU, both from per-thread CPU clocks (ns): the difference between the
recordings without and with --listen (two processes: on a shared machine their difference is
noisy), and, inside each recording with --listen, the endpoint thread's own CPU
(pgio_exporter_cpu_seconds_total, read from its pages) against the rest of that process's. Prints
figures; asserts nothing.

    python bench/prometheus_cost.py [--seconds 120] [--rounds 2] [--scrape-every 15 1]
    python bench/prometheus_cost.py --replay RECORDING [--scrape-every 15 1]

--replay feeds a recording's Frames to the endpoint in this process, scraped over HTTP as above,
and sets the endpoint's CPU per tick beside the recorder's own CPU per tick in that recording
(observer.cpu_ms, measured by the recorder when it made the file; 10 ms resolution per tick).
"""

from __future__ import annotations

import argparse
import os
import gzip
import http.client
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from cpu_and_load import pct, pgbench_load  # noqa: E402

from pgio_tui.workloads.cluster import free_port  # noqa: E402

# What Prometheus 2.x sends: it negotiates OpenMetrics and gzip.
PROMETHEUS_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
              "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
}
SCRAPE_TARGET_MS = 10.0
CPU_TARGET_PCT = 10.0


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each of a process's threads, to the nanosecond (/proc/<pid>/task/*/schedstat;
    /proc/<pid>/stat counts in 10 ms ticks, too coarse next to a recorder's ~2 ms a second)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[tid] = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
    return out


def cpu_between(before: dict[str, float], after: dict[str, float]) -> float:
    if set(before) - set(after):
        print(f"warning: threads {sorted(set(before) - set(after))} ended inside the window: their CPU is missing")
    return sum(v - before.get(tid, 0.0) for tid, v in after.items())


class Run(NamedTuple):
    cpu: float  # the recorder's CPU seconds per second, steady state
    endpoint: float  # its endpoint thread's CPU seconds per second (pgio_exporter_cpu_seconds_total), or NaN
    trips: list[float]  # client round trips, ms
    inside: list[float]  # the endpoint's own scrape duration, ms
    size: int  # bytes of the last page (decompressed)


def run(conninfo: str, out: Path, seconds: float, every: float | None) -> Run:
    """One recording, scraped every `every` seconds (None: no --listen)."""
    port = free_port()
    cmd = [sys.executable, "-m", "pgio_tui", "record", "-d", conninfo, "-o", str(out), "--force",
           "--interval", "1", "--duration", str(seconds), "--quiet"]
    rec = subprocess.Popen(cmd + (["--listen", f"127.0.0.1:{port}"] if every else []), stderr=subprocess.DEVNULL)
    trips: list[float] = []
    inside: list[float] = []
    cpu_seen: list[tuple[float, float]] = []  # (monotonic time of the scrape, endpoint CPU seconds)
    size = 0
    stop, warm = threading.Event(), threading.Event()

    def scrape() -> None:
        nonlocal size
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)  # kept alive, as Prometheus does
        # Scraped every 0.2 s until a page has counters (the second tick), inside the start-up
        # left out: laying out each family and series the first time is start-up, not steady state.
        while not stop.wait(every if warm.is_set() else 0.2):
            t0 = time.perf_counter()
            try:
                conn.request("GET", "/metrics", headers=PROMETHEUS_HEADERS)
                r = conn.getresponse()
                body = r.read()
                body = gzip.decompress(body).decode() if r.headers.get("Content-Encoding") == "gzip" else body.decode()
            except (OSError, http.client.HTTPException):
                conn.close()
                continue
            if not warm.is_set():
                if "pgio_wal_bytes_total" in body:
                    warm.set()
                continue
            trips.append((time.perf_counter() - t0) * 1000)
            size = len(body)
            m = re.search(r"^pgio_exporter_last_scrape_duration_seconds (\S+)$", body, re.M)
            if m and m.group(1) != "NaN":
                inside.append(float(m.group(1)) * 1000)
            m = re.search(r"^pgio_exporter_cpu_seconds_total (\S+)$", body, re.M)
            if m:
                cpu_seen.append((time.monotonic(), float(m.group(1))))

    scraper = threading.Thread(target=scrape, daemon=True)
    if every:
        scraper.start()
    time.sleep(3)  # leave start-up (imports, connect, the listener, the first pages) out of the steady state
    if every:
        warm.wait(30)
        time.sleep(0.5)
    c0, w0 = thread_cpu(rec.pid), time.monotonic()
    time.sleep(max(1.0, seconds - 5))
    c1, w1 = thread_cpu(rec.pid), time.monotonic()
    stop.set()
    rec.wait(timeout=60)
    window = [(t, c) for t, c in cpu_seen if w0 <= t <= w1]
    endpoint = ((window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) if len(window) >= 2
                else float("nan"))
    return Run(cpu_between(c0, c1) / (w1 - w0), endpoint, trips, inside[1:], size)


def replay(path: Path, every: int) -> None:
    """The endpoint's CPU in-process: on_frame per tick, plus its HTTP thread's CPU (its own CPU clock)."""
    from pgio_tui import metrics as M
    from pgio_tui.export import prometheus as P
    from pgio_tui.store.reader import Recording

    with Recording(path) as rec:
        frames = list(rec.frames())
    recorder = [f.values.get(M.OBSERVER_CPU_MS) for f in frames]
    recorder = [v for v in recorder if isinstance(v, (int, float))]
    exporter = P.Exporter("bench:5432")
    exporter.start()
    clock = time.pthread_getcpuclockid(exporter._httpd._thread.ident)
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=5)
    conn.request("GET", "/metrics", headers=PROMETHEUS_HEADERS)  # start-up: the layouts, left out
    conn.getresponse().read()
    time.sleep(0.05)
    served0 = time.clock_gettime(clock)
    ticks, on_frame, scrapes = 0, 0.0, 0
    for rnd in range(max(1, 600 // max(1, len(frames)))):  # ~600 ticks
        for frame in frames:
            t0 = time.thread_time()
            exporter.on_frame(frame)
            on_frame += time.thread_time() - t0
            ticks += 1
            if ticks % every == 0:
                conn.request("GET", "/metrics", headers=PROMETHEUS_HEADERS)
                conn.getresponse().read()
                scrapes += 1
            time.sleep(0.002)  # let the server thread finish its write before the next tick
    served = time.clock_gettime(clock) - served0
    exporter.close()
    per_tick = (on_frame + served) / ticks * 1000
    rec_ms = sum(recorder) / len(recorder) if recorder else float("nan")
    print(f"{path.name}: {len(frames)} frames replayed {ticks} times as ticks, scraped every {every} tick(s) "
          f"({scrapes} scrapes); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"endpoint CPU per tick         : {per_tick:.3f} ms (on_frame {on_frame / ticks * 1000:.4f}, "
          f"HTTP thread {served / max(1, scrapes) * 1000:.3f} per scrape)")
    print(f"recorder CPU per tick (file)  : {rec_ms:.3f} ms (observer.cpu_ms, mean of {len(recorder)} ticks)")
    print(f"endpoint's share              : {per_tick / rec_ms * 100:+.1f} % of the recorder's CPU  "
          f"(target <= {CPU_TARGET_PCT:g} %)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120, help="per recording")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of recordings (without, then with --listen "
                                                          "for each --scrape-every)")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--scrape-every", type=float, nargs="+", default=[15.0, 1.0],
                    help="seconds (--replay: ticks) between scrapes; several: one recording each per round")
    ap.add_argument("--replay", type=Path, metavar="RECORDING", help="measure in-process on this recording")
    args = ap.parse_args()
    if args.replay:
        for every in args.scrape_every:
            replay(args.replay, int(every))
        return

    total = args.rounds * (1 + len(args.scrape_every)) * (args.seconds + 5) + 30
    with pgbench_load(args.clients, args.scale, total) as (cluster, tmp):
        time.sleep(3)
        runs: dict[float | None, list[Run]] = {None: [], **{e: [] for e in args.scrape_every}}
        loads = []
        for _ in range(args.rounds):
            for every in runs:
                runs[every].append(run(cluster.conninfo(), tmp / "r.pgio", args.seconds, every))
                loads.append(os.getloadavg()[0])
        a = sum(r.cpu for r in runs[None]) / args.rounds
        print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}, recording at 1 Hz, "
              f"{args.rounds} rounds of {args.seconds:g} s recordings (without --listen, then scraped every "
              f"{', '.join(f'{e:g}' for e in args.scrape_every)} s); load average (1 min) after each recording "
              f"{' '.join(f'{x:.2f}' for x in loads)}")
        print(f"recorder CPU without --listen     : {a * 100:.3f} % of one core  (rounds: "
              f"{', '.join(f'{r.cpu * 100:.3f}' for r in runs[None])})")
        for every in args.scrape_every:
            rs = runs[every]
            b = sum(r.cpu for r in rs) / len(rs)
            trips = [x for r in rs for x in r.trips]
            inside = [x for r in rs for x in r.inside]
            print(f"--- scraped every {every:g} s ({rs[-1].size} bytes of OpenMetrics, gzipped on the wire)")
            print(f"  recorder CPU with --listen      : {b * 100:.3f} % of one core  (rounds: "
                  f"{', '.join(f'{r.cpu * 100:.3f}' for r in rs)})")
            print(f"  difference (two processes)      : {(b - a) / a * 100:+.1f} % of the recorder's CPU (rounds: "
                  f"{', '.join(f'{(r.cpu - w.cpu) / w.cpu * 100:+.1f}' for r, w in zip(rs, runs[None]))})")
            print("  endpoint thread (same process)  : " + ", ".join(
                f"{r.endpoint / (r.cpu - r.endpoint) * 100:.1f}" for r in rs)
                + f" % of the rest of the recorder's CPU, per round  (target <= {CPU_TARGET_PCT:g} %)")
            print(f"  scrape round trip ms (client)   : median {pct(trips, .5):.2f}, p95 {pct(trips, .95):.2f}, "
                  f"max {max(trips):.2f}  ({len(trips)} scrapes; target <= {SCRAPE_TARGET_MS:g} ms)")
            print(f"  scrape ms (endpoint's own)      : median {pct(inside, .5):.3f}, p95 {pct(inside, .95):.3f}, "
                  f"max {max(inside):.3f}")


if __name__ == "__main__":
    main()
