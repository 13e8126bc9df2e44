"""A real Prometheus scraping `pgio-tui record --listen` against a throwaway cluster, and a recording
backfilled with promtool: the values Prometheus stores are the recording's.

Needs Debian's `prometheus` package (prometheus, promtool): skipped without it, a failure in CI.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from prom_support import Prometheus, http_get, promtool_check_metrics, require_tool

from pgio_tui.export.grafana import dashboard, queries
from pgio_tui.cli import main
from pgio_tui.store.reader import Recording
from pgio_tui.store.schema import quantize
from pgio_tui.workloads.cluster import free_port

SLACK_S = 0.5  # a scrape sees the latest tick: at most one interval (plus this) after the tick's time


def _record(cluster, out: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pgio_tui", "record", "-h", str(cluster.sockdir), "-p", str(cluster.port),
         "-U", "postgres", "-d", "postgres", "-o", str(out), "--interval", "1", "--quiet",
         "--listen", f"127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True)


def _wait_for_endpoint(url: str, proc: subprocess.Popen, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            _ctype, text = http_get(url)
            if "pgio_wal_bytes_total" in text:  # the second tick: rates, hence totals
                return text
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} never served a tick")


def _writer(cluster, stop: threading.Event) -> None:
    """Some WAL and dirty buffers, so the totals move, and checkpoints."""
    with cluster.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS prom_load (i int, pad text)")
        n = 0
        while not stop.wait(0.05):
            conn.execute("INSERT INTO prom_load SELECT g, repeat('x', 200) FROM generate_series(1, 500) g")
            n += 1
            if n % 100 == 0:  # a checkpoint every ~5 s: the dashboard's annotation has a kind to show
                conn.execute("CHECKPOINT")


def _grafana_vars(expr: str) -> str:
    """A dashboard expression as Grafana sends it with every variable on All."""
    for var in ("$instance", "$server", "$device", "$role"):
        expr = expr.replace(var, ".*")
    return expr.replace("$__rate_interval", "1m")


def test_prometheus_scrapes_record_listen(pg_cluster, tmp_path):
    require_tool("prometheus")
    port = free_port()
    out = tmp_path / "live.pgio"
    proc = _record(pg_cluster, out, port)
    stop_load = threading.Event()
    load = threading.Thread(target=_writer, args=(pg_cluster, stop_load), daemon=True)
    load.start()
    prom = None
    try:
        text = _wait_for_endpoint(f"http://127.0.0.1:{port}/metrics", proc)
        check = promtool_check_metrics(text)
        assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), check.stdout + check.stderr
        prom = Prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"])
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            got = prom.query("count_over_time(pgio_wal_bytes_total[5m])")
            if got and float(got[0]["value"][1]) >= 8:
                break
            time.sleep(1)
        else:
            pytest.fail("Prometheus stored fewer than 8 scrapes in 90 s")
        at = time.time()
        series = {name: prom.query(f"{name}[5m]", at=at) for name in (
            "pgio_observer_collect_seconds", "pgio_wal_bytes_total", "pgio_mem_dirty_bytes",
            "pgio_disk_reads_completed_total", "pgio_up")}
        target = prom.query('up{job="pgio-tui"}')
        exprs = [e.replace("== 1", ">= 0") for e in queries(dashboard())]  # no checkpoint may run just then
        empty = [e for e in exprs if not prom.query(_grafana_vars(e), at=at)]
    finally:
        stop_load.set()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        if prom is not None:
            prom.stop()
    assert target and target[0]["value"][1] == "1"
    # every chart of the dashboard is valid PromQL (prom.query checks), with data unless this run
    # cannot have any: latency needs a launched workload, statement figures pg_stat_statements
    # (not loaded on this cluster), progress a checkpoint running at a tick, waits a backend caught waiting
    may_be_empty = ("pgio_latency_", "pgio_transaction_duration", "pgio_statement", "pgio_checkpoint_progress_ratio",
                    "pgio_wait_sessions")
    assert [e for e in empty if not any(n in e for n in may_be_empty)] == [], "\n".join(empty)
    assert all(v == "1" for _ts, v in series["pgio_up"][0]["values"])

    with Recording(out) as rec:
        frames = list(rec.frames())
        devices = set(rec.devices)
    # The recording keeps each value at its unit's stored precision (store/schema.quantize) and
    # rates per tick; the endpoint serves full precision and exact totals: compare within that.
    wal_total, wal_err, total, err = {}, {}, 0.0, 0.0
    for f in frames:
        if f.dt and f.values.get("wal.bytes_s") is not None:
            total += f.values["wal.bytes_s"] * f.dt
            err += 0.5 * f.dt + f.values["wal.bytes_s"] * 0.0006  # rate to 1 byte/tick, dt to 1 ms
        wal_total[f.tick], wal_err[f.tick] = total, err
    scraped = {name: {ts: float(v) for ts, v in series[name][0]["values"]}
               for name in ("pgio_observer_collect_seconds", "pgio_wal_bytes_total", "pgio_mem_dirty_bytes")}

    def same_tick(ts: float, f) -> bool:
        return (quantize(scraped["pgio_observer_collect_seconds"][ts] * 1000, "ms") == f.values["observer.collect_ms"]
                and scraped["pgio_mem_dirty_bytes"].get(ts) == f.values["mem.dirty_kb"] * 1024
                and abs(scraped["pgio_wal_bytes_total"].get(ts, 0.0) - wal_total[f.tick]) <= wal_err[f.tick] + 1e-6)

    ticks_seen = set()
    for ts in scraped["pgio_observer_collect_seconds"]:
        # the scrape serves the latest tick: taken at most one interval (plus slack) before it
        candidates = [f for f in frames if -0.05 <= ts - f.t <= 1 + SLACK_S]
        matched = [f for f in candidates if same_tick(ts, f)]
        assert matched, f"the scrape at {ts} matches none of ticks {[f.tick for f in candidates]}"
        ticks_seen.add(matched[-1].tick)
    assert len(ticks_seen) >= 6, ticks_seen
    assert wal_total[max(ticks_seen)] > 100_000, "the load wrote WAL"
    assert series["pgio_disk_reads_completed_total"], "no device series"
    assert {s["metric"]["device"] for s in series["pgio_disk_reads_completed_total"]} <= devices


DUMP_LINE = re.compile(r"^\{(.*)\} (\S+) (\d+)$")


def test_backfill_with_promtool_reads_back_the_recording(fixture_file, tmp_path):
    promtool = require_tool("promtool")
    om = tmp_path / "rec.om"
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "export", str(fixture_file), "--format", "openmetrics",
                        "-o", str(om)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = tmp_path / "tsdb"
    r = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(data)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (data / "wal").mkdir(exist_ok=True)  # `tsdb dump` opens the head too
    r = subprocess.run([promtool, "tsdb", "dump", str(data)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    points: dict[tuple[str, str], dict[int, float]] = {}
    for line in r.stdout.splitlines():
        m = DUMP_LINE.match(line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        key = (labels.pop("__name__"), ",".join(f"{k}={v}" for k, v in sorted(labels.items())))
        points.setdefault(key, {})[int(m.group(3))] = float(m.group(2))

    with Recording(fixture_file) as rec:
        frames = list(rec.frames())
    dirty = points[("pgio_mem_dirty_bytes", "server=fixture-host")]
    wal = points[("pgio_wal_bytes_total", "server=fixture-host")]
    util = points[("pgio_disk_utilization_ratio", "device=nvme0n1,server=fixture-host")]
    assert len(dirty) == len(frames)

    def at(series: dict[int, float], t: float) -> float:
        (ms,) = [ms for ms in series if abs(ms / 1000 - t) < 0.002]
        return series[ms]

    total = 0.0
    for f in frames:
        assert at(dirty, f.t) == f.values["mem.dirty_kb"] * 1024
        if f.dt:
            total += f.values["wal.bytes_s"] * f.dt
            assert at(wal, f.t) == pytest.approx(total, rel=1e-12)
            assert at(util, f.t) == pytest.approx(f.devices["nvme0n1"]["util_pct"] / 100, rel=1e-12)


def _p99_bucket(seconds: float) -> tuple[float, float]:
    """The `le` bucket a value falls in: histogram_quantile answers within it."""
    from pgio_tui.export.histograms import BOUNDS_S
    lo = max((b for b in BOUNDS_S if b < seconds), default=0.0)
    hi = min((b for b in BOUNDS_S if b >= seconds), default=float("inf"))
    return lo, hi


def _recorded_p99(rec, start_t: float, end_t: float) -> float:
    """The recording's own p99 over the ticks taken in (start_t, end_t], in seconds."""
    first = rec.tick_at(start_t) + 1
    return rec.latency_histogram(first, rec.tick_at(end_t)).percentile(99) / 1000


