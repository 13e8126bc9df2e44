"""Per-recording statistics over a window: what a diff compares and a report tabulates.

Each statistic (`Stat`) carries its value and, where it is a mean, total, share or fraction of
per-tick (or per-checkpoint) values, an `Estimate` the noise judgement can resample. How each
figure is computed is in docs/diff.md; the short form:

- latency (transactions of a launched workload): tps is time-weighted; mean, stddev and the per-tick percentiles are weighted by the
  transactions of each tick (pgbench) or the statements (pg_stat_statements); stddev is pooled
  from per-tick mean and stddev; max is the largest per-tick max; counts over 100-500 ms add up the
  per-tick counts `latency.over_<N>ms` (else: ticks whose mean is over N ms);
- statements: pg_stat_statements' execution time (never called latency), weighted by calls;
- writes: totals are Σ rate·dt per source, shares are of the sum of all sources;
- checkpoints: those that started inside the window;
- memory: per-tick Dirty/Writeback levels, and the time Dirty spent above the kernel's thresholds;
- devices: per role (PGDATA, WAL), the role's busiest device, so runs on machines with other
  device names still compare.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.analysis.align import Window, aligned_columns
from pgio_tui.analysis.noise import Estimate, pooled_stddev, ratio, total_over
from pgio_tui.analysis.statements import statement_rows
from pgio_tui.metrics import lookup
from pgio_tui.stats import percentile
from pgio_tui.store.reader import Recording, Setting
from pgio_tui.workload_facts import EXIT_INTERRUPTED

GROUPS = ("latency", "statements", "writes", "checkpoints", "memory", "devices", "pgio")
PERCENTILES = ("p50", "p95", "p99")
PERCENTILE_METRICS = {"p50": M.LATENCY_P50_MS, "p95": M.LATENCY_P95_MS, "p99": M.LATENCY_P99_MS}
ROLE_LABELS = {"data": "PGDATA", "wal": "WAL", "tblspc": "TBLSPC"}
KB_PER_MIB = 1024


@dataclass(slots=True)
class Stat:
    group: str
    name: str
    unit: str
    value: float | None
    estimate: Estimate | None = None  # None: not judged against noise (percentiles, max, counts)
    metric: str | None = None  # the recorded metric it comes from, for charts
    note: str = ""
    stat: str = ""  # which statistic of `metric` it is where a metric has several rows: mean, p95, max, total, share

    @property
    def key(self) -> tuple[str, str]:
        return self.group, self.name


@dataclass(slots=True)
class Summary:
    path: Path
    window: Window
    stats: list[Stat]
    settings: dict[str, Setting]
    meta: dict[str, Any]
    role_devices: dict[str, str]  # "PGDATA" -> the device its figures come from
    checkpoint_spans: list[tuple[float, float, str]]  # (x start, x end, kind) inside the window
    pgio: bool  # a pgio workload ran
    setting_events: list[tuple[float, str]] = field(default_factory=list)  # (x, text) of changes inside
    notes: list[str] = field(default_factory=list)

    def get(self, group: str, name: str) -> Stat | None:
        return next((s for s in self.stats if s.group == group and s.name == name), None)

    def value(self, group: str, name: str) -> float | None:
        s = self.get(group, name)
        return None if s is None else s.value


# --- small helpers ------------------------------------------------------------------------------

def _pct(sums: Sequence[float]) -> float | None:
    r = ratio(sums)
    return None if r is None else 100 * r


def _total(per_unit: list[float]) -> Estimate:
    return Estimate((per_unit, [1.0] * len(per_unit)), total_over(len(per_unit)))


def _present(col: list) -> bool:
    return any(v is not None for v in col)


def role_devices(rec: Recording) -> dict[str, list[str]]:
    """Role label -> devices with that role ("data,wal" counts for both), in recording order."""
    out: dict[str, list[str]] = {}
    for dev, role in rec.devices.items():
        for r in (role or "").split(","):
            if r in ROLE_LABELS:
                out.setdefault(ROLE_LABELS[r], []).append(dev)
    return out


# --- the summary --------------------------------------------------------------------------------

class _Ticks:
    """The window's per-tick values, one list per metric (None where missing)."""

    def __init__(self, rec: Recording, win: Window, metrics: list[str]):
        c = aligned_columns(rec, win, metrics)
        self.x, self.dt, self.n, self.cols = c.x, c.dt, len(c), c.values

    def col(self, metric: str) -> list:
        return self.cols.get(metric) or [None] * self.n

    def has(self, metric: str) -> bool:
        return _present(self.col(metric))


