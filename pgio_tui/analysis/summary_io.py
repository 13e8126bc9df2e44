"""The reads-and-cache and WAL rows of a summary (what `diff` compares and `report` tabulates).

Rates are time-weighted means (Σ rate·dt / Σ dt); ratios are of totals over the window (hit ratio =
Σ hits / Σ (hits + reads), FPI share = Σ FPI / Σ records, time per sync = Σ sync time / Σ syncs), never
means of per-tick ratios; the WAL device's f_await is weighted by its flushes.
"""

from __future__ import annotations

from pgio_tui import metrics as M
from pgio_tui.analysis.noise import Estimate, ratio
from pgio_tui.analysis.summary_model import KB_PER_MIB, ROLE_LABELS, Summary, Ticks, add_stat, percent_of

READS_METRICS = (M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.DB_BLK_READ_TIME_MS_S, M.MEM_CACHED_KB)
WAL_METRICS = (M.WAL_BYTES_S, M.WAL_RECORDS_S, M.WAL_FPI_S, M.WAL_BUFFERS_FULL_S, M.WAL_SYNCS_S,
               M.WAL_SYNC_TIME_MS_S)


def _totals(t: Ticks, metric: str, scale: float = 1.0) -> tuple[list[float], list[float]]:
    """Per tick: rate·dt (scaled) and dt where the rate is known (else 0, 0)."""
    col = t.col(metric)
    return ([(v or 0.0) * dt * scale for v, dt in zip(col, t.dt)],
            [dt if v is not None else 0.0 for v, dt in zip(col, t.dt)])


def _mean_rate(s: Summary, t: Ticks, group: str, name: str, unit: str, metric: str, scale: float = 1.0,
               role: str = "") -> None:
    if t.has(metric):
        est = Estimate(_totals(t, metric, scale), ratio)
        add_stat(s, group, name, unit, est.value(), est, metric, stat="mean", role=role)


def _of_totals(s: Summary, t: Ticks, group: str, name: str, unit: str, num: str, den: list[str], fn=ratio,
               metric: str | None = None) -> None:
    """Σ num / Σ (den...) over the ticks where all of them are known."""
    cols = [t.col(m) for m in (num, *den)]
    known = [all(c[i] is not None for c in cols) for i in range(t.n)]
    if not any(known):
        return
    top = [(cols[0][i] or 0.0) * t.dt[i] if known[i] else 0.0 for i in range(t.n)]
    bottom = [sum((c[i] or 0.0) for c in cols[1:]) * t.dt[i] if known[i] else 0.0 for i in range(t.n)]
    est = Estimate((top, bottom), fn)
    if est.value() is not None:
        add_stat(s, group, name, unit, est.value(), est, metric or num, stat="of totals")


def add_reads(s: Summary, t: Ticks) -> None:
    _mean_rate(s, t, "reads", "blocks read/s", "1/s", M.DB_BLKS_READ_S)
    _of_totals(s, t, "reads", "hit ratio", "%", M.DB_BLKS_HIT_S, [M.DB_BLKS_HIT_S, M.DB_BLKS_READ_S], percent_of)
    if any(t.col(M.DB_BLK_READ_TIME_MS_S)):  # track_io_timing on
        _of_totals(s, t, "reads", "read time per block", "ms", M.DB_BLK_READ_TIME_MS_S, [M.DB_BLKS_READ_S])
    cached = [(x, v) for x, v in zip(t.x, t.col(M.MEM_CACHED_KB)) if v is not None]
    if len(cached) > 1:
        add_stat(s, "reads", "page cache change", "MiB", (cached[-1][1] - cached[0][1]) / KB_PER_MIB,
                 None, M.MEM_CACHED_KB, stat="change")