def _checkpoint_now(cluster, stop: threading.Event, at_s: float) -> None:
    if not stop.wait(at_s):
        with cluster.connect(autocommit=True) as conn:
            conn.execute("CHECKPOINT")


P99 = "histogram_quantile(0.99, rate(pgio_transaction_duration_seconds_bucket[1m]))"


def test_dashboard_on_a_live_scrape_and_a_backfill(make_cluster, tmp_path):
    """pgbench launched by `bench --headless --listen`, scraped by one Prometheus; its recording
    (checkpoints of two kinds or more, a gap: the recorder stopped for 3 s) backfilled into another.
    Every dashboard query runs on both over the whole run (as Grafana does) with data; the p99 of
    the histogram is the recording's own, within the bucket it falls in."""
    require_tool("prometheus")
    cluster = make_cluster(max_wal_size="32MB", checkpoint_timeout="30s",
                           shared_preload_libraries="pg_stat_statements")
    with cluster.connect(autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    port, out = free_port(), tmp_path / "bench.pgio"
    bench = subprocess.Popen(
        [sys.executable, "-m", "pgio_tui", "bench", "pgbench", "-h", str(cluster.sockdir), "-p", str(cluster.port),
         "-U", "postgres", "-d", "postgres", "--headless", "--record", str(out), "--init-scale", "5",
         "--listen", f"127.0.0.1:{port}", "--", "-T", "75", "-c", "2", "-j", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    live = backfilled = None
    try:
        _wait_for_endpoint(f"http://127.0.0.1:{port}/metrics", bench, timeout=120)
        live = Prometheus(tmp_path / "live", [f"127.0.0.1:{port}"])
        threading.Thread(target=_checkpoint_now, args=(cluster, stop, 20), daemon=True).start()
        time.sleep(40)
        bench.send_signal(signal.SIGSTOP)  # the recorder misses ticks: a gap
        time.sleep(3)
        bench.send_signal(signal.SIGCONT)
        assert bench.wait(150) == 0, bench.stderr.read()
    finally:
        stop.set()
        if bench.poll() is None:
            bench.kill()
    try:
        with Recording(out) as rec:
            start_t, end_t = rec.start_t, rec.end_t
            kinds = {c["kind"] for c in rec.checkpoints()}
            gaps = rec.events(["gap"])
            at = end_t - 5
            recorded = _recorded_p99(rec, at - 60, at)
        assert len(kinds) >= 2 and gaps, (kinds, gaps)
        om = tmp_path / "bench.om"
        assert main(["export", str(out), "--format", "openmetrics", "-o", str(om)]) == 0
        backfilled = Prometheus(tmp_path / "backfill", [], backfill=om)
        exprs = queries(dashboard())
        figures = {}
        for name, prom in (("live", live), ("backfill", backfilled)):
            empty = [e for e in exprs if not prom.query_range(_grafana_vars(e), start_t, end_t, 1.0)]
            assert empty == [], f"{name}: {len(empty)} of {len(exprs)} queries without data:\n" + "\n".join(empty)
            spans = prom.query_range(_grafana_vars(exprs[-1]), start_t, end_t, 1.0)
            shown = {}
            for s in spans:
                for ts, _v in s["values"]:
                    shown.setdefault(ts, []).append(s["metric"]["kind"])
            assert all(len(k) == 1 for k in shown.values()), "two kinds at once"
            got = prom.query(P99, at=at)
            assert got, f"{name}: no p99"
            figures[name] = float(got[0]["value"][1])
        lo, hi = _p99_bucket(recorded)
        print(f"\np99 over the minute before {at:.0f}: recording {recorded * 1000:.2f} ms (bucket {lo * 1000:g}-"
              f"{hi * 1000:g} ms); live {figures['live'] * 1000:.2f} ms, backfill {figures['backfill'] * 1000:.2f} ms; "
              f"{len(exprs)} queries with data on both; checkpoint kinds {sorted(kinds)}")
        assert lo <= figures["backfill"] <= hi and lo <= figures["live"] <= hi, (recorded, figures)
    finally:
        for prom in (live, backfilled):
            if prom is not None:
                prom.stop()
