"""The figures of one run of an experiment, read from its recording: what `experiment report`
tabulates per setting value, and the catalog of them (one place for keys, labels, units, order).

Every figure covers the workload's whole run (analysis/summary.py, the statistics `diff` shows),
taken as a whole, never as a mean of per-tick figures where that would change its meaning:
- tps, latency mean and stddev: the workload's own summary for its run (pgbench's);
- p50/p95/p99: every transaction of the run (the merged per-tick latency histograms); a recording
  without them gets none, not a mean of per-tick percentiles;
- over 100-500 ms: transactions counted one by one from the per-transaction log, added up;
- statements: pg_stat_statements (reset before every run) per statement: calls, mean, stddev;
- buffers written by source (totals and shares), Dirty/Writeback, PGDATA and WAL devices,
  checkpoints: the summary's; WAL generated and the PGDATA device's reads per second: Σ rate·dt
  over the same ticks;
- pgio: its RIOPS and CACHE_HITS/s and the hit ratio they make, the rows its statements fetched
  per second (tuples/s); sql: the statement's elapsed time;
- statements over 100-500 ms: the server log's `duration:` lines (any client's), beside pgbench's;
- wait events: each type's (and event's) share of the client backends sampled every tick;
- and every other statistic of the summary (run_figures' `more`), named by catalog key and statistic
  (`wal.fpi_s:mean`, `disk.PGDATA.aqu_sz:mean`): in JSON and on --figures, not in the default table.
A figure the recording cannot give is None (the report shows "—").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.analysis import repeats
from pgio_tui.analysis.align import AlignError, Window, aligned_columns, window
from pgio_tui.analysis.own_io import count, own_io_shares
from pgio_tui.analysis.statements import one_line
from pgio_tui.analysis.summary import summarize
from pgio_tui.analysis.summary_latency import OF_TRANSACTIONS
from pgio_tui.analysis.summary_model import ALL_WRITES, CHECKPOINTS, PERCENTILE_METRICS, Summary
from pgio_tui.safe_text import printable
from pgio_tui.store.reader import Recording, RecordingError

BYTES_PER_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure: its key in the tables, JSON and CSV, how it is shown, and where it comes from:
    `of`, the summary's statistic (metric, stat) — for a device figure the metric's field, on the
    device that holds `role` — or None for the figures worked out here (see run_figures)."""

    key: str
    label: str
    unit: str
    group: str
    text: str = ""  # a statement figure: the statement's text (server text: shown escaped)
    of: tuple[str, str] | None = None
    role: str = ""
    default: bool = True  # in the report unless --figures picks otherwise (JSON carries every figure)

    @property
    def domain(self) -> repeats.Domain:
        """The values it can take: a share in [0, 100] %, a change of a level any sign, every other
        figure (counts, rates, durations, levels) never below 0."""
        if self.unit == "%":
            return repeats.PERCENT
        return repeats.ANY if self.of is not None and self.of[1] == "change" else repeats.NON_NEGATIVE

    @property
    def name(self) -> str:
        """The figure by catalog key and statistic (`latency.tps:mean`, `disk.PGDATA.util_pct:mean`):
        its name in JSON and CSV and what --figures matches; the key for those worked out here."""
        if self.of is None:
            return self.key
        metric, stat = self.of
        return f"{M.disk(self.role, metric) if self.role else metric}:{stat}"


def _device(prefix: str, role: str, name: str) -> tuple[Figure, ...]:
    return (Figure(f"{prefix}_util", f"{name} util", "%", "devices", of=(M.DISK_UTIL_PCT, "mean"), role=role),
            Figure(f"{prefix}_write", f"{name} write", "MiB/s", "devices", of=(M.DISK_WKB_S, "mean"), role=role),
            Figure(f"{prefix}_w_await", f"{name} w_await", "ms", "devices", of=(M.DISK_W_AWAIT_MS, "mean"), role=role))


