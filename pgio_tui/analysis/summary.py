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
- checkpoints: those that started inside the window, one still running at its end included (its
  duration so far apart, as partial; the means are of finished ones);
- memory: per-tick Dirty/Writeback levels, and the time Dirty spent above the kernel's thresholds;
- backends: MiB read and written per kind of backend (backend type and application), summed over
  the ticks in which the recording kept it (analysis/backends.py);
- devices: per role (PGDATA, WAL), the role's busiest device, so runs on machines with other
  device names still compare;
- reads and WAL: time-weighted rates, ratios of window totals (summary_io.py).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from pgio_tui import metrics as M
from pgio_tui.analysis.align import Window, aligned_columns
from pgio_tui.analysis.noise import Estimate, pooled_stddev, ratio
from pgio_tui.analysis.summary_io import READS_METRICS, WAL_METRICS, add_reads, add_stat_io, add_wal
from pgio_tui.analysis.summary_latency import add_latency, add_whole_run_latency
from pgio_tui.analysis.summary_model import (ALL_WRITES, CHECKPOINTS, KB_PER_MIB, ROLE_LABELS, Summary, Ticks,
                                             add_stat, has_values, percent_of, total_estimate)
from pgio_tui.analysis.backends import BACKENDS_NOTE, backend_rows
from pgio_tui.analysis.statements import statement_rows
from pgio_tui.stats import percentile
from pgio_tui.store.reader import Recording

if TYPE_CHECKING:
    from pgio_tui.store.timeline import Timeline


def role_devices(rec: Recording | Timeline) -> dict[str, list[str]]:
    """Role label -> devices with that role ("data,wal" counts for both), in recording order."""
    out: dict[str, list[str]] = {}
    for dev, role in rec.devices.items():
        for r in (role or "").split(","):
            if r in ROLE_LABELS:
                out.setdefault(ROLE_LABELS[r], []).append(dev)
    return out


# --- the summary --------------------------------------------------------------------------------

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
    wal_dev = busiest.get(ROLE_LABELS["wal"])
    disk += [M.disk(wal_dev, f) for f in (M.DISK_F_S, M.DISK_F_AWAIT_MS)
             if wal_dev is not None and M.disk(wal_dev, f) in available]
    ticks = Ticks(rec, win, scalars + disk)
    workloads = rec.workloads()
    pgio = [w for w in workloads if w.get("kind") == "pgio"]
    done = rec.checkpoints()
    s = Summary(path=rec.path, window=win, stats=[], settings=rec.settings(win.start_tick), meta=dict(rec.meta),
                role_devices=busiest, checkpoint_spans=checkpoint_spans(rec, win, done), pgio=bool(pgio),
                setting_events=[(win.x(e.t), e.event.text) for e in rec.events(["setting_change"])
                                if win.contains(e.t)])
    add_latency(s, ticks)
    add_whole_run_latency(s, rec, win, workloads[0] if workloads else None)
    _statements(s, ticks)
    _writes(s, ticks)
    _checkpoints(s, rec, done, win)
    _memory(s, ticks)
    _devices(s, ticks)
    add_reads(s, ticks)
    add_wal(s, ticks, wal_dev if wal_dev is not None and M.disk(wal_dev, M.DISK_F_S) in available else None)
    add_stat_io(s, rec, win)
    if pgio:
        _pgio(s, ticks, pgio[0])
    for statement, label, figure, unit, value in statement_rows(rec, win):  # pg_stat_statements, top by time
        add_stat(s, "statements", f"{label} · {figure}", unit, value, stat=figure, of=f"statement {statement}")
    _backends(s, rec, win)
    return s


def _scalar_metrics() -> list[str]:
    return ([M.LATENCY_TPS, M.LATENCY_CALLS_S, M.LATENCY_TXNS, M.LATENCY_MEAN_MS, M.LATENCY_STDDEV_MS,
             M.LATENCY_P50_MS, M.LATENCY_P95_MS, M.LATENCY_P99_MS, M.LATENCY_MAX_MS]
            + list(M.LATENCY_OVER.values())
            + [M.STATEMENTS_MEAN_MS, M.STATEMENTS_STDDEV_MS, M.STATEMENTS_CALLS_S]
            + list(M.STATEMENTS_LOG_OVER.values())
            + [M.writes(src) for src in M.WRITE_SOURCES] + [M.FSYNCS_BACKEND]
            + [M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB, M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, M.MEM_DIRTY_THRESHOLD_KB]
            + [M.PGIO_READS_S, M.PGIO_HITS_S, M.PGIO_TUPLES_S] + list(dict.fromkeys(READS_METRICS + WAL_METRICS)))


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


# --- statements (pg_stat_statements) ------------------------------------------------------------