def summarize(rec: Recording, win: Window) -> Summary:
    """Every statistic of one recording over `win`."""
    roles = role_devices(rec)
    wanted = _scalar_metrics()
    available = set(rec.metric_names())
    scalars = [m for m in wanted if m in available]
    busiest = _busiest_devices(rec, win, roles)
    disk = [M.disk(dev, f) for dev in dict.fromkeys(busiest.values())
            for f in (M.DISK_R_S, M.DISK_W_S, M.DISK_RKB_S, M.DISK_WKB_S, M.DISK_R_AWAIT_MS, M.DISK_W_AWAIT_MS,
                      M.DISK_UTIL_PCT)]
    ticks = _Ticks(rec, win, scalars + disk)
    workloads = rec.workloads()
    pgio = [w for w in workloads if w.get("kind") == "pgio"]
    done = rec.checkpoints()
    s = Summary(path=rec.path, window=win, stats=[], settings=rec.settings(win.start_tick), meta=dict(rec.meta),
                role_devices=busiest, checkpoint_spans=checkpoint_spans(rec, win, done), pgio=bool(pgio),
                setting_events=[(win.x(e.t), e.event.text) for e in rec.events(["setting_change"])
                                if win.contains(e.t)])
    _latency(s, ticks)
    _whole_run_latency(s, rec, win, workloads[0] if workloads else None)
    _statements(s, ticks)
    _writes(s, ticks)
    _checkpoints(s, done, win)
    _memory(s, ticks)
    _devices(s, ticks)
    if pgio:
        _pgio(s, ticks, pgio[0])
    for label, figure, unit, value in statement_rows(rec, win):  # pg_stat_statements, top by time
        _add(s, "statements", f"{label} · {figure}", unit, value)
    return s


def _scalar_metrics() -> list[str]:
    return ([M.LATENCY_TPS, M.LATENCY_CALLS_S, M.LATENCY_TXNS, M.LATENCY_MEAN_MS, M.LATENCY_STDDEV_MS,
             M.LATENCY_P50_MS, M.LATENCY_P95_MS, M.LATENCY_P99_MS, M.LATENCY_MAX_MS]
            + list(M.LATENCY_OVER.values())
            + [M.STATEMENTS_MEAN_MS, M.STATEMENTS_STDDEV_MS, M.STATEMENTS_CALLS_S]
            + [M.writes(src) for src in M.WRITE_SOURCES] + [M.FSYNCS_BACKEND]
            + [M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB, M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, M.MEM_DIRTY_THRESHOLD_KB]
            + [M.PGIO_READS_S, M.PGIO_HITS_S, M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S])


def _busiest_devices(rec: Recording, win: Window, roles: dict[str, list[str]]) -> dict[str, str]:
    """Per role, the device that did the most I/O in the window. A stack (dm-0 over nvme0n1) holds
    the same I/O twice: one device per role keeps it once, and names what the figures describe."""
    out = {}
    for label, devs in roles.items():
        if len(devs) == 1:
            out[label] = devs[0]
            continue
        c = aligned_columns(rec, win, [M.disk(d, f) for d in devs for f in (M.DISK_R_S, M.DISK_W_S)])
        totals = [sum((r or 0) * dt + (w or 0) * dt for r, w, dt in
                      zip(c.values[M.disk(d, M.DISK_R_S)], c.values[M.disk(d, M.DISK_W_S)], c.dt)) for d in devs]
        out[label] = devs[max(range(len(devs)), key=lambda i: (totals[i], -i))]
    return out


def _add(s: Summary, group: str, name: str, unit: str, value, estimate=None, metric=None, note="",
         stat="") -> None:
    s.stats.append(Stat(group, name, unit, value, estimate, metric, note, stat))


# --- latency ------------------------------------------------------------------------------------

