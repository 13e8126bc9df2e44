"""docs/grafana/pgio-tui.json: the six panes as Grafana charts on one time axis, built from the
Prometheus names in promnames so the dashboard cannot drift from the endpoint.

`python -m pgio_tui.export.grafana > docs/grafana/pgio-tui.json` writes it; a test keeps it in step.
Checkpoint spans are annotations; `instance`, `server`, `device` and `role` (the device's role for
PostgreSQL: data, wal, tblspc) are variables ("All" matches series without the label too, as
backfilled recordings have no `instance`). Grafana's import asks for the Prometheus data source
(`__inputs`); the `datasource` variable starts on it.

Every query works on live scrapes and on backfilled recordings alike. A backfill has no staleness
markers: a series that stopped (the checkpoint kind that changed) stays visible for Prometheus'
lookback (5 min), so the checkpoint annotation keeps, per server, only the kind series with the
newest sample. Latency is the histogram (histogram_quantile over the rate of its buckets, summed
over the servers selected); the per-tick percentiles have their own panel, named as such.
"""

from __future__ import annotations

import json

from pgio_tui.export.promnames import FAMILIES
from pgio_tui.metrics import LATENCY_PERCENTILES

INPUT = "DS_PROMETHEUS"  # Grafana's import replaces ${DS_PROMETHEUS} with the data source picked
DS = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 42
SEL = 'instance=~"$instance", server=~"$server"'
DEV = SEL + ', device=~"$device"'
ROLE = 'role=~"$role"'


def _name(name: str) -> str:
    fam = FAMILIES["pgio_" + name.removesuffix("_total")]
    assert fam.sample_name == "pgio_" + name, name
    return fam.sample_name


def _q(expr: str, legend: str) -> dict:
    return {"expr": expr, "legendFormat": legend, "datasource": DS}


def _in_role(expr: str) -> str:
    """A device series kept when its device has a role picked in `$role` (the roles are series of
    their own, one per role: `and` keeps a device that has two once)."""
    return f"{expr} and on (server, device) {_name('disk_role_info')}{{{DEV}, {ROLE}}}"


def _rate(name: str, sel: str = SEL, by: str = "") -> str:
    inner = f"rate({_name(name)}{{{sel}}}[$__rate_interval])"
    return f"sum by ({by}) ({inner})" if by else inner


def _panel(title: str, targets: list[dict], unit: str, y: int, stack: bool = False, desc: str = "",
           h: int = 7, x: int = 0, w: int = 24, max_: float | None = None, overrides: list | None = None) -> dict:
    defaults = {"unit": unit, "min": 0, "custom": {"lineWidth": 1, "fillOpacity": 30 if stack else 0,
                                                   "stacking": {"mode": "normal" if stack else "none"},
                                                   "showPoints": "never", "spanNulls": False}}
    if max_ is not None:
        defaults["max"] = max_
    return {"type": "timeseries", "title": title, "description": desc, "datasource": DS,
            "gridPos": {"x": x, "y": y, "w": w, "h": h}, "targets": targets,
            "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
            "options": {"legend": {"displayMode": "list", "placement": "right"},
                        "tooltip": {"mode": "multi", "sort": "desc"}}}