FIGURES = (
    Figure("tps", "tps", "1/s", "latency", of=(M.LATENCY_TPS, "mean")),
    Figure("lat_mean", "latency mean", "ms", "latency", of=(M.LATENCY_MEAN_MS, "mean")),
    Figure("lat_stddev", "latency stddev", "ms", "latency", of=(M.LATENCY_STDDEV_MS, "pooled")),
    # a mean of per-tick percentiles is not a percentile: only those of the run's transactions
    *(Figure(f"lat_{p}", f"latency {p}", "ms", "latency", of=(m, OF_TRANSACTIONS))
      for p, m in PERCENTILE_METRICS.items()),
    # "ticks mean > N ms" (no per-transaction counts) is another statistic: left out
    *(Figure(f"over_{ms}", f"transactions over {ms} ms (pgbench)", "transactions", "latency",
             of=(M.LATENCY_OVER[ms], "total")) for ms in M.LATENCY_THRESHOLDS_MS),
    # the server log's statements (any client's) over the same thresholds: another count, beside it
    *(Figure(f"log_over_{ms}", f"statements over {ms} ms (server log)", "statements", "latency",
             of=(M.STATEMENTS_LOG_OVER[ms], "total")) for ms in M.LATENCY_THRESHOLDS_MS),
    Figure("sql_elapsed", "statement elapsed", "s", "sql"),
    *(Figure(f"writes_{s}", f"buffers written: {s}", "buffers", "writes", of=(M.writes(s), "total"))
      for s in M.WRITE_SOURCES),
    Figure("writes_all", "buffers written: all sources", "buffers", "writes", of=(ALL_WRITES, "total")),
    *(Figure(f"share_{s}", f"share written: {s}", "%", "writes", of=(M.writes(s), "share")) for s in M.WRITE_SOURCES),
    Figure("dirty_mean", "Dirty mean", "MiB", "memory", of=(M.MEM_DIRTY_KB, "mean")),
    Figure("dirty_max", "Dirty max", "MiB", "memory", of=(M.MEM_DIRTY_KB, "max")),
    Figure("writeback_mean", "Writeback mean", "MiB", "memory", of=(M.MEM_WRITEBACK_KB, "mean")),
    Figure("writeback_max", "Writeback max", "MiB", "memory", of=(M.MEM_WRITEBACK_KB, "max")),
    Figure("dirty_above_bg", "time Dirty > background threshold", "s", "memory",
           of=(M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "time above")),
    *_device("pgdata", "PGDATA", "PGDATA"),
    Figure("pgdata_r_s", "PGDATA reads", "1/s", "devices"),
    Figure("pgdata_r_await", "PGDATA r_await", "ms", "devices", of=(M.DISK_R_AWAIT_MS, "mean"), role="PGDATA"),
    *_device("wal", "WAL", "WAL device"),
    # pg_stat_io by row (16+; the times need track_io_timing): analysis/summary_io.IO_FIGURES
    Figure("backend_ms_read", "backend ms per read", "ms", "reads", of=(M.io_row("read_ms"), "backend")),
    Figure("ckpt_ms_fsync", "checkpointer ms per fsync", "ms", "writes", of=(M.io_row("fsync_ms"), "checkpointer")),
    Figure("evictions_s", "shared buffers evicted/s", "1/s", "reads", of=(M.io_row("evictions"), "mean")),
    Figure("kb_per_read", "kB per read", "kB", "reads", of=(M.io_row("read_kb"), "per read")),
    Figure("checkpoints", "checkpoints", "checkpoints", "checkpoints", of=(CHECKPOINTS, "count")),
    Figure("checkpoint_total_s", "checkpoint duration mean", "s", "checkpoints", of=(CHECKPOINTS, "total_s mean")),
    Figure("wal_mib", "WAL generated", "MiB", "wal"),
    Figure("pgio_riops", "pgio RIOPS", "1/s", "pgio", of=(M.PGIO_READS_S, "mean")),
    Figure("pgio_hits_s", "pgio CACHE_HITS/s", "1/s", "pgio", of=(M.PGIO_HITS_S, "mean")),
    Figure("pgio_hit_ratio", "pgio hit ratio", "%", "pgio"),
    Figure("pgio_tuples_s", "pgio tuples/s", "1/s", "pgio", of=(M.PGIO_TUPLES_S, "mean")),
    Figure("blks_read_s", "blks_read/s (all databases)", "1/s", "pgio", of=(M.DB_BLKS_READ_S, "mean")),
)
# the at-a-glance figures (the HTML's first table, the runs table's columns), where a run has them
HEADLINE = ("tps", "lat_mean", "lat_stddev", "lat_p95", "lat_p99", "sql_elapsed", "pgio_riops", "pgio_tuples_s",
            "pgio_hit_ratio", "pgdata_r_s", "pgdata_w_await", "writes_backend")
GROUP_TITLES = {"latency": "Throughput and latency (transactions)", "sql": "Statement (sql workload)",
                "statements": "Statements (pg_stat_statements: execution time, not transaction latency)",
                "writes": "Buffers written by source", "memory": "Dirty / Writeback (kernel page cache)",
                "devices": "Devices", "checkpoints": "Checkpoints", "wal": "WAL", "pgio": "pgio reads",
                "waits": "Wait events (client backends: share of the wait samples)"}