def _latency(s: Summary, t: _Ticks) -> None:
    mean, tps = t.col(M.LATENCY_MEAN_MS), t.col(M.LATENCY_TPS)
    if not _present(mean) and not _present(tps):
        return
    launched = t.has(M.LATENCY_P50_MS)  # quantiles come only from a workload pgio-tui launched
    if t.has(M.LATENCY_TXNS):  # what the tick's figures cover (a sample with pgbench --sampling-rate)
        weights, what = [v or 0.0 for v in t.col(M.LATENCY_TXNS)], "transactions"
    elif launched or not t.has(M.LATENCY_CALLS_S):
        weights, what = [(r or 0.0) * dt for r, dt in zip(tps, t.dt)], "transactions"
    else:  # recordings made before statements.* existed: latency.* then held statement figures
        weights, what = [(r or 0.0) * dt for r, dt in zip(t.col(M.LATENCY_CALLS_S), t.dt)], "statements"
    if not any(weights):
        weights, what = [1.0] * t.n, "ticks"
    s.notes.append(f"latency: {'the launched workload' if launched else 'server statistics'}, weighted by {what}")

    if _present(tps):
        num = [(r or 0.0) * dt for r, dt in zip(tps, t.dt)]
        den = [dt if r is not None else 0.0 for r, dt in zip(tps, t.dt)]
        est = Estimate((num, den), ratio)
        _add(s, "latency", "tps", "1/s", est.value(), est, M.LATENCY_TPS)

    def weighted(metric: str, name: str) -> None:
        col = t.col(metric)
        if not _present(col):
            return
        w = [wi if v is not None else 0.0 for v, wi in zip(col, weights)]
        est = Estimate(([(v or 0.0) * wi for v, wi in zip(col, w)], w), ratio)
        _add(s, "latency", name, "ms", est.value(), est, metric)

    weighted(M.LATENCY_MEAN_MS, "mean")
    sd = t.col(M.LATENCY_STDDEV_MS)
    if _present(sd) and _present(mean):
        n = [w if m is not None and d is not None else 0.0 for m, d, w in zip(mean, sd, weights)]
        nm = [ni * (m or 0.0) for ni, m in zip(n, mean)]
        nq = [ni * ((d or 0.0) ** 2 + (m or 0.0) ** 2) for ni, m, d in zip(n, mean, sd)]
        est = Estimate((n, nm, nq), pooled_stddev)
        _add(s, "latency", "stddev", "ms", est.value(), est, M.LATENCY_STDDEV_MS)
    for p, metric in PERCENTILE_METRICS.items():
        weighted(metric, p)
    mx = [v for v in t.col(M.LATENCY_MAX_MS) if v is not None]
    if mx:
        _add(s, "latency", "max", "ms", max(mx), None, M.LATENCY_MAX_MS)

    for ms, metric in M.LATENCY_OVER.items():
        col = t.col(metric)
        if _present(col):
            m = lookup(metric)
            per_s = m is not None and m.unit.endswith("/s")
            counts = [(v or 0.0) * (dt if per_s else 1.0) for v, dt in zip(col, t.dt)]
            est = _total(counts)
            _add(s, "latency", f"over {ms} ms", what, est.value(), est, metric)
        elif _present(mean):
            over = [1.0 if v is not None and v > ms else 0.0 for v in mean]
            est = _total(over)
            _add(s, "latency", f"ticks mean > {ms} ms", "ticks", est.value(), est, M.LATENCY_MEAN_MS)


def _replace(s: Summary, name: str, value: float | None, note: str, keep_estimate: bool = True) -> None:
    """Give a latency statistic its exact value (the workload's own, or from transactions)."""
    if value is None:
        return
    st = s.get("latency", name)
    if st is None:
        unit = "1/s" if name == "tps" else "ms"
        _add(s, "latency", name, unit, float(value), None, None, note)
        return
    st.value, st.note = float(value), note
    if not keep_estimate:
        st.estimate = None