def _statements(s: Summary, t: Ticks) -> None:
    """Statement execution time (not transaction latency): mean and stddev weighted by the calls
    of each tick, pooled; calls per second."""
    for ms, metric in M.STATEMENTS_LOG_OVER.items():  # any client's statements, from the server log
        col = t.col(metric)
        if has_values(col):
            est = total_estimate([v or 0.0 for v in col])
            add_stat(s, "statements", f"over {ms} ms (server log)", "statements", est.value(), est, metric,
                     stat="total")
    mean, sd, calls = t.col(M.STATEMENTS_MEAN_MS), t.col(M.STATEMENTS_STDDEV_MS), t.col(M.STATEMENTS_CALLS_S)
    if not has_values(mean):
        return
    n = [(c or 0.0) * dt if m is not None else 0.0 for m, c, dt in zip(mean, calls, t.dt)]
    est = Estimate(([ni * (m or 0.0) for ni, m in zip(n, mean)], n), ratio)
    add_stat(s, "statements", "mean", "ms", est.value(), est, M.STATEMENTS_MEAN_MS, stat="mean")
    if has_values(sd):
        n2 = [ni if d is not None else 0.0 for ni, d in zip(n, sd)]
        est = Estimate((n2, [ni * (m or 0.0) for ni, m in zip(n2, mean)],
                        [ni * ((d or 0.0) ** 2 + (m or 0.0) ** 2) for ni, m, d in zip(n2, mean, sd)]), pooled_stddev)
        add_stat(s, "statements", "stddev", "ms", est.value(), est, M.STATEMENTS_STDDEV_MS, stat="pooled")
    num = [(c or 0.0) * dt for c, dt in zip(calls, t.dt)]
    den = [dt if c is not None else 0.0 for c, dt in zip(calls, t.dt)]
    est = Estimate((num, den), ratio)
    add_stat(s, "statements", "calls/s", "1/s", est.value(), est, M.STATEMENTS_CALLS_S, stat="mean")
    s.notes.append("statements: execution time of plannable statements from pg_stat_statements "
                   "(utility statements and pgio-tui's own left out), not transaction latency")


# --- backends (/proc/<pid>/io; pg_stat_get_backend_io on 18) ------------------------------------

def _backends(s: Summary, rec: Recording, win) -> None:
    """The busiest kinds of backend (type and application: pids differ between runs), MiB read and written."""
    rows = backend_rows(rec, win)
    for kind, label, figure, unit, value in rows:
        add_stat(s, "backends", f"{label} · {figure}", unit, value, stat=figure, of=f"backend {kind}")
    if rows:
        s.notes.append(BACKENDS_NOTE)


# --- buffers written by source -------------------------------------------------------------------

def _writes(s: Summary, t: Ticks) -> None:
    present = [src for src in M.WRITE_SOURCES if t.has(M.writes(src))]
    if not present:
        return
    per_tick = {src: [(v or 0.0) * dt for v, dt in zip(t.col(M.writes(src)), t.dt)] for src in present}
    all_: list[float] = [sum(col) for col in zip(*per_tick.values())]
    for src in present:
        est = total_estimate(per_tick[src])
        add_stat(s, "writes", src, "buffers", est.value(), est, M.writes(src), stat="total")
    est = total_estimate(all_)
    add_stat(s, "writes", "all sources", "buffers", est.value(), est, stat="total", of=ALL_WRITES)
    for src in present:
        est = Estimate((per_tick[src], all_), percent_of)
        add_stat(s, "writes", f"{src} share", "%", est.value(), est, M.writes(src), stat="share")
    if t.has(M.FSYNCS_BACKEND):
        col = [(v or 0.0) * dt for v, dt in zip(t.col(M.FSYNCS_BACKEND), t.dt)]
        est = total_estimate(col)
        add_stat(s, "writes", "backend fsyncs", "fsyncs", est.value(), est, M.FSYNCS_BACKEND, stat="total")


# --- checkpoints ---------------------------------------------------------------------------------

def checkpoints_in(done: list[dict[str, Any]], win: Window) -> list[dict[str, Any]]:
    """The finished checkpoints (rec.checkpoints()) that started inside the window (or ended in it
    when the start is unknown)."""
    return [c for c in done
            if win.contains(c["start_t"] if c.get("start_t") is not None else c.get("end_t", -math.inf))]