LATENCY_UNIT = {"pgio": "pgio's statements (pgio times each one)", "sql": "the statement's executions"}
TOP_STATEMENTS = 5  # statements in the report: the experiment's top by total time over all runs
LABEL_WIDTH = 48  # statement text in a figure's label (the HTML shows it whole)
_LATENCY = [f.key for f in FIGURES if f.group == "latency"]


@dataclass(slots=True)
class RunFigures:
    """One run's figures by key, its statements (text -> calls, mean_ms, stddev_ms, total_ms), the
    devices its figures come from (role -> device) and what the reader should know about them."""

    values: dict[str, float | None]
    statements: dict[str, dict[str, float | None]] = field(default_factory=dict)
    devices: dict[str, str] = field(default_factory=dict)
    window: Window | None = None
    notes: list[str] = field(default_factory=list)
    workload: dict[str, Any] = field(default_factory=dict)
    more: list[Figure] = field(default_factory=list)  # the recording's other statistics (values under their keys)
    spans: list[tuple[float, float, str]] = field(default_factory=list)  # checkpoints: (x start, x end, kind)
    own_io: dict[str, dict[str, float | None]] = field(default_factory=dict)  # role -> own_io_shares' shares


def run_window(rec: Recording) -> Window:
    """The workload's run (its whole run, so its own summary applies), else the whole recording."""
    try:
        return window(rec, "workload")
    except AlignError:
        return window(rec, "start")


def run_figures(path: str | Path) -> RunFigures:
    """Every figure of one run's recording (None where it has none)."""
    with Recording(path) as rec:
        win = run_window(rec)
        s = summarize(rec, win)
        out = RunFigures(dict.fromkeys(f.key for f in FIGURES), devices=dict(s.role_devices), window=win,
                         spans=list(s.checkpoint_spans))
        workloads = rec.workloads()
        out.workload = workloads[0] if workloads else {}
        _from_summary(out, s)
        _integrated(out.values, rec, win, s.role_devices.get("PGDATA"))
        _pgio(out.values)
        out.values["sql_elapsed"] = sql_elapsed(out.workload)
        unit = LATENCY_UNIT.get(out.workload.get("kind") or "")
        if unit and any(out.values.get(k) is not None for k in _LATENCY):
            out.notes.append(f"tps, latency and the counts over 100-500 ms are of {unit}, not of transactions")
        rate = (out.workload.get("params") or {}).get("sampling_rate")
        if isinstance(rate, (int, float)) and 0 < rate < 1:
            out.notes.append(f"latency over 100-500 ms counts the transactions pgbench logged: a {rate:g} sample "
                             "(--sampling-rate)")
        out.statements = statements(rec, win)
        out.own_io = own_io_shares(rec, win, s.role_devices)
        _more(out, s)
        _waits(out, rec, win)
    return out


_FIXED = {f.name for f in FIGURES}
_SKIP_GROUPS = ("statements", "backends")  # per statement and per process: the statement figures, not these
WAITS = "waits"


def _more(out: RunFigures, s: Summary) -> None:
    """Every statistic of the summary the fixed figures do not hold, as a figure named by catalog key
    and statistic (a device's by its role: disk.PGDATA.w_s:mean); not in the default report."""
    roles = {dev: role for role, dev in s.role_devices.items()}
    for st in s.stats:
        metric, stat = st.id
        if st.group in _SKIP_GROUPS and metric not in M.BY_NAME or not stat or st.value is None:
            continue
        if metric.startswith(M.DISK_PREFIX):
            dev = metric[len(M.DISK_PREFIX):].rsplit(".", 1)[0]
            if dev not in roles:
                continue
            metric = M.disk(roles[dev], metric.rsplit(".", 1)[1])
        key = f"{metric}:{stat}"
        if key in _FIXED or key in out.values:
            continue
        out.values[key] = st.value
        out.more.append(Figure(key, f"{st.group}: {st.name}", st.unit, st.group, of=(metric, stat), default=False))


_CLIENT_WAITS = ("SELECT waits.tick, w.wait_event_type, SUM(waits.count) FROM waits JOIN wait_events w "
                 "ON w.id = waits.wait_id WHERE waits.tick BETWEEN ? AND ? AND w.backend_type = 'client backend' "
                 "GROUP BY 1, 2")


