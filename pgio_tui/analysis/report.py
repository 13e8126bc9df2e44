"""`pgio-tui report FILE [FILE2] -o report.html`: one self-contained HTML file to share.

The charts are inline SVG made here (svg.py), the styles and the one small script (a cursor shared
by every chart) are inline in report.html: the file opens offline, in a mail attachment preview,
and prints. Two files make a comparison: the same charts with A solid and B dashed on the aligned
time axis, the diff table (compare.py) and the settings that differ.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pgio_tui.safe_text import html_text as escape
from importlib.resources import files
from typing import Any
from string import Template

import pgio_tui
from pgio_tui import metrics as M
from pgio_tui.analysis import latency_cdf, svg
from pgio_tui.analysis.align import DEFAULT_ALIGN, ORIGIN, aligned_columns, resolve, window
from pgio_tui.analysis.compare import Comparison, compare_recordings, gc_paused
from pgio_tui.analysis.formats import change, interval, window_text
from pgio_tui.analysis.settings_diff import all_settings, machine_host
from pgio_tui.analysis.summary import KB_PER_MIB, Summary, device_labels, summarize
from pgio_tui.format import number
from pgio_tui.store.reader import Recording
from pgio_tui.workload_facts import workload_command, workload_outcome

SERIES_COLORS = {  # one colour per series name, the same in A and B
    **{M.writes(s): c for s, c in zip(M.WRITE_SOURCES, svg.PALETTE)},
    M.MEM_DIRTY_KB: svg.PALETTE[0], M.MEM_WRITEBACK_KB: svg.PALETTE[1],
    M.LATENCY_P50_MS: svg.PALETTE[2], M.LATENCY_P95_MS: svg.PALETTE[4], M.LATENCY_P99_MS: svg.PALETTE[1],
    M.LATENCY_MEAN_MS: svg.PALETTE[0], M.LATENCY_TPS: svg.PALETTE[0], M.CHECKPOINT_PROGRESS: svg.PALETTE[0],
}
ROLE_COLORS = {"PGDATA": svg.PALETTE[0], "WAL": svg.PALETTE[2], "TBLSPC": svg.PALETTE[3]}
THRESHOLDS = ((M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "background threshold", "#e377c2"),
              (M.MEM_DIRTY_THRESHOLD_KB, "throttle threshold", "#7f7f7f"))


@dataclass
class Run:
    """One recording as drawn: its summary, its window and its per-tick columns by metric."""

    label: str
    summary: Summary
    x: list[float]
    dt: list[float]
    cols: dict[str, list]
    hist: Any = None  # quantiles.LatencyHistogram of the window's transactions (empty: none recorded)

    def points(self, metric: str, scale: float = 1.0) -> list[tuple[float, float | None]]:
        col = self.cols.get(metric) or []
        return [(x, None if v is None else v * scale) for x, v in zip(self.x, col)]

    def has(self, metric: str) -> bool:
        return any(v is not None for v in self.cols.get(metric) or [])


def _load_run(rec: Recording, label: str, s: Summary) -> Run:
    devs = [M.disk(d, f) for d in dict.fromkeys(s.role_devices.values())
            for f in (M.DISK_UTIL_PCT, M.DISK_W_AWAIT_MS, M.DISK_R_AWAIT_MS, M.DISK_R_S, M.DISK_W_S)]
    scalars = [m for m in rec.metric_names() if m.split(".")[0] in ("writes", "mem", "latency", "statements", "checkpoint")
               and m not in M.LATENCY_OVER.values()]
    metrics = list(dict.fromkeys(scalars + devs))
    c = aligned_columns(rec, s.window, metrics)
    return Run(label, s, c.x, c.dt, c.values, rec.latency_histogram(s.window.start_tick, s.window.end_tick))


# --- charts -------------------------------------------------------------------------------------

def _lines(runs: list[Run], metric_of, name: str, color: str, scale: float = 1.0) -> list[svg.Line]:
    """The same series of every run: A solid, B dashed. metric_of(run) -> metric name or None."""
    out = []
    for i, run in enumerate(runs):
        metric = metric_of(run)
        if metric and run.has(metric):
            label = f"{name} ({run.label})" if len(runs) > 1 else name
            out.append(svg.Line(label, run.points(metric, scale), color, dashed=i == 1))
    return out


def charts(runs: list[Run]) -> list[svg.Chart]:
    """The stack of time charts, in pane order; charts with nothing to draw are left out."""
    out = []
    c = svg.Chart("checkpoint progress", "%", height=90)
    c.lines = _lines(runs, lambda r: M.CHECKPOINT_PROGRESS, "progress", SERIES_COLORS[M.CHECKPOINT_PROGRESS], 100)
    out.append(c)
    c = svg.Chart("buffers written by source", "buffers/s")
    for src in M.WRITE_SOURCES:
        c.lines += _lines(runs, lambda r, m=M.writes(src): m, src, SERIES_COLORS[M.writes(src)])
    out.append(c)
    c = svg.Chart("Dirty / Writeback", "MiB")
    for m in (M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB):
        c.lines += _lines(runs, lambda r, m=m: m, M.BY_NAME[m].label, SERIES_COLORS[m], 1 / KB_PER_MIB)
    data_max = max((y for ln in c.lines for _, y in ln.points if y is not None), default=0.0)
    off_scale: dict[str, list[float]] = {}
    for metric, name, color in THRESHOLDS:
        for i, run in enumerate(runs):
            vals = [v for v in run.cols.get(metric) or [] if v is not None]
            if not vals:
                continue
            level = statistics.median(vals) / KB_PER_MIB  # the thresholds move with free memory
            if level <= 2 * max(data_max, 1.0):
                c.hlines.append((f"{name} ({run.label})" if len(runs) > 1 else name, level, color, i == 1))
            else:
                off_scale.setdefault(name.split()[0], []).append(level)
    if off_scale:  # far above Dirty: named, not drawn, so Dirty keeps the chart's height
        c.title += " · above the scale: " + ", ".join(
            f"{name} {' / '.join(number(v) for v in dict.fromkeys(round(v) for v in levels))} MiB"
            for name, levels in off_scale.items())
    out.append(c)
    labelled = [device_labels(run.summary.role_devices) for run in runs]  # a shared device once, with both roles
    roles = list(dict.fromkeys(label for labels in labelled for label in labels))
    by_run = {id(run): labels for run, labels in zip(runs, labelled)}

    def dev_metric(role: str, fld: str):
        return lambda r: (M.disk(by_run[id(r)][role], fld) if role in by_run[id(r)] else None)

    c = svg.Chart("device utilisation", "%")
    for role in roles:
        c.lines += _lines(runs, dev_metric(role, M.DISK_UTIL_PCT), role, ROLE_COLORS.get(role.split("+")[0], svg.PALETTE[5]))
    out.append(c)
    c = svg.Chart("device await", "ms")
    for role in roles:
        color = ROLE_COLORS.get(role.split("+")[0], svg.PALETTE[5])
        c.lines += _lines(runs, dev_metric(role, M.DISK_W_AWAIT_MS), f"{role} w_await", color)
        if any(any(run.cols.get(M.disk(by_run[id(run)].get(role), M.DISK_R_S)) or []) for run in runs):
            c.lines += _lines(runs, dev_metric(role, M.DISK_R_AWAIT_MS), f"{role} r_await", svg.PALETTE[7])
    out.append(c)
    c = svg.Chart("latency", "ms")
    for m in (M.LATENCY_P50_MS, M.LATENCY_P95_MS, M.LATENCY_P99_MS):
        c.lines += _lines(runs, lambda r, m=m: m, M.BY_NAME[m].label, SERIES_COLORS[m])
    if not c.lines:
        c.lines = _lines(runs, lambda r: M.LATENCY_MEAN_MS, M.BY_NAME[M.LATENCY_MEAN_MS].label, SERIES_COLORS[M.LATENCY_MEAN_MS])
        c.title = "latency (per-tick mean)"
    out.append(c)
    c = svg.Chart("statement execution time (pg_stat_statements, not transactions)", "ms")
    c.lines = _lines(runs, lambda r: M.STATEMENTS_MEAN_MS, "statement mean", SERIES_COLORS[M.LATENCY_MEAN_MS])
    out.append(c)
    c = svg.Chart("throughput", "tps", height=100)
    c.lines = _lines(runs, lambda r: M.LATENCY_TPS, M.BY_NAME[M.LATENCY_TPS].label, SERIES_COLORS[M.LATENCY_TPS])
    out.append(c)
    return [c for c in out if c.lines]


def _legend(chart: svg.Chart, two: bool) -> str:
    seen = {}
    for ln in chart.lines:
        seen.setdefault(ln.label.rsplit(" (", 1)[0] if two else ln.label, ln.color)
    items = "".join(f'<span><i style="color:{c}"></i>{escape(n)}</span>' for n, c in seen.items())
    return f'<div class="legend">{items}</div>'


def cdf_section(runs: list[Run]) -> str:
    dists = []
    for run in runs:
        exact = latency_cdf.from_histogram(run.hist) if run.hist is not None else None
        if exact is not None:
            dists.append(exact)
            continue
        weights = [(t or 0.0) * dt for t, dt in zip(run.cols.get(M.LATENCY_TPS) or [0.0] * len(run.x), run.dt)]
        if not any(weights):
            weights = [1.0] * len(run.x)
        dists.append(latency_cdf.distribution(run.cols, weights))
    found = [(run, d) for run, d in zip(runs, dists) if d is not None]
    if not found:
        return ""
    x_max = max(d.top() for _, d in found)
    curves = [svg.Line(run.label, d.curve(x_max), svg.PALETTE[0], dashed=run.label == "B") for run, d in found]
    return (f"<h2>Latency distribution</h2><p class=muted>Share of {escape(found[0][1].what)} at or below a latency"
            f"{'; A solid, B dashed' if len(runs) > 1 else ''}. See docs/diff.md for how it is estimated.</p>"
            + svg.cdf_chart("latency CDF", "ms", curves, x_max))


# --- tables -------------------------------------------------------------------------------------

def _td(text: str, cls: str = "") -> str:
    return f'<td class="{cls}">{escape(text)}</td>' if cls else f"<td>{escape(text)}</td>"


def comparison_table(c: Comparison) -> str:
    rows = ["<table><tr><th>metric</th><th>unit</th><th>A</th><th>B</th><th>change</th>"
            "<th>95 % interval</th><th>verdict</th></tr>"]
    for group, items in c.groups().items():
        rows.append(f'<tr class="g"><td colspan="7">{escape(group)}</td></tr>')
        for r in items:
            rows.append(f'<tr class="{r.verdict}">' + _td(r.name) + _td(r.unit) + _td(number(r.a, r.unit), "n")
                        + _td(number(r.b, r.unit), "n") + _td(change(r), "n") + _td(interval(r.judgement, r.unit), "n")
                        + _td(r.verdict, "v") + "</tr>")
    return "".join(rows) + "</table>"


def summary_table(s: Summary) -> str:
    rows = ["<table><tr><th>metric</th><th>unit</th><th>value</th><th></th></tr>"]
    group = None
    for st in s.stats:
        if st.group != group:
            group = st.group
            rows.append(f'<tr class="g"><td colspan="4">{escape(group)}</td></tr>')
        rows.append("<tr>" + _td(st.name) + _td(st.unit) + _td(number(st.value, st.unit), "n")
                    + _td(st.note, "v") + "</tr>")
    return "".join(rows) + "</table>"


def settings_table(changes, two: bool) -> str:
    if not changes:
        return "<p>none</p>"
    head = "<tr><th>setting</th><th>kind</th><th>A</th><th>B</th></tr>" if two else \
        "<tr><th>setting</th><th>kind</th><th>value</th></tr>"
    body = "".join("<tr>" + _td(s.name) + _td(s.category) + _td(s.a or "–") + (_td(s.b or "–") if two else "")
                   + "</tr>" for s in changes)
    return f"<table>{head}{body}</table>"


def workload_section(runs: list[Run], workloads: list[list[dict]]) -> str:
    """Each run's workload: the command as given, how it ended, and its own summary as it printed it."""
    parts = []
    for run, ws in zip(runs, workloads):
        for w in ws:
            who = f"{run.label}: " if len(runs) > 1 else ""
            parts.append(f"<h3>{escape(who + workload_command(w))}</h3><p>{escape(workload_outcome(w))}</p>")
            lines = w.get("report") or []
            if lines:
                parts.append("<pre>" + escape("\n".join(lines)) + "</pre>")
    return ("<h2>Workload</h2>" + "".join(parts)) if parts else ""