def running_at_end(rec: Recording, win: Window, done: list[dict[str, Any]]) -> tuple[float, str] | None:
    """(start wall time, kind) of a checkpoint that never finished in the recording and started
    at or before the window's end; else None. A start event is a finished checkpoint's when their
    starts agree: exactly where the event carries its start_t (the time it began), else within a
    tick (older files: a checkpoint begun and done within one tick has its start event at its end)."""
    last_end = max((c.get("end_t") or 0 for c in done), default=0)
    starts = [c["start_t"] for c in done if isinstance(c.get("start_t"), (int, float))]
    tick = float(rec.meta.get("interval_s") or 1.0)
    for e in rec.events(["checkpoint_start"]):
        if e.t > win.end_t:
            break
        given = e.event.data.get("start_t")
        if isinstance(given, (int, float)) and not isinstance(given, bool) and given <= e.t:
            at, near = float(given), 1e-3  # the start the event carries: exact
        else:
            at, near = e.t, tick + 1e-6
        if at > last_end + 1e-6 and not any(abs(s - at) <= near for s in starts):
            return at, str(e.event.data.get("kind") or "")
    return None


def checkpoint_spans(rec: Recording, win: Window, done: list[dict[str, Any]]) -> list[tuple[float, float, str]]:
    """(x start, x end, kind) of checkpoints overlapping the window, clipped to it; one still
    running at the end (a start event without a finished row) runs to the end."""
    spans = []
    running = running_at_end(rec, win, done)
    for c in done:
        a, b = c.get("start_t"), c.get("end_t")
        if a is None or b is None or b < win.origin_t or a > win.end_t:
            continue
        spans.append((max(a, win.origin_t) - win.origin_t, min(b, win.end_t) - win.origin_t, str(c.get("kind") or "")))
    if running:
        spans.append((max(running[0], win.origin_t) - win.origin_t, win.length, running[1]))
    return spans


def _checkpoints(s: Summary, rec: Recording, done: list[dict[str, Any]], win: Window) -> None:
    """Checkpoints that started in the window. One still running at its end counts (a run that
    ends mid-checkpoint must not lose it: the long, spread ones are the ones that would go), with
    its duration so far apart ("running at end", a lower bound); the means are of finished ones."""
    running = running_at_end(rec, win, done)
    cps = checkpoints_in(done, win)
    partial = running if running is not None and win.contains(running[0]) else None
    kinds = Counter(str(c.get("kind") or "unknown") for c in cps)
    if partial:
        kinds[partial[1] or "unknown"] += 1
    add_stat(s, "checkpoints", "count", "checkpoints", float(len(cps) + (partial is not None)), stat="count",
             of=CHECKPOINTS)
    for kind, n in sorted(kinds.items()):
        add_stat(s, "checkpoints", f"count ({kind})", "checkpoints", float(n), stat=f"count {kind}", of=CHECKPOINTS)
    for key, name, unit in (("write_s", "write mean", "s"), ("sync_s", "sync mean", "s"),
                            ("total_s", "total mean", "s"), ("buffers", "buffers mean", "buffers")):
        vals = [float(c[key]) for c in cps if c.get(key) is not None]
        if vals:
            est = Estimate((vals, [1.0] * len(vals)), ratio, independent=True)  # checkpoints: independent units
            add_stat(s, "checkpoints", name, unit, est.value(), est, stat=f"{key} mean", of=CHECKPOINTS,
                     note="of finished checkpoints" if partial else "")
    if partial:
        add_stat(s, "checkpoints", "running at end", "checkpoints", 1.0, stat="running at end", of=CHECKPOINTS)
        add_stat(s, "checkpoints", "running at end: elapsed (partial)", "s", win.end_t - partial[0],
                 note="still running when the window ended: a lower bound of its duration",
                 stat="running elapsed", of=CHECKPOINTS)
    if not cps and not partial:
        s.notes.append("checkpoints: none started in the window")
    elif not cps:
        s.notes.append("checkpoints: none finished in the window (one still running at its end)")


# --- Dirty / Writeback ---------------------------------------------------------------------------

def _memory(s: Summary, t: Ticks) -> None:
    for metric, label in ((M.MEM_DIRTY_KB, "Dirty"), (M.MEM_WRITEBACK_KB, "Writeback")):
        col = [v / KB_PER_MIB for v in t.col(metric) if v is not None]
        if not col:
            continue
        est = Estimate((col, [1.0] * len(col)), ratio)
        add_stat(s, "memory", f"{label} mean", "MiB", est.value(), est, metric, stat="mean")
        add_stat(s, "memory", f"{label} p95", "MiB", percentile(sorted(col), 95), None, metric, stat="p95")
        add_stat(s, "memory", f"{label} max", "MiB", max(col), None, metric, stat="max")
    dirty = t.col(M.MEM_DIRTY_KB)
    for metric, label in ((M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "background"), (M.MEM_DIRTY_THRESHOLD_KB, "throttle")):
        thr = t.col(metric)
        if not (has_values(dirty) and has_values(thr)):
            continue
        above = [dt if d is not None and th is not None and d > th else 0.0 for d, th, dt in zip(dirty, thr, t.dt)]
        est = total_estimate(above)
        add_stat(s, "memory", f"time Dirty > {label} threshold", "s", est.value(), est, metric, stat="time above")