def waits_over_time(rec: Recording, win: Window) -> tuple[list[float], dict[str, list[float]]]:
    """The window's ticks with a wait sample (x: seconds from its origin) and per wait event type
    (CPU: active, not waiting) the client backends sampled at each, busiest type first."""
    if win.start_tick is None:
        return [], {}
    # only the ticks that took a wait sample (many processes: every few ticks; M.waits_sampled)
    ticks = [(tick, t) for tick, t, _, active in rec.rows([M.SESSIONS_ACTIVE], win.start_tick, win.end_tick)
             if active is not None] if rec.knows(M.SESSIONS_ACTIVE) else []
    at = {tick: i for i, (tick, _) in enumerate(ticks)}
    out: dict[str, list[float]] = {}
    for tick, wtype, n in rec.conn.execute(_CLIENT_WAITS, (win.start_tick, _last(win))):
        if tick in at:
            out.setdefault(printable(str(wtype))[:64], [0.0] * len(ticks))[at[tick]] += count(n)
    order = sorted(out, key=lambda k: -sum(out[k]))[:MAX_WAIT_EVENTS]
    return [t - win.origin_t for _, t in ticks], {k: out[k] for k in order}


def _last(win: Window) -> int:
    return win.end_tick if win.end_tick is not None else 2 ** 62


MAX_WAIT_EVENTS = 40  # wait events per run kept as figures (a recording is untrusted: bounded), the busiest


def _waits(out: RunFigures, rec: Recording, win: Window) -> None:
    """Wait events of the client backends in the run's wait samples: each type's share of the
    samples and the busiest events' (CPU:Running: active, not waiting), in %."""
    if win.start_tick is None:
        return
    rows = [(printable(str(t))[:64], printable(str(e))[:64], count(n)) for t, e, n in rec.conn.execute(
        "SELECT w.wait_event_type, w.wait_event, SUM(waits.count) FROM waits JOIN wait_events w "
        "ON w.id = waits.wait_id WHERE waits.tick BETWEEN ? AND ? AND w.backend_type = 'client backend' "
        "GROUP BY 1, 2", (win.start_tick, _last(win)))]
    total = math.fsum(n for *_, n in rows)
    if not total:
        return
    types: dict[str, float] = {}
    for i, (wtype, event, n) in enumerate(sorted(rows, key=lambda r: -r[2])):
        types[wtype] = types.get(wtype, 0.0) + n
        key = f"{WAITS}.{wtype}.{event}:share"
        if i < MAX_WAIT_EVENTS and key not in out.values:
            out.values[key] = 100 * n / total
            out.more.append(Figure(key, f"wait {wtype}:{event}", "%", WAITS, default=False))
    for wtype, n in sorted(types.items(), key=lambda kv: -kv[1])[:MAX_WAIT_EVENTS]:
        key = f"{WAITS}.{wtype}:share"
        out.values[key] = 100 * n / total
        out.more.append(Figure(key, f"wait type {wtype}", "%", WAITS))


def _from_summary(out: RunFigures, s: Summary) -> None:
    """Every figure with a source: its statistic in the summary, found by (metric, stat)."""
    devices = s.role_devices
    shared = devices.get("WAL") is not None and devices.get("WAL") == devices.get("PGDATA")
    for f in FIGURES:
        if f.of is None:
            continue
        metric, stat = f.of
        if f.role:
            if f.role not in devices or (f.role == "WAL" and shared):
                continue  # pg_wal on PGDATA's device: its figures are PGDATA's, shown once
            metric = M.disk(devices[f.role], metric)
        st = s.find(metric, stat)
        out.values[f.key] = None if st is None else st.value
    if shared:
        out.notes.append(f"pg_wal is on PGDATA's device ({devices['PGDATA']}): the PGDATA figures include WAL writes")


def _integrated(v: dict, rec: Recording, win: Window, pgdata: str | None) -> None:
    """WAL generated (Σ bytes/s · dt) and PGDATA reads per second (Σ r/s · dt / Σ dt) over the run."""
    names = set(rec.metric_names())
    metrics = [m for m in (M.WAL_BYTES_S, pgdata and M.disk(pgdata, M.DISK_R_S)) if m and m in names]
    if not metrics:
        return
    c = aligned_columns(rec, win, metrics)
    if M.WAL_BYTES_S in c.values:
        col = c.values[M.WAL_BYTES_S]
        if any(x is not None for x in col):
            v["wal_mib"] = math.fsum((x or 0.0) * dt for x, dt in zip(col, c.dt)) / BYTES_PER_MIB
    if pgdata and M.disk(pgdata, M.DISK_R_S) in c.values:
        col = c.values[M.disk(pgdata, M.DISK_R_S)]
        den = math.fsum(dt for x, dt in zip(col, c.dt) if x is not None)
        if den:
            v["pgdata_r_s"] = math.fsum(x * dt for x, dt in zip(col, c.dt) if x is not None) / den


# --- whose I/O a device's figures are ----------------------------------------------------------