def _runs_table(runs: list[Run]) -> str:
    def cells(label: str, fn) -> str:
        return f"<tr><th>{escape(label)}</th>" + "".join(_td(fn(r)) for r in runs) + "</tr>"
    head = "<tr><th></th>" + "".join(f"<th>{r.label}</th>" for r in runs) + "</tr>" if len(runs) > 1 else ""
    return ("<table>" + head
            + cells("file", lambda r: r.summary.path.name)
            + cells("host", lambda r: machine_host(r.summary.meta) or "–")
            + cells("server", lambda r: str(r.summary.meta.get("server_version", "–")))
            + cells("recorded", lambda r: str(r.summary.meta.get("created_at", "–")))
            + cells("window", lambda r: window_text(r.summary))
            + cells("devices", lambda r: ", ".join(f"{k} {v}" for k, v in device_labels(r.summary.role_devices).items())
                    or "–")
            + "</table>")


# --- the page -----------------------------------------------------------------------------------

def build(paths: list[str | os.PathLike], align: str | None = None) -> str:
    """The report of one recording, or the comparison of two, as one HTML document."""
    if not 1 <= len(paths) <= 2:
        raise ValueError("a report takes one or two recordings")
    with gc_paused():
        recs = [Recording(p) for p in paths]
        try:
            align = resolve(align or DEFAULT_ALIGN, *recs)
            workloads = [[{**w, "report": rec.workload_report(w)} for w in rec.workloads()] for rec in recs]
            comparison = None
            if len(recs) == 2:
                comparison = compare_recordings(recs[0], recs[1], align)
                summaries = [comparison.a, comparison.b]
            else:
                summaries = [summarize(recs[0], window(recs[0], align))]
            runs = [_load_run(rec, label, s) for rec, label, s in zip(recs, "AB", summaries)]
        finally:
            for rec in recs:
                rec.close()
        return render(runs, comparison, align, workloads)