def _dashed(pattern: str) -> dict:
    return {"matcher": {"id": "byRegexp", "options": pattern},
            "properties": [{"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [10, 10]}}]}


def _variable(name: str, query: str, label: str) -> dict:
    return {"name": name, "label": label, "type": "query", "datasource": DS, "query": {"query": query,
            "refId": name}, "definition": query, "refresh": 2, "includeAll": True, "multi": True,
            "allValue": ".*", "current": {"text": "All", "value": "$__all"}, "sort": 1}


def checkpoint_span() -> str:
    """1 while a checkpoint runs, labelled with its kind: of the kind series of each server, the one
    with the newest sample (a backfilled series that stopped stays visible for 5 minutes)."""
    info = f"{_name('checkpoint_info')}{{{SEL}}}"
    newest = (f"timestamp({info}) == on (instance, server) group_left () "
              f"max by (instance, server) (timestamp({info}))")
    return (f"({info} and on (instance, server, kind) ({newest})) "
            f"* on (instance, server) group_left () ({_name('checkpoint_active')}{{{SEL}}} == 1)")


def queries(board: dict) -> list[str]:
    """Every PromQL expression of the dashboard: the charts', the annotation's and the variables'."""
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    exprs += [a["target"]["expr"] for a in board["annotations"]["list"]]
    return exprs


def dashboard() -> dict:
    y = 0

    def row(*panels: dict) -> list[dict]:
        nonlocal y
        y += panels[0]["gridPos"]["h"]
        return list(panels)

    panels = []
    panels += row(_panel("Checkpoint", [
        _q(f"{_name('checkpoint_progress_ratio')}{{{SEL}}}", "progress {{server}}"),
        _q(f"{_name('checkpoint_time_progress_ratio')}{{{SEL}}}", "toward timed {{server}}"),
        _q(f"{_name('checkpoint_wal_progress_ratio')}{{{SEL}}}", "toward WAL-triggered {{server}}")],
        "percentunit", y, max_=1, overrides=[_dashed("toward.*")],
        desc="Running checkpoint's progress (estimated) and how close the next timed / WAL checkpoint is."))
    panels += row(_panel("Buffers written by source", [
        _q(_rate("buffers_written_total", by="backend_type"), "{{backend_type}}"),
        _q(_rate("fsyncs_total", by="backend_type"), "fsyncs {{backend_type}}")],
        "none", y, stack=True, overrides=[_dashed("fsyncs.*")],
        desc="Shared buffers written per second by checkpointer, bgwriter, client backends, autovacuum, others."))
    panels += row(_panel("Dirty / Writeback", [
        _q(f"{_name('mem_dirty_bytes')}{{{SEL}}}", "Dirty {{server}}"),
        _q(f"{_name('mem_writeback_bytes')}{{{SEL}}}", "Writeback {{server}}"),
        _q(f"{_name('mem_dirty_background_threshold_bytes')}{{{SEL}}}", "background threshold {{server}}"),
        _q(f"{_name('mem_dirty_threshold_bytes')}{{{SEL}}}", "throttle threshold {{server}}")],
        "bytes", y, overrides=[_dashed(".*threshold.*")],
        desc="Kernel dirty page cache against the flusher's background and the writers' throttle thresholds."))
    panels += row(
        _panel("Devices: throughput", [
            _q(_in_role(_rate("disk_read_bytes_total", DEV)), "read {{device}}"),
            _q(_in_role(_rate("disk_written_bytes_total", DEV)), "written {{device}}")], "Bps", y, w=8),
        _panel("Devices: await", [
            _q(_in_role(f"{_name('disk_read_await_seconds')}{{{DEV}}}"), "r_await {{device}}"),
            _q(_in_role(f"{_name('disk_write_await_seconds')}{{{DEV}}}"), "w_await {{device}}")], "s", y, x=8, w=8),
        _panel("Devices: utilization", [
            _q(_in_role(f"{_name('disk_utilization_ratio')}{{{DEV}}}"), "{{device}}")], "percentunit", y, x=16, w=8,
            max_=1))
    duration = _name("transaction_duration_seconds")
    buckets = f"sum by (le) (rate({duration}_bucket{{{SEL}}}[$__rate_interval]))"
    panels += row(
        _panel("Latency", [
            *(_q(f"histogram_quantile({q}, {buckets})", f"p{round(q * 100)}") for q in (0.5, 0.95, 0.99)),
            _q(f"sum(rate({duration}_sum{{{SEL}}}[$__rate_interval])) / "
               f"sum(rate({duration}_count{{{SEL}}}[$__rate_interval]))", "mean")], "s", y, w=10,
            desc="Transaction latency of a workload pgio-tui launched, over each step and every server "
                 "selected (histogram_quantile over the histogram's buckets: within a bucket of the exact "
                 "percentile)."),
        _panel("Latency per tick", [
            _q(f"{_name(f'latency_{s}_seconds')}{{{SEL}}}", f"tick {s} {{{{server}}}}") for s in ("p99", "max")],
            "s", y, x=10, w=6, desc="p99 and max of the tick a scrape saw: one tick, not the step; never "
                                    "average them (use the Latency panel)."),
        _panel("Transactions", [
            _q(_rate("transactions_total"), "tps {{server}}"),
            _q(f"sum(rate({duration}_count{{{SEL}}}[$__rate_interval])) - "
               f'sum(rate({duration}_bucket{{{SEL}, le="0.1"}}[$__rate_interval]))', "slower than 100 ms")],
            "reqps", y, x=16, w=8, overrides=[_dashed("slower.*")]))
    panels += row(
        _panel("Statement execution time (pg_stat_statements, not transactions)", [
            _q(f"{_name('statement_exec_mean_seconds')}{{{SEL}}}", "mean {{server}}")], "s", y, w=16,
            desc="Mean execution time of the plannable statements of each tick; utility statements and "
                 "pgio-tui's own left out."),
        _panel("Statements", [_q(_rate("statements_total"), "statements/s {{server}}")], "reqps", y, x=16, w=8))
    panels += row(_panel("Waits", [
        _q(f"sum by (wait_event_type, wait_event) ({_name('wait_sessions')}{{{SEL}, wait_event!=\"Running\"}})",
           "{{wait_event_type}}: {{wait_event}}")], "none", y, stack=True,
        desc="Backends sampled in each wait event at the tick (pg_stat_activity)."))
    panels += row(
        _panel("WAL", [_q(_rate("wal_bytes_total"), "WAL {{server}}")], "Bps", y, w=12),
        _panel("Observer cost", [
            _q(f"{_name('observer_collect_seconds')}{{{SEL}}}", "collect {{server}}"),
            _q(f"{_name('observer_server_seconds')}{{{SEL}}}", "server {{server}}"),
            _q(_rate("observer_cpu_seconds_total"), "client CPU (s/s) {{server}}")], "s", y, x=12, w=12))
    for i, p in enumerate(panels, 1):
        p["id"] = i
        for ref, t in zip("ABCDEFGH", p["targets"]):
            t["refId"] = ref
    return {
        "__inputs": [{"name": INPUT, "label": "Prometheus", "description": "where pgio-tui's series are "
                      "(scraped, or backfilled from recordings)", "type": "datasource", "pluginId": "prometheus",
                      "pluginName": "Prometheus"}],
        "__requires": [{"type": "grafana", "id": "grafana", "name": "Grafana", "version": "12.0.0"},
                       {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
                       {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""}],
        "title": "pgio-tui: PostgreSQL I/O", "uid": "pgio-tui", "editable": True, "graphTooltip": 1,
        "schemaVersion": SCHEMA_VERSION, "version": 1, "time": {"from": "now-1h", "to": "now"},
        "refresh": "10s", "tags": ["postgresql", "pgio-tui"],
        "annotations": {"list": [{
            "name": "Checkpoints", "enable": True, "datasource": DS, "iconColor": "rgba(255, 176, 0, 0.5)",
            "target": {"refId": "Anno", "datasource": DS, "expr": checkpoint_span(), "range": True,
                       "instant": False, "editorMode": "code"},
            "titleFormat": "checkpoint: {{kind}}", "textFormat": "{{server}}", "tagKeys": "kind",
            "useValueForTime": False}]},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
             "current": {"text": "Prometheus", "value": "${%s}" % INPUT}},
            _variable("instance", f"label_values({_name('up')}, instance)", "instance"),
            _variable("server", f'label_values({_name("up")}{{instance=~"$instance"}}, server)', "server"),
            _variable("device", f"label_values({_name('disk_queue_size')}{{{SEL}}}, device)", "device"),
            _variable("role", f"label_values({_name('disk_role_info')}{{{SEL}}}, role)", "device role")]},
        "panels": panels,
    }


if __name__ == "__main__":
    print(json.dumps(dashboard(), indent=1))