def workload_figures(workload: dict[str, Any] | None) -> tuple[dict[str, float | None], str]:
    """tps, mean and stddev of a workload's whole run as the workload itself reported them, and
    where they come from; ({}, "") when it reported none."""
    summary = (workload or {}).get("summary")
    if not isinstance(summary, dict) or summary.get("partial"):
        return {}, ""
    if workload.get("kind") == "pgbench":
        if summary.get("source") == "pgbench" and summary.get("tps") is not None:
            return {"tps": summary.get("tps"), "mean": summary.get("latency_avg_ms"),
                    "stddev": summary.get("latency_stddev_ms")}, "pgbench's summary"
        m = summary.get("measured") if isinstance(summary.get("measured"), dict) else {}
        if m.get("tps") is not None:
            return {"tps": m.get("tps"), "mean": m.get("latency_mean_ms"), "stddev": m.get("latency_stddev_ms")}, \
                "pgbench's per-transaction log (pgbench printed no summary)"
    if workload.get("kind") == "pgio" and isinstance(summary.get("latency"), dict):
        lat = summary["latency"]
        return {"tps": summary.get("statements_s"), "mean": lat.get("mean_ms"),
                "stddev": lat.get("stddev_ms")}, "pgio's summary (statements)"
    return {}, ""


def _whole_run_latency(s: Summary, rec: Recording, win: Window, workload: dict[str, Any] | None) -> None:
    """Whole-run figures that are exact rather than averaged per tick: the workload's own tps, mean
    and stddev when the window is its whole run; percentiles from the transactions' histograms
    (merged per-tick buckets) whenever the recording has them."""
    if win.whole_workload:
        figures, source = workload_figures(workload)
        for name in ("tps", "mean", "stddev"):
            _replace(s, name, figures.get(name), source)
        if workload is not None and (workload.get("exit_code") == EXIT_INTERRUPTED
                                     or (workload.get("summary") or {}).get("interrupted")):
            s.notes.append(f"workload ended early (exit {EXIT_INTERRUPTED}: interrupted): its figures cover "
                           "the run until then")
    if win.start_tick is None:
        return
    hist = rec.latency_histogram(win.start_tick, win.end_tick)
    if not hist.count:
        if s.get("latency", "p50") is not None:
            s.notes.append("latency percentiles: per tick, weighted (no latency histogram recorded)")
        return
    for p in PERCENTILES:
        _replace(s, p, hist.percentile(float(p[1:])), "from transactions", keep_estimate=False)


# --- statements (pg_stat_statements) ------------------------------------------------------------

def _statements(s: Summary, t: _Ticks) -> None:
    """Statement execution time (not transaction latency): mean and stddev weighted by the calls
    of each tick, pooled; calls per second."""
    mean, sd, calls = t.col(M.STATEMENTS_MEAN_MS), t.col(M.STATEMENTS_STDDEV_MS), t.col(M.STATEMENTS_CALLS_S)
    if not _present(mean):
        return
    n = [(c or 0.0) * dt if m is not None else 0.0 for m, c, dt in zip(mean, calls, t.dt)]
    est = Estimate(([ni * (m or 0.0) for ni, m in zip(n, mean)], n), ratio)
    _add(s, "statements", "mean", "ms", est.value(), est, M.STATEMENTS_MEAN_MS)
    if _present(sd):
        n2 = [ni if d is not None else 0.0 for ni, d in zip(n, sd)]
        est = Estimate((n2, [ni * (m or 0.0) for ni, m in zip(n2, mean)],
                        [ni * ((d or 0.0) ** 2 + (m or 0.0) ** 2) for ni, m, d in zip(n2, mean, sd)]), pooled_stddev)
        _add(s, "statements", "stddev", "ms", est.value(), est, M.STATEMENTS_STDDEV_MS)
    num = [(c or 0.0) * dt for c, dt in zip(calls, t.dt)]
    den = [dt if c is not None else 0.0 for c, dt in zip(calls, t.dt)]
    est = Estimate((num, den), ratio)
    _add(s, "statements", "calls/s", "1/s", est.value(), est, M.STATEMENTS_CALLS_S)
    s.notes.append("statements: execution time of plannable statements from pg_stat_statements "
                   "(utility statements and pgio-tui's own left out), not transaction latency")


# --- buffers written by source -------------------------------------------------------------------

