"""Our metric catalog under Prometheus names: the one mapping shared by the live /metrics endpoint
and `export --format openmetrics`, so a backfilled recording and a scrape give the same series.

Prometheus conventions: a `pgio_` prefix, base units (seconds, bytes, ratios 0-1), `_total`
counters for cumulative quantities so rate() and increase() work, gauges for levels and states.
Frames carry per-second rates; `Converter` turns them back into totals (rate x dt, summed since the
exporter or the recording started), so rate(pgio_wal_bytes_total[1m]) is the WAL rate the TUI
shows, averaged over the minute. Labels are bounded: server, device, role, backend_type and wait
event names (PostgreSQL's fixed list). Never query text.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from pgio_tui.frame import Frame
from pgio_tui.metrics import BY_NAME, LATENCY_THRESHOLDS_MS
from pgio_tui.safe_text import printable

PREFIX = "pgio_"
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Family:
    name: str  # counters without `_total`, as OpenMetrics names the family
    type: str  # "gauge" or "counter"
    unit: str  # "seconds", "bytes", "ratio" or "": the name ends with it
    help: str

    @property
    def sample_name(self) -> str:
        return self.name + "_total" if self.type == "counter" else self.name


@dataclass(frozen=True, slots=True)
class Rule:
    """How one catalog metric becomes one series: a level (gauge = value x scale), a rate
    (counter += value x dt x scale) or a per-tick count (counter += value x scale)."""

    metric: str
    family: Family
    how: str  # "level", "rate" or "count"
    scale: float = 1.0
    labels: Labels = ()


FAMILIES: dict[str, Family] = {}
RULES: list[Rule] = []  # scalar metrics (Frame.values)
DISK_RULES: list[Rule] = []  # per-device fields (Frame.devices), labelled device and role


def _family(name: str, type: str, help: str) -> Family:
    unit = next((u for u in ("seconds", "bytes", "ratio") if name.endswith("_" + u)), "")
    fam = FAMILIES.setdefault(PREFIX + name, Family(PREFIX + name, type, unit, help))
    assert fam.type == type, name
    return fam


def _gauge(metric: str, name: str, scale: float = 1.0, help: str | None = None, **labels: str) -> None:
    RULES.append(Rule(metric, _family(name, "gauge", help or BY_NAME[metric].help), "level", scale,
                      tuple(labels.items())))


def _counter(metric: str, name: str, help: str, scale: float = 1.0, how: str = "rate", **labels: str) -> None:
    RULES.append(Rule(metric, _family(name, "counter", help), how, scale, tuple(labels.items())))


MS, KB = 1e-3, 1024.0

# --- checkpoint ---------------------------------------------------------------------------------
_gauge("checkpoint.active", "checkpoint_active")
_gauge("checkpoint.progress", "checkpoint_progress_ratio")
_gauge("checkpoint.buffers_written", "checkpoint_buffers_written")
_gauge("checkpoint.buffers_estimate", "checkpoint_buffers_estimate")
_gauge("checkpoint.elapsed_s", "checkpoint_elapsed_seconds")
_gauge("checkpoint.time_progress", "checkpoint_time_progress_ratio")
_gauge("checkpoint.wal_progress", "checkpoint_wal_progress_ratio")
_gauge("checkpoint.timeout_s", "checkpoint_timeout_seconds")
_gauge("checkpoint.completion_target", "checkpoint_completion_target_ratio")
CHECKPOINT_INFO = _family("checkpoint_info", "gauge",
                          "1, labelled with the kind of the running (or last) checkpoint: time, wal, requested, ...")
# --- buffers written by source --------------------------------------------------------------------
_WRITTEN = "Shared buffers written, by who wrote them (pg_stat_io 16+, pg_stat_bgwriter/checkpointer before)."
for _src in ("checkpointer", "bgwriter", "backend", "autovacuum", "other"):
    _counter(f"writes.{_src}", "buffers_written", _WRITTEN, backend_type=_src)
_FSYNCS = "fsync calls, by who made them (backend: the checkpointer's request queue was full)."
_counter("fsyncs.backend", "fsyncs", _FSYNCS, backend_type="backend")
_counter("fsyncs.checkpointer", "fsyncs", _FSYNCS, backend_type="checkpointer")
_counter("extends.backend", "buffers_extended", "Relation extensions (new blocks), by who made them.",
         backend_type="backend")
_counter("writebacks.total", "writeback_requests", BY_NAME["writebacks.total"].help)
_counter("bgwriter.maxwritten_s", "bgwriter_maxwritten_stops", BY_NAME["bgwriter.maxwritten_s"].help)
_counter("buffers.alloc_s", "buffers_allocated", BY_NAME["buffers.alloc_s"].help)
# --- kernel memory ------------------------------------------------------------------------------
_gauge("mem.dirty_kb", "mem_dirty_bytes", KB)
_gauge("mem.writeback_kb", "mem_writeback_bytes", KB)
_gauge("mem.dirty_background_threshold_kb", "mem_dirty_background_threshold_bytes", KB)
_gauge("mem.dirty_threshold_kb", "mem_dirty_threshold_bytes", KB)
_gauge("mem.available_kb", "mem_available_bytes", KB)
_gauge("mem.cached_kb", "mem_cached_bytes", KB)
_PSI = "Time during which {} stalled on I/O (/proc/pressure/io)."
_counter("io.pressure_some_pct", "io_pressure_some_stalled_seconds", _PSI.format("at least one task"), 0.01)
_counter("io.pressure_full_pct", "io_pressure_full_stalled_seconds", _PSI.format("all non-idle tasks"), 0.01)
# --- latency ------------------------------------------------------------------------------------
_counter("latency.tps", "transactions", BY_NAME["latency.tps"].help)
for _stat in ("mean", "stddev", "p50", "p95", "p99", "max"):
    _gauge(f"latency.{_stat}_ms", f"latency_{_stat}_seconds", MS)
_counter("latency.txns", "latency_sampled_transactions",
         "Transactions (pgio: statements) the latency figures cover (a sample with pgbench --sampling-rate).",
         how="count")
_counter("latency.failed", "transactions_failed", BY_NAME["latency.failed"].help, how="count")
for _ms in LATENCY_THRESHOLDS_MS:
    _counter(f"latency.over_{_ms}ms", "transactions_slower", "Transactions (pgio: statements) slower than "
             "`threshold` seconds.", how="count", threshold=f"{_ms / 1000:g}")
# --- statements (pg_stat_statements: execution time, not transaction latency) --------------------
_counter("statements.calls_s", "statements", BY_NAME["statements.calls_s"].help)
_gauge("statements.mean_ms", "statement_exec_mean_seconds", MS)
_gauge("statements.stddev_ms", "statement_exec_stddev_seconds", MS)
# --- database -----------------------------------------------------------------------------------
_counter("pgio.reads_s", "workload_blocks_read", BY_NAME["pgio.reads_s"].help)
_counter("pgio.hits_s", "workload_blocks_hit", BY_NAME["pgio.hits_s"].help)
_counter("db.blks_read_s", "db_blocks_read", BY_NAME["db.blks_read_s"].help)
_counter("db.blks_hit_s", "db_blocks_hit", BY_NAME["db.blks_hit_s"].help)
_counter("db.xact_s", "db_transactions", BY_NAME["db.xact_s"].help)
_counter("db.temp_bytes_s", "db_temp_bytes", BY_NAME["db.temp_bytes_s"].help)
_counter("db.blk_read_time_ms_s", "db_block_read_seconds", BY_NAME["db.blk_read_time_ms_s"].help, MS)
_counter("db.blk_write_time_ms_s", "db_block_write_seconds", BY_NAME["db.blk_write_time_ms_s"].help, MS)
_gauge("db.backends", "db_backends")
_counter("wal.bytes_s", "wal_bytes", BY_NAME["wal.bytes_s"].help)
_counter("wal.records_s", "wal_records", BY_NAME["wal.records_s"].help)
_counter("wal.fpi_s", "wal_fpi", BY_NAME["wal.fpi_s"].help)
_counter("wal.buffers_full_s", "wal_buffers_full", BY_NAME["wal.buffers_full_s"].help)
# --- waits --------------------------------------------------------------------------------------
_gauge("sessions.active", "sessions_active")
_gauge("sessions.io_wait", "sessions_io_wait")
_gauge("sessions.lock_wait", "sessions_lock_wait")
WAITS = _family("wait_sessions", "gauge", "Backends sampled in a wait event (CPU/Running: not waiting).")
# --- observer -----------------------------------------------------------------------------------
_gauge("observer.collect_ms", "observer_collect_seconds", MS)
_counter("observer.cpu_ms", "observer_cpu_seconds", "Client CPU time (user+system) used by pgio-tui.", MS,
         how="count")
_gauge("observer.server_ms", "observer_server_seconds", MS)
_gauge("observer.late_ms", "observer_late_seconds", MS)
UP = _family("up", "gauge", "1 when the last tick reached PostgreSQL, 0 when it did not.")

# --- devices (iostat -x) ------------------------------------------------------------------------
for _fld, _name, _how, _scale, _help in (
        ("r_s", "disk_reads_completed", "rate", 1.0, "Reads completed (/proc/diskstats)."),
        ("w_s", "disk_writes_completed", "rate", 1.0, "Writes completed (/proc/diskstats)."),
        ("rkb_s", "disk_read_bytes", "rate", KB, "Bytes read (/proc/diskstats)."),
        ("wkb_s", "disk_written_bytes", "rate", KB, "Bytes written (/proc/diskstats)."),
        ("r_await_ms", "disk_read_await_seconds", "level", MS, "Mean time a read took over the tick, queue included."),
        ("w_await_ms", "disk_write_await_seconds", "level", MS, "Mean time a write took over the tick, queue included."),
        ("aqu_sz", "disk_queue_size", "level", 1.0, "Average queue size over the tick."),
        ("util_pct", "disk_utilization_ratio", "level", 0.01,
         "Share of the tick the device had I/O in flight (not saturation on SSD/NVMe).")):
    DISK_RULES.append(Rule(_fld, _family(_name, "counter" if _how == "rate" else "gauge", _help), _how, _scale))

Sample = tuple[Family, Labels, float]


def server_label(meta: dict) -> str:
    """The `server` label: host:port as the sampler connected (a socket directory for local servers)."""
    host, port = meta.get("host") or "", meta.get("port")
    return printable(f"{host}:{port}" if port else str(host or "unknown"))


class Converter:
    """Frames in tick order -> the samples of each tick. Counters are totals since the first
    Frame this converter saw; a counter series appears at its first known rate and then stays
    (a tick without a rate, e.g. after a stats reset, adds nothing)."""

    def __init__(self, server: str):
        self.server = ("server", server)
        self._totals: dict[tuple[str, Labels], float] = {}

    def update(self, frame: Frame) -> list[Sample]:
        out: list[Sample] = []
        base = (self.server,)
        values, dt = frame.values, frame.dt
        out.append((UP, base, 1.0 if values.get("observer.server_ms") is not None else 0.0))
        for rule in RULES:
            self._apply(rule, values.get(rule.metric), dt, base + rule.labels, out)
        kind = values.get("checkpoint.kind")
        if isinstance(kind, str) and kind:
            out.append((CHECKPOINT_INFO, base + (("kind", printable(kind)),), 1.0))
        for dev, row in frame.devices.items():
            role = frame.device_roles.get(dev)
            labels = base + (("device", printable(dev)),) + ((("role", printable(role)),) if role else ())
            for rule in DISK_RULES:
                self._apply(rule, row.get(rule.metric), dt, labels, out)
        for btype, wtype, event, n in frame.waits:
            out.append((WAITS, base + (("backend_type", printable(btype)), ("wait_event_type", printable(wtype)),
                                       ("wait_event", printable(event))),
                        float(n)))
        out.sort(key=lambda s: FAMILY_ORDER[s[0].name])  # families together, in definition order
        return out

    def _apply(self, rule: Rule, value, dt: float | None, labels: Labels, out: list[Sample]) -> None:
        if isinstance(value, str):
            return
        if rule.how == "level":
            if value is not None:
                out.append((rule.family, labels, float(value) * rule.scale))
            return
        key = (rule.family.name, labels)
        step = None
        if value is not None:
            step = float(value) * rule.scale * (1.0 if rule.how == "count" else (dt or 0.0))
            step = step if step >= 0 and (rule.how == "count" or dt) else None
        if step is not None:
            self._totals[key] = self._totals.get(key, 0.0) + step
        if key in self._totals:
            out.append((rule.family, labels, self._totals[key]))


FAMILY_ORDER = {name: i for i, name in enumerate(FAMILIES)}


def exposed_names() -> Iterable[str]:
    """Every sample name pgio-tui exposes for a Frame (live and exported)."""
    return (f.sample_name for f in FAMILIES.values())


def families_matching(globs: Iterable[str]) -> dict[str, set[str]]:
    """glob -> the families it selects: by our catalog name (`mem.*`, `disk.*.util_pct`) or by the
    Prometheus name (`pgio_disk_*`)."""
    sources = [(r.metric, r.family) for r in RULES] + [(f"disk.*.{r.metric}", r.family) for r in DISK_RULES]
    sources += [("checkpoint.kind", CHECKPOINT_INFO), ("waits", WAITS), ("up", UP)]
    return {g: {f.name for metric, f in sources if fnmatch.fnmatch(metric, g) or fnmatch.fnmatch(f.sample_name, g)}
            for g in globs}


def markdown() -> str:
    """The name table of docs/prometheus.md, generated so the docs cannot drift from the mapping."""
    rows = ["| Prometheus name | type | labels | from |", "|---|---|---|---|"]
    seen: dict[str, list[str]] = {}
    for r in RULES:
        seen.setdefault(r.family.name, []).append(f"`{r.metric}`" + "".join(f" ({v})" for _, v in r.labels))
    seen.setdefault(CHECKPOINT_INFO.name, []).append("`checkpoint.kind`")
    seen.setdefault(WAITS.name, []).append("the wait sample (Waits pane)")
    seen.setdefault(UP.name, []).append("the tick reached PostgreSQL")
    for r in DISK_RULES:
        seen.setdefault(r.family.name, []).append(f"`disk.<device>.{r.metric}`")
    extra = {CHECKPOINT_INFO.name: "kind", WAITS.name: "backend_type, wait_event_type, wait_event"}
    for name, family in FAMILIES.items():
        labels = {lab for r in RULES + DISK_RULES if r.family is family for lab, _ in r.labels}
        if any(r.family is family for r in DISK_RULES):
            labels |= {"device", "role"}
        labels = ", ".join(["server", *sorted(labels), *([extra[name]] if name in extra else [])])
        rows.append(f"| `{family.sample_name}` | {family.type} | {labels} | {', '.join(seen[name])} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