def add_wal(s: Summary, t: Ticks, wal_device: str | None) -> None:
    _mean_rate(s, t, "wal", "WAL MiB/s", "MiB/s", M.WAL_BYTES_S, 1 / KB_PER_MIB / 1024)
    _of_totals(s, t, "wal", "FPI share of records", "%", M.WAL_FPI_S, [M.WAL_RECORDS_S], percent_of)
    if t.has(M.WAL_BUFFERS_FULL_S):
        num, _ = _totals(t, M.WAL_BUFFERS_FULL_S)
        add_stat(s, "wal", "buffers full", "count", round(sum(num)), None, M.WAL_BUFFERS_FULL_S, stat="total")
    _mean_rate(s, t, "wal", "syncs/s", "1/s", M.WAL_SYNCS_S)
    if any(t.col(M.WAL_SYNC_TIME_MS_S)):  # track_wal_io_timing on
        _of_totals(s, t, "wal", "time per sync", "ms", M.WAL_SYNC_TIME_MS_S, [M.WAL_SYNCS_S])
    if wal_device is not None:
        f_s, f_aw = M.disk(wal_device, M.DISK_F_S), M.disk(wal_device, M.DISK_F_AWAIT_MS)
        _mean_rate(s, t, "wal", "WAL device f/s", "1/s", f_s, role=ROLE_LABELS["wal"])
        busy = [(a, (f or 0.0) * dt) for f, a, dt in zip(t.col(f_s), t.col(f_aw), t.dt) if a is not None and f]
        if busy:
            est = Estimate(([a * w for a, w in busy], [w for _, w in busy]), ratio)
            add_stat(s, "wal", "WAL device f_await", "ms", est.value(), est, f_aw, wal_device, stat="mean",
                     role=ROLE_LABELS["wal"])


# pg_stat_io by row (16+, the recording's io_rows): (group, name, unit, stat, rows it sums, numerator,
# denominator); a denominator of None is the window's time (a mean rate). A statistic is found by
# (M.io_row(numerator), stat). Times per operation count the timed ticks only.
_RELATION = lambda bt: lambda k: k[1] == "relation" and (bt is None or k[0] == bt)  # noqa: E731
IO_FIGURES = (
    ("reads", "backend ms per read", "ms", "backend", _RELATION("client backend"), "read_ms", "reads"),
    ("writes", "backend ms per write", "ms", "backend", _RELATION("client backend"), "write_ms", "writes"),
    ("writes", "checkpointer ms per write", "ms", "checkpointer", _RELATION("checkpointer"), "write_ms", "writes"),
    ("writes", "checkpointer ms per fsync", "ms", "checkpointer", _RELATION("checkpointer"), "fsync_ms", "fsyncs"),
    ("reads", "kB per read", "kB", "per read", _RELATION(None), "read_kb", "reads"),
    ("reads", "evictions/s", "1/s", "mean", _RELATION(None), "evictions", None),
    ("reads", "ring reuses/s", "1/s", "mean", _RELATION(None), "reuses", None),
)


def add_stat_io(s: Summary, rec, win) -> None:
    """The IO_FIGURES over the window, from the recorded pg_stat_io rows (none for older files)."""
    if win.start_tick is None:
        return
    times = {tick: t for tick, t, _e in rec.rows([], win.start_tick - 1, win.end_tick)}
    interval = float(rec.meta.get("interval_s") or 1.0)
    dts = {tick: t - times[tick - 1] if tick - 1 in times else interval for tick, t in times.items()
           if tick >= win.start_tick}
    order = {tick: i for i, tick in enumerate(sorted(dts))}
    sums = [([0.0] * len(order), [0.0] * len(order)) for _ in IO_FIGURES]
    # per tick, over the rows of each figure where its numerator is known (time while timing was off
    # is not counted): Σ numerator, Σ denominator
    for tick, totals in rec.io_sums([(rows, top, bottom) for *_, rows, top, bottom in IO_FIGURES],
                                    win.start_tick, win.end_tick):
        i, dt = order.get(tick), dts.get(tick)
        if i is None or dt is None:
            continue
        for j, (num, den) in enumerate(sums):
            num[i], den[i] = totals[2 * j] * dt, totals[2 * j + 1] * dt
    span = [dts[t] for t in sorted(dts)]
    for (num, den), (group, name, unit, stat, _rows, top, bottom) in zip(sums, IO_FIGURES):
        if not any(num) and not any(den):
            continue
        est = Estimate((num, den if bottom else span), ratio)
        if est.value() is not None:
            add_stat(s, group, name, unit, est.value(), est, M.io_row(top), stat=stat)