def _writes(s: Summary, t: _Ticks) -> None:
    present = [src for src in M.WRITE_SOURCES if t.has(M.writes(src))]
    if not present:
        return
    per_tick = {src: [(v or 0.0) * dt for v, dt in zip(t.col(M.writes(src)), t.dt)] for src in present}
    all_ = [sum(col) for col in zip(*per_tick.values())]
    for src in present:
        est = _total(per_tick[src])
        _add(s, "writes", src, "buffers", est.value(), est, M.writes(src), stat="total")
    est = _total(all_)
    _add(s, "writes", "all sources", "buffers", est.value(), est)
    for src in present:
        est = Estimate((per_tick[src], all_), _pct)
        _add(s, "writes", f"{src} share", "%", est.value(), est, M.writes(src), stat="share")
    if t.has(M.FSYNCS_BACKEND):
        col = [(v or 0.0) * dt for v, dt in zip(t.col(M.FSYNCS_BACKEND), t.dt)]
        est = _total(col)
        _add(s, "writes", "backend fsyncs", "fsyncs", est.value(), est, M.FSYNCS_BACKEND)


# --- checkpoints ---------------------------------------------------------------------------------

def checkpoints_in(done: list[dict[str, Any]], win: Window) -> list[dict[str, Any]]:
    """The finished checkpoints (rec.checkpoints()) that started inside the window (or ended in it
    when the start is unknown)."""
    return [c for c in done
            if win.contains(c["start_t"] if c.get("start_t") is not None else c.get("end_t", -math.inf))]


def checkpoint_spans(rec: Recording, win: Window, done: list[dict[str, Any]]) -> list[tuple[float, float, str]]:
    """(x start, x end, kind) of checkpoints overlapping the window, clipped to it; one still
    running at the end (a start event without a finished row) runs to the end."""
    spans = []
    for c in done:
        a, b = c.get("start_t"), c.get("end_t")
        if a is None or b is None or b < win.origin_t or a > win.end_t:
            continue
        spans.append((max(a, win.origin_t) - win.origin_t, min(b, win.end_t) - win.origin_t, str(c.get("kind") or "")))
    last_end = max((c.get("end_t") or 0 for c in done), default=0)
    starts = [e for e in rec.events(["checkpoint_start"]) if e.t > last_end + 1e-6 and e.t <= win.end_t]
    if starts:
        spans.append((max(starts[0].t, win.origin_t) - win.origin_t, win.length,
                      str(starts[0].event.data.get("kind") or "")))
    return spans


def _checkpoints(s: Summary, done: list[dict[str, Any]], win: Window) -> None:
    cps = checkpoints_in(done, win)
    _add(s, "checkpoints", "count", "checkpoints", float(len(cps)))
    for kind, n in sorted(Counter(str(c.get("kind") or "unknown") for c in cps).items()):
        _add(s, "checkpoints", f"count ({kind})", "checkpoints", float(n))
    for key, name, unit in (("write_s", "write mean", "s"), ("sync_s", "sync mean", "s"),
                            ("total_s", "total mean", "s"), ("buffers", "buffers mean", "buffers")):
        vals = [float(c[key]) for c in cps if c.get(key) is not None]
        if vals:
            est = Estimate((vals, [1.0] * len(vals)), ratio, independent=True)  # checkpoints: independent units
            _add(s, "checkpoints", name, unit, est.value(), est)
    if not cps:
        s.notes.append("checkpoints: none finished in the window")


# --- Dirty / Writeback ---------------------------------------------------------------------------

def _memory(s: Summary, t: _Ticks) -> None:
    for metric, label in ((M.MEM_DIRTY_KB, "Dirty"), (M.MEM_WRITEBACK_KB, "Writeback")):
        col = [v / KB_PER_MIB for v in t.col(metric) if v is not None]
        if not col:
            continue
        est = Estimate((col, [1.0] * len(col)), ratio)
        _add(s, "memory", f"{label} mean", "MiB", est.value(), est, metric, stat="mean")
        _add(s, "memory", f"{label} p95", "MiB", percentile(sorted(col), 95), None, metric, stat="p95")
        _add(s, "memory", f"{label} max", "MiB", max(col), None, metric, stat="max")
    dirty = t.col(M.MEM_DIRTY_KB)
    for metric, label in ((M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "background"), (M.MEM_DIRTY_THRESHOLD_KB, "throttle")):
        thr = t.col(metric)
        if not (_present(dirty) and _present(thr)):
            continue
        above = [dt if d is not None and th is not None and d > th else 0.0 for d, th, dt in zip(dirty, thr, t.dt)]
        est = _total(above)
        _add(s, "memory", f"time Dirty > {label} threshold", "s", est.value(), est, metric)


