"""What the Prometheus endpoint costs: scrape duration, and the recorder's CPU with and without
`--listen`, at 1 Hz under pgbench load.

Starts a lab cluster, runs pgbench for the whole window, and runs the real `pgio-tui record`
alternately without and with `--listen` (scraped by this script as Prometheus does: one kept-alive
connection, OpenMetrics and gzip asked for; every second by default, the worst case — Prometheus's
own example configuration scrapes every 15 s, its default is every minute). Targets: a scrape <= 10 ms; the endpoint's CPU <= 10 % of the recorder's. Prints
figures; asserts nothing (these machines are noisy: runs alternate, and --rounds repeats them).

    python bench/prometheus_cost.py [--seconds 60] [--rounds 2] [--scrape-every 1]

On a busy machine (load average well above the cores) two processes' CPU cannot be compared; then

    python bench/prometheus_cost.py --replay RECORDING [--scrape-every 1]

feeds a recording's Frames to the endpoint in this process, scraped over HTTP as above, and sets
the endpoint's thread CPU per tick beside the recorder's own CPU per tick in that recording
(observer.cpu_ms, measured by the recorder when it made the file).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from cpu_and_load import cpu_seconds, pct, pgbench_load  # noqa: E402

from pgio_tui.workloads.cluster import free_port  # noqa: E402

# What Prometheus 2.x sends: it negotiates OpenMetrics and gzip.
PROMETHEUS_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
              "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
}
SCRAPE_TARGET_MS = 10.0
CPU_TARGET_PCT = 10.0


def run(conninfo: str, out: Path, seconds: float, listen: bool,
        every: float = 1.0) -> tuple[float, list[float], list[float], int]:
    """One recording: (steady CPU seconds per second, client round trips ms, server-side scrape ms, bytes)."""
    port = free_port()
    cmd = [sys.executable, "-m", "pgio_tui", "record", "-d", conninfo, "-o", str(out), "--force",
           "--interval", "1", "--duration", str(seconds), "--quiet"]
    rec = subprocess.Popen(cmd + (["--listen", f"127.0.0.1:{port}"] if listen else []), stderr=subprocess.DEVNULL)
    trips: list[float] = []
    inside: list[float] = []
    size = 0
    stop = threading.Event()

    def scrape() -> None:
        nonlocal size
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)  # kept alive, as Prometheus does
        # The first scrape as soon as the endpoint answers, inside the start-up that is left out
        # (Prometheus scrapes a new target at once): its one-time work (lazy imports, each family's
        # layout) is start-up, not steady state.
        while not stop.wait(every if trips else 0.2):
            t0 = time.perf_counter()
            try:
                conn.request("GET", "/metrics", headers=PROMETHEUS_HEADERS)
                r = conn.getresponse()
                body = r.read()
                body = gzip.decompress(body).decode() if r.headers.get("Content-Encoding") == "gzip" else body.decode()
            except (OSError, http.client.HTTPException):
                conn.close()
                continue
            trips.append((time.perf_counter() - t0) * 1000)
            size = len(body)
            m = re.search(r"^pgio_exporter_last_scrape_duration_seconds (\S+)$", body, re.M)
            if m and m.group(1) != "NaN":
                inside.append(float(m.group(1)) * 1000)

    scraper = threading.Thread(target=scrape, daemon=True)
    if listen:
        scraper.start()
    time.sleep(3)  # leave start-up (imports, connect, the listener, the first scrape) out of the steady state
    c0, w0 = cpu_seconds(rec.pid), time.monotonic()
    time.sleep(max(1.0, seconds - 5))
    c1, w1 = cpu_seconds(rec.pid), time.monotonic()
    stop.set()
    rec.wait(timeout=60)
    return (c1 - c0) / (w1 - w0), trips[1:], inside[1:], size


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
    ap.add_argument("--rounds", type=int, default=2, help="pairs of recordings (without, with --listen)")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--scrape-every", type=float, default=1.0, help="seconds (--replay: ticks) between scrapes")
    ap.add_argument("--replay", type=Path, metavar="RECORDING", help="measure in-process on this recording")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay, int(args.scrape_every))

    total = args.rounds * 2 * (args.seconds + 5) + 30
    with pgbench_load(args.clients, args.scale, total) as (cluster, tmp):
        time.sleep(3)
        without, with_, trips, inside, size = [], [], [], [], 0
        for _ in range(args.rounds):
            without.append(run(cluster.conninfo(), tmp / "a.pgio", args.seconds, False)[0])
            cpu, t, i, size = run(cluster.conninfo(), tmp / "b.pgio", args.seconds, True, args.scrape_every)
            with_.append(cpu)
            trips += t
            inside += i

        a, b = sum(without) / len(without), sum(with_) / len(with_)
        print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}, 1 Hz, "
              f"{args.rounds} x {args.seconds:g} s without and with --listen, scraped every {args.scrape_every:g} s; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"scrape page                   : {size} bytes of OpenMetrics")
        print(f"scrape round trip ms (client) : median {pct(trips, .5):.2f}, p95 {pct(trips, .95):.2f}, "
              f"max {max(trips):.2f}  ({len(trips)} scrapes; target <= {SCRAPE_TARGET_MS:g} ms)")
        print(f"scrape ms (endpoint's answer) : median {pct(inside, .5):.2f}, p95 {pct(inside, .95):.2f}, "
              f"max {max(inside):.2f}")
        print(f"recorder CPU without --listen : {a * 100:.3f} % of one core  (runs: "
              f"{', '.join(f'{x * 100:.3f}' for x in without)})")
        print(f"recorder CPU with --listen    : {b * 100:.3f} % of one core  (runs: "
              f"{', '.join(f'{x * 100:.3f}' for x in with_)})")
        print(f"endpoint's share              : {(b - a) / a * 100:+.1f} % of the recorder's CPU  "
              f"(target <= {CPU_TARGET_PCT:g} %)")


if __name__ == "__main__":
    main()