def render(runs: list[Run], comparison: Comparison | None, align: str,
           workloads: list[list[dict]] | None = None) -> str:
    two = comparison is not None
    names = " vs ".join(r.summary.path.name for r in runs)
    title = f"pgio-tui {'comparison' if two else 'report'}: {names}"
    x1 = max((r.summary.window.length for r in runs), default=1.0) or 1.0
    spans = [r.summary.checkpoint_spans for r in runs]
    how = " (A solid, B dashed; checkpoints shaded: A top half, B bottom half)" if two else " (checkpoints shaded)"
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="muted">Time axis: seconds from the {escape(ORIGIN[align])}{how}.</p>', _runs_table(runs)]
    if two:
        body += ["<h2>What changed</h2>",
                 '<p class="muted">Verdict: <b>changed</b> when the 95 % block-bootstrap interval of B − A '
                 "excludes 0, <i>noise</i> when it does not (docs/diff.md).</p>", comparison_table(comparison)]
    else:
        body += ["<h2>Summary</h2>", summary_table(runs[0].summary)]
    body.append(workload_section(runs, workloads or []))
    body.append("<h2>Timeline</h2><div class=charts><div id=readout></div>")
    for ch in charts(runs):
        body.append(_legend(ch, two) + svg.time_chart(ch, 0.0, x1, spans))
    body.append("</div>")
    body.append(cdf_section(runs))
    if two:
        body += ["<h2>Settings that differ</h2>", settings_table(comparison.settings, True),
                 "<h2>Machine</h2>", settings_table(comparison.machine, True) if comparison.machine
                 else f"<p>same machine ({escape(machine_host(runs[0].summary.meta) or '?')})</p>"]
        body += [f"<details><summary>All settings of {r.label}</summary>"
                 f"{settings_table(all_settings(r.summary), False)}</details>" for r in runs]
        notes = comparison.notes
    else:
        body += ["<h2>Settings</h2>", settings_table(all_settings(runs[0].summary), False)]
        notes = runs[0].summary.notes
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    template = Template(files("pgio_tui.analysis").joinpath("report.html").read_text(encoding="utf-8"))
    return template.substitute(title=escape(title), body="\n".join(body), version=pgio_tui.__version__)