# --- devices -------------------------------------------------------------------------------------

def device_labels(role_devices: dict[str, str]) -> dict[str, str]:
    """One label per device, naming all its roles ("PGDATA+WAL" when pg_wal shares PGDATA's device),
    so a shared device's figures are shown once."""
    labels: dict[str, list[str]] = {}
    for role, dev in role_devices.items():
        labels.setdefault(dev, []).append(role)
    return {"+".join(roles): dev for dev, roles in labels.items()}


def _devices(s: Summary, t: Ticks) -> None:
    for label, dev in device_labels(s.role_devices).items():
        util_m = M.disk(dev, M.DISK_UTIL_PCT)
        util = [v for v in t.col(util_m) if v is not None]
        if not util:
            continue
        est = Estimate((util, [1.0] * len(util)), ratio)
        add_stat(s, "devices", f"{label} util mean", "%", est.value(), est, util_m, dev, stat="mean", role=label)
        add_stat(s, "devices", f"{label} util p95", "%", percentile(sorted(util), 95), None, util_m, dev, stat="p95",
                 role=label)
        for f, name in ((M.DISK_WKB_S, "write"), (M.DISK_RKB_S, "read")):
            rate = t.col(M.disk(dev, f))
            if f == M.DISK_RKB_S and not any(rate):
                continue
            num = [(v or 0.0) / 1024 * dt for v, dt in zip(rate, t.dt)]
            den = [dt if v is not None else 0.0 for v, dt in zip(rate, t.dt)]
            est = Estimate((num, den), ratio)
            add_stat(s, "devices", f"{label} {name} MiB/s mean", "MiB/s", est.value(), est, M.disk(dev, f), dev,
                 stat="mean", role=label)
        for ops, aw, name in ((M.DISK_W_S, M.DISK_W_AWAIT_MS, "w_await"), (M.DISK_R_S, M.DISK_R_AWAIT_MS, "r_await")):
            o, a = t.col(M.disk(dev, ops)), t.col(M.disk(dev, aw))
            busy = [(av, (ov or 0.0) * dt) for ov, av, dt in zip(o, a, t.dt) if av is not None and ov]
            if not busy:
                continue
            est = Estimate(([av * w for av, w in busy], [w for _, w in busy]), ratio)
            add_stat(s, "devices", f"{label} {name} mean", "ms", est.value(), est, M.disk(dev, aw), dev, stat="mean",
                     role=label)
            add_stat(s, "devices", f"{label} {name} p95", "ms", percentile(sorted(av for av, _ in busy), 95), None,
                 M.disk(dev, aw), dev, stat="p95", role=label)


# --- pgio ----------------------------------------------------------------------------------------

_RIOPS_KEYS = ("riops",)
_HITS_KEYS = ("cache_hits_s", "cache_hits/s", "cache_hits_per_s", "cache_hits")
_TUPLES_KEYS = ("pgio_tuples_s",)


def _summary_value(summary: Any, keys: tuple[str, ...]) -> float | None:
    if not isinstance(summary, dict):
        return None
    lowered = {str(k).lower(): v for k, v in summary.items()}
    for k in keys:
        v = lowered.get(k)
        if isinstance(v, (int, float)):
            return float(v)
    return None


def _pgio(s: Summary, t: Ticks, workload: dict[str, Any]) -> None:
    """RIOPS, CACHE_HITS/s and tuples/s: the workload's own summary when it has one; judged on the
    per-tick reads of its sessions (pgio.*), else of the whole server (db.*; tuples/s: none)."""
    for own, server, name, keys in ((M.PGIO_READS_S, M.DB_BLKS_READ_S, "RIOPS", _RIOPS_KEYS),
                                    (M.PGIO_HITS_S, M.DB_BLKS_HIT_S, "CACHE_HITS/s", _HITS_KEYS),
                                    (M.PGIO_TUPLES_S, M.PGIO_TUPLES_S, "tuples/s", _TUPLES_KEYS)):
        metric = own if t.has(own) else server
        col = t.col(metric)
        est = None
        if has_values(col):
            num = [(v or 0.0) * dt for v, dt in zip(col, t.dt)]
            den = [dt if v is not None else 0.0 for v, dt in zip(col, t.dt)]
            est = Estimate((num, den), ratio)
        value = _summary_value(workload.get("summary"), keys)
        note = "pgio summary" if value is not None else "per-tick mean"
        if value is None and est is not None:
            value = est.value()
        if value is not None:
            add_stat(s, "pgio", name, "1/s", value, est, metric, note, stat="mean", of=own)