# --- devices -------------------------------------------------------------------------------------

def device_labels(role_devices: dict[str, str]) -> dict[str, str]:
    """One label per device, naming all its roles ("PGDATA+WAL" when pg_wal shares PGDATA's device),
    so a shared device's figures are shown once."""
    labels: dict[str, list[str]] = {}
    for role, dev in role_devices.items():
        labels.setdefault(dev, []).append(role)
    return {"+".join(roles): dev for dev, roles in labels.items()}


def _devices(s: Summary, t: _Ticks) -> None:
    for label, dev in device_labels(s.role_devices).items():
        util_m = M.disk(dev, M.DISK_UTIL_PCT)
        util = [v for v in t.col(util_m) if v is not None]
        if not util:
            continue
        est = Estimate((util, [1.0] * len(util)), ratio)
        _add(s, "devices", f"{label} util mean", "%", est.value(), est, util_m, dev, stat="mean")
        _add(s, "devices", f"{label} util p95", "%", percentile(sorted(util), 95), None, util_m, dev, stat="p95")
        for f, name in ((M.DISK_WKB_S, "write"), (M.DISK_RKB_S, "read")):
            rate = t.col(M.disk(dev, f))
            if f == M.DISK_RKB_S and not any(rate):
                continue
            num = [(v or 0.0) / 1024 * dt for v, dt in zip(rate, t.dt)]
            den = [dt if v is not None else 0.0 for v, dt in zip(rate, t.dt)]
            est = Estimate((num, den), ratio)
            _add(s, "devices", f"{label} {name} MiB/s mean", "MiB/s", est.value(), est, M.disk(dev, f), dev,
                 stat="mean")
        for ops, aw, name in ((M.DISK_W_S, M.DISK_W_AWAIT_MS, "w_await"), (M.DISK_R_S, M.DISK_R_AWAIT_MS, "r_await")):
            o, a = t.col(M.disk(dev, ops)), t.col(M.disk(dev, aw))
            busy = [(av, (ov or 0.0) * dt) for ov, av, dt in zip(o, a, t.dt) if av is not None and ov]
            if not busy:
                continue
            est = Estimate(([av * w for av, w in busy], [w for _, w in busy]), ratio)
            _add(s, "devices", f"{label} {name} mean", "ms", est.value(), est, M.disk(dev, aw), dev, stat="mean")
            _add(s, "devices", f"{label} {name} p95", "ms", percentile(sorted(av for av, _ in busy), 95), None,
                 M.disk(dev, aw), dev, stat="p95")


# --- pgio ----------------------------------------------------------------------------------------

_RIOPS_KEYS = ("riops",)
_HITS_KEYS = ("cache_hits_s", "cache_hits/s", "cache_hits_per_s", "cache_hits")


def _summary_value(summary: Any, keys: tuple[str, ...]) -> float | None:
    if not isinstance(summary, dict):
        return None
    lowered = {str(k).lower(): v for k, v in summary.items()}
    for k in keys:
        v = lowered.get(k)
        if isinstance(v, (int, float)):
            return float(v)
    return None


def _pgio(s: Summary, t: _Ticks, workload: dict[str, Any]) -> None:
    """RIOPS and CACHE_HITS/s: the workload's own summary when it has one; judged on the per-tick
    reads of its sessions (pgio.*), else of the whole server (db.*)."""
    for own, server, name, keys in ((M.PGIO_READS_S, M.DB_BLKS_READ_S, "RIOPS", _RIOPS_KEYS),
                                    (M.PGIO_HITS_S, M.DB_BLKS_HIT_S, "CACHE_HITS/s", _HITS_KEYS)):
        metric = own if t.has(own) else server
        col = t.col(metric)
        est = None
        if _present(col):
            num = [(v or 0.0) * dt for v, dt in zip(col, t.dt)]
            den = [dt if v is not None else 0.0 for v, dt in zip(col, t.dt)]
            est = Estimate((num, den), ratio)
        value = _summary_value(workload.get("summary"), keys)
        note = "pgio summary" if value is not None else "per-tick mean"
        if value is None and est is not None:
            value = est.value()
        if value is not None:
            _add(s, "pgio", name, "1/s", value, est, metric, note)
