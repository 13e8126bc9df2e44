"""The latency group of a summary: per-tick figures weighted by what each tick covers, then made
exact where the recording allows (the workload's own whole-run figures, merged histograms).

Apart from the other groups because latency alone has two sources to reconcile; docs/diff.md
says how each figure is computed.
"""

from __future__ import annotations

from typing import Any

from pgio_tui import metrics as M
from pgio_tui.analysis.align import Window
from pgio_tui.analysis.noise import Estimate, pooled_stddev, ratio
from pgio_tui.analysis.summary_model import (PERCENTILE_METRICS, PERCENTILES, Summary, Ticks, add_stat, has_values,
                                             total_estimate)
from pgio_tui.metrics import lookup
from pgio_tui.store.reader import Recording
from pgio_tui.workload_facts import EXIT_INTERRUPTED


def add_latency(s: Summary, t: Ticks) -> None:
    mean, tps = t.col(M.LATENCY_MEAN_MS), t.col(M.LATENCY_TPS)
    if not has_values(mean) and not has_values(tps):
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

    if has_values(tps):
        num = [(r or 0.0) * dt for r, dt in zip(tps, t.dt)]
        den = [dt if r is not None else 0.0 for r, dt in zip(tps, t.dt)]
        est = Estimate((num, den), ratio)
        add_stat(s, "latency", "tps", "1/s", est.value(), est, M.LATENCY_TPS, stat="mean")

    def weighted(metric: str, name: str) -> None:
        col = t.col(metric)
        if not has_values(col):
            return
        w = [wi if v is not None else 0.0 for v, wi in zip(col, weights)]
        est = Estimate(([(v or 0.0) * wi for v, wi in zip(col, w)], w), ratio)
        add_stat(s, "latency", name, "ms", est.value(), est, metric, stat="mean")

    weighted(M.LATENCY_MEAN_MS, "mean")
    sd = t.col(M.LATENCY_STDDEV_MS)
    if has_values(sd) and has_values(mean):
        n = [w if m is not None and d is not None else 0.0 for m, d, w in zip(mean, sd, weights)]
        nm = [ni * (m or 0.0) for ni, m in zip(n, mean)]
        nq = [ni * ((d or 0.0) ** 2 + (m or 0.0) ** 2) for ni, m, d in zip(n, mean, sd)]
        est = Estimate((n, nm, nq), pooled_stddev)
        add_stat(s, "latency", "stddev", "ms", est.value(), est, M.LATENCY_STDDEV_MS, stat="pooled")
    for p, metric in PERCENTILE_METRICS.items():
        weighted(metric, p)
    mx = [v for v in t.col(M.LATENCY_MAX_MS) if v is not None]
    if mx:
        add_stat(s, "latency", "max", "ms", max(mx), None, M.LATENCY_MAX_MS, stat="max")

    for ms, metric in M.LATENCY_OVER.items():
        col = t.col(metric)
        if has_values(col):
            m = lookup(metric)
            per_s = m is not None and m.unit.endswith("/s")
            counts = [(v or 0.0) * (dt if per_s else 1.0) for v, dt in zip(col, t.dt)]
            est = total_estimate(counts)
            add_stat(s, "latency", f"over {ms} ms", what, est.value(), est, metric, stat="total")
        elif has_values(mean):
            over = [1.0 if v is not None and v > ms else 0.0 for v in mean]
            est = total_estimate(over)
            add_stat(s, "latency", f"ticks mean > {ms} ms", "ticks", est.value(), est, M.LATENCY_MEAN_MS,
                     stat=f"ticks over {ms}")


LATENCY_STATS = {"tps": (M.LATENCY_TPS, "mean"), "mean": (M.LATENCY_MEAN_MS, "mean"),
                 "stddev": (M.LATENCY_STDDEV_MS, "pooled"), **{p: (m, "mean") for p, m in PERCENTILE_METRICS.items()}}
OF_TRANSACTIONS = "of transactions"  # the statistic of a percentile taken over every transaction of the run


def _replace(s: Summary, name: str, value: float | None, note: str, keep_estimate: bool = True,
             stat: str | None = None) -> None:
    """Give a latency statistic its exact value (the workload's own, or from transactions; `stat`
    says when that makes it another statistic of its metric)."""
    if value is None:
        return
    metric, default = LATENCY_STATS[name]
    st = s.get("latency", name)
    if st is None:
        unit = "1/s" if name == "tps" else "ms"
        add_stat(s, "latency", name, unit, float(value), None, None, note, stat=stat or default, of=metric)
        return
    st.value, st.note = float(value), note
    st.stat, st.of = stat or st.stat, metric
    if not keep_estimate:
        st.estimate = None


def workload_figures(workload: dict[str, Any] | None) -> tuple[dict[str, float | None], str]:
    """tps, mean and stddev of a workload's whole run as the workload itself reported them, and
    where they come from; ({}, "") when it reported none."""
    workload = workload or {}
    summary = workload.get("summary")
    if not isinstance(summary, dict) or summary.get("partial"):
        return {}, ""
    if workload.get("kind") == "pgbench":
        if summary.get("source") == "pgbench" and summary.get("tps") is not None:
            return {"tps": summary.get("tps"), "mean": summary.get("latency_avg_ms"),
                    "stddev": summary.get("latency_stddev_ms")}, "pgbench's summary"
        m = ms if isinstance(ms := summary.get("measured"), dict) else {}
        if m.get("tps") is not None:
            return {"tps": m.get("tps"), "mean": m.get("latency_mean_ms"), "stddev": m.get("latency_stddev_ms")}, \
                "pgbench's per-transaction log (pgbench printed no summary)"
    ms = summary.get("elapsed_ms")
    if workload.get("kind") == "sql" and isinstance(summary.get("latency"), dict) and isinstance(ms, list) \
            and ms and all(isinstance(x, (int, float)) for x in ms) and sum(ms) > 0:
        lat = summary["latency"]
        return {"tps": len(ms) / (sum(ms) / 1000), "mean": lat.get("mean_ms"),
                "stddev": lat.get("stddev_ms")}, "the sql workload's timing (executions / their elapsed time)"
    if workload.get("kind") == "pgio" and isinstance(summary.get("latency"), dict):
        lat = summary["latency"]
        return {"tps": summary.get("statements_s"), "mean": lat.get("mean_ms"),
                "stddev": lat.get("stddev_ms")}, "pgio's summary (statements)"
    return {}, ""


def add_whole_run_latency(s: Summary, rec: Recording, win: Window, workload: dict[str, Any] | None) -> None:
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
        _replace(s, p, hist.percentile(float(p[1:])), "from transactions", keep_estimate=False, stat=OF_TRANSACTIONS)