# a device figure's field -> the share of the device's I/O it is made of: its reads (their count,
# bytes and waits), its writes and flushes, or "all": its queue (utilisation, queue size)
FIELD_SHARE = {M.DISK_R_S: "read", M.DISK_RKB_S: "read", M.DISK_R_AWAIT_MS: "read", M.DISK_W_S: "write",
               M.DISK_WKB_S: "write", M.DISK_W_AWAIT_MS: "write", M.DISK_F_S: "write", M.DISK_F_AWAIT_MS: "write"}


def device_share_kind(fig: Figure) -> tuple[str, str] | None:
    """(role, share kind) of a device figure (`pgdata_w_await`, `disk.PGDATA.aqu_sz:mean`); None for others."""
    if fig.key == "pgdata_r_s":
        return "PGDATA", "read"
    if fig.of is None:
        return None
    metric = fig.of[0]
    if fig.role:
        return fig.role, FIELD_SHARE.get(metric, "all")
    if metric.startswith(M.DISK_PREFIX):
        role, _, fld = metric[len(M.DISK_PREFIX):].rpartition(".")
        if role:
            return role, FIELD_SHARE.get(fld, "all")
    return None


def _pgio(v: dict) -> None:
    reads, hits = v["pgio_riops"], v["pgio_hits_s"]
    if reads is not None and hits is not None and reads + hits > 0:
        v["pgio_hit_ratio"] = 100 * hits / (reads + hits)


def sql_elapsed(workload: dict[str, Any]) -> float | None:
    """A sql workload's elapsed time per execution, in seconds: the mean of its timed executions
    (its summary's `elapsed_ms`, one per execution); None for other workloads."""
    summary = workload.get("summary")
    if workload.get("kind") != "sql" or not isinstance(summary, dict) or not isinstance(summary.get("elapsed_ms"), list):
        return None
    xs = [float(t) for t in summary["elapsed_ms"] if isinstance(t, (int, float)) and not isinstance(t, bool)]
    return math.fsum(xs) / len(xs) / 1000 if xs else None


def statements(rec: Recording, win: Window) -> dict[str, dict[str, float | None]]:
    """Per statement (its text on one line, else `queryid N`): calls, total, mean and stddev ms of
    the run (pg_stat_statements, reset before each run)."""
    if win.start_tick is None:
        return {}
    texts = rec.statement_texts()
    out: dict[str, dict[str, float | None]] = {}
    for queryid, t in rec.statement_totals(win.start_tick, win.end_tick).items():
        name = one_line(texts.get(queryid)) or f"queryid {queryid}"
        out[name] = {"calls": t["calls"], "total_ms": t["total_ms"], "mean_ms": t["mean_ms"],
                     "stddev_ms": t["stddev_ms"]}
    return out


def statement_figures(runs: list[RunFigures], top: int = TOP_STATEMENTS) -> list[Figure]:
    """Mean and stddev rows for the experiment's top statements by total time over all its runs;
    each run's values go into its `values` under the figures' keys."""
    total: dict[str, float] = {}
    for r in runs:
        for name, st in r.statements.items():
            total[name] = total.get(name, 0.0) + (st["total_ms"] or 0.0)
    ranked = sorted(total, key=lambda n: -total[n])[:top]
    figs = []
    for i, name in enumerate(ranked, 1):
        short = one_line(name, LABEL_WIDTH)
        for stat, unit in (("mean", "ms"), ("stddev", "ms"), ("calls", "calls")):
            figs.append(Figure(f"stmt{i}_{stat}", f"{short} · {stat}", unit, "statements", name))
        for r in runs:
            st = r.statements.get(name) or {}
            r.values[f"stmt{i}_mean"] = st.get("mean_ms")
            r.values[f"stmt{i}_stddev"] = st.get("stddev_ms")
            r.values[f"stmt{i}_calls"] = st.get("calls")
    return figs


def catalog(runs: list[RunFigures]) -> list[Figure]:
    """The figures in report order: the fixed ones with the statements after latency, then the wait
    event types and every other statistic some run's recording has (by group, first seen first)."""
    stmts = statement_figures(runs)
    cut = next(i for i, f in enumerate(FIGURES) if f.group == "writes")
    more = list({f.key: f for r in runs for f in r.more}.values())
    more.sort(key=lambda f: f.group != WAITS)  # stable: waits first, the rest as the summaries list them
    for r in runs:
        sampled = any(f.group == WAITS for f in r.more)
        for f in more:  # a wait event a run with samples never saw: 0 % of them
            r.values.setdefault(f.key, 0.0 if sampled and f.group == WAITS else None)
    return [*FIGURES[:cut], *stmts, *FIGURES[cut:], *more]
