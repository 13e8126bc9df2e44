"""`pgio-tui report FILE… -o report.html`: one self-contained HTML file to share.

The charts are inline SVG made here (svg.py), the styles and the one small script (a cursor shared
by every chart) are inline in report.html: the file opens offline, in a mail attachment preview,
and prints. One file is its report; more make the comparison of compare.py against the first (the
baseline), its table written by formats.py as `diff` writes it: two runs overlaid on the aligned
time axis (A solid, B dashed), more as one chart stack per run on one x scale (N overlaid runs are
unreadable past two). `page()`, `table()` and `cdf_section()` are the experiment report's too.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pgio_tui.safe_text import html_text as escape
from importlib.resources import files
from typing import Any
from string import Template

import pgio_tui
from pgio_tui import metrics as M
from pgio_tui.analysis import latency_cdf, svg
from pgio_tui.analysis.align import DEFAULT_ALIGN, ORIGIN, aligned_columns, resolve, window
from pgio_tui.analysis.compare import Comparison, compare_recordings, gc_paused, letter
from pgio_tui.analysis.findings import Finding, findings_of
from pgio_tui.analysis.findings_out import html_section
from pgio_tui.analysis.formats import (CHANGED, NOISE, legend, run_lines, stats_cells, stats_columns,
                                       verdict)
from pgio_tui.analysis.settings_diff import all_settings, machine_host
from pgio_tui.analysis.summary import device_labels, summarize
from pgio_tui.analysis.summary_model import KB_PER_MIB, Summary
from pgio_tui.format import DASH, number
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

    def dev_metric(role: str, fld: str) -> Callable[[Run], str | None]:
        return lambda r: (M.disk(by_run[id(r)][role], fld) if role in by_run[id(r)] else None)

    def nonzero(run: Run, metric: str | None) -> bool:
        return metric is not None and any(run.cols.get(metric) or [])

    c = svg.Chart("device utilisation", "%")
    for role in roles:
        c.lines += _lines(runs, dev_metric(role, M.DISK_UTIL_PCT), role, ROLE_COLORS.get(role.split("+")[0], svg.PALETTE[5]))
    out.append(c)
    c = svg.Chart("device await", "ms")
    for role in roles:
        color = ROLE_COLORS.get(role.split("+")[0], svg.PALETTE[5])
        c.lines += _lines(runs, dev_metric(role, M.DISK_W_AWAIT_MS), f"{role} w_await", color)
        if any(nonzero(run, dev_metric(role, M.DISK_R_S)(run)) for run in runs):  # it read at all
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
    seen: dict[str, str] = {}  # label -> colour
    for ln in chart.lines:
        seen.setdefault(ln.label.rsplit(" (", 1)[0] if two else ln.label, ln.color)
    items = "".join(f'<span><i style="color:{c}"></i>{escape(n)}</span>' for n, c in seen.items())
    return f'<div class="legend">{items}</div>'


def colour(i: int) -> str:
    return svg.PALETTE[i % len(svg.PALETTE)]


def run_distribution(run: Run):
    """The run's latency distribution: its transactions when the recording holds histograms, else
    the per-tick figures weighted by transactions (latency_cdf)."""
    d = latency_cdf.from_histogram(run.hist) if run.hist is not None else None
    if d is None:
        weights = [(t or 0.0) * dt for t, dt in zip(run.cols.get(M.LATENCY_TPS) or [0.0] * len(run.x), run.dt)]
        d = latency_cdf.distribution(run.cols, weights if any(weights) else [1.0] * len(run.x))
    return d


def cdf_section(found: list[tuple[str, Any, str, bool]], title: str, what: str) -> str:
    """The latency CDF: one curve per (label, distribution, colour, dashed), a legend, a heading."""
    if not found:
        return ""
    x_max = max(d.top() for _, d, _, _ in found)
    curves = [svg.Line(label, d.curve(x_max), color, dashed=dashed) for label, d, color, dashed in found]
    items = "".join(f'<span><i class="{"d" if dashed else ""}" style="color:{color}"></i>{escape(label)}</span>'
                    for label, _, color, dashed in found)
    return (f"<h2>{escape(title)}</h2><p class=muted>{escape(what)}</p>"
            f'<div class="legend">{items}</div>' + svg.cdf_chart("latency CDF", "ms", curves, x_max))


def runs_cdf(runs: list[Run]) -> str:
    found = [(run.label, d, colour(i), len(runs) == 2 and i == 1)
             for i, run in enumerate(runs) if (d := run_distribution(run)) is not None]
    if not found:
        return ""
    return cdf_section(found, "Latency distribution", f"Share of {found[0][1].what} at or below a latency"
                       f"{', one curve per run' if len(runs) > 1 else ''} (docs/diff.md says how it is estimated).")


# --- tables -------------------------------------------------------------------------------------

def _td(text: str, cls: str = "") -> str:
    return f'<td class="{cls}">{escape(text)}</td>' if cls else f"<td>{escape(text)}</td>"


def table(head: list[str] | tuple[str, ...], rows: list[str], cls: str = "") -> str:
    """A table from its column names and rows already made (`<tr>…</tr>`); wide ones scroll inside
    a box of the page's width instead of running off it."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<div class="wide"><table{f" class={cls}" if cls else ""}><tr>{th}</tr>{"".join(rows)}</table></div>'


def comparison_table(c: Comparison) -> str:
    """The diff table of formats.py, bold where a run changed beyond the noise."""
    cols = stats_columns(c)
    rows = []
    for group, items in c.groups().items():
        rows.append(f'<tr class="g"><td colspan="{len(cols)}">{escape(group)}</td></tr>')
        for r in items:
            texts = stats_cells(c, r)
            if len(c.summaries) == 2:
                v = texts[-1]
                cls = v if v in (CHANGED, NOISE) else ""
                tds = [_td(texts[0]), _td(texts[1])] + [_td(x, "n") for x in texts[2:6]] + [_td(v, "v")]
                rows.append(f'<tr class="{cls}">' + "".join(tds) + "</tr>")
                continue
            tds = [_td(texts[0]), _td(texts[1])]
            for i, x in enumerate(texts[2:]):
                changed = i and verdict(r, i, c.letters) == CHANGED
                tds.append(f'<td class="n"><b>{escape(x)}</b></td>' if changed else _td(x, "n"))
            rows.append("<tr>" + "".join(tds) + "</tr>")
    return table([name for name, _ in cols], rows)


def summary_table(s: Summary) -> str:
    rows = []
    group = None
    for st in s.stats:
        if st.group != group:
            group = st.group
            rows.append(f'<tr class="g"><td colspan="4">{escape(group)}</td></tr>')
        rows.append("<tr>" + _td(st.name) + _td(st.unit) + _td(number(st.value, st.unit), "n")
                    + _td(st.note, "v") + "</tr>")
    return table(("metric", "unit", "value", ""), rows)


def settings_table(changes, letters: list[str]) -> str:
    """Settings with a value per run (one run: all its settings)."""
    if not changes:
        return "<p>none</p>"
    head = ("setting", "kind", *letters) if len(letters) > 1 else ("setting", "kind", "value")
    return table(head, ["<tr>" + _td(s.name) + _td(s.category) + "".join(_td(v or DASH) for v in s.values) + "</tr>"
                        for s in changes])


def workload_section(runs: list[Run], workloads: list[list[dict]]) -> str:
    """Each run's workload: the command as given, how it ended, and its own summary as it printed
    it (a line per line: escaped one by one, so the line breaks stay line breaks)."""
    parts = []
    for run, ws in zip(runs, workloads):
        for w in ws:
            who = f"{run.label}: " if len(runs) > 1 else ""
            parts.append(f"<h3>{escape(who + workload_command(w))}</h3><p>{escape(workload_outcome(w))}</p>")
            lines = w.get("report") or []
            if lines:
                parts.append("<pre>" + "\n".join(escape(line) for line in lines) + "</pre>")
    return ("<h2>Workload</h2>" + "".join(parts)) if parts else ""


def runs_table(summaries: list[Summary], labels: list[str]) -> str:
    """A line per run (formats.run_lines, as `diff` prints it), and when each was recorded."""
    head, lines = run_lines(summaries, labels)
    rows = ["<tr>" + "".join(_td(x) for x in line) + _td(str(s.meta.get("created_at", DASH))) + "</tr>"
            for line, s in zip(lines, summaries)]
    return table((*head, "recorded"), rows)


# --- the page -----------------------------------------------------------------------------------

def page(title: str, body: list[str]) -> str:
    """The self-contained HTML document around `body` (report.html: styles, the charts' cursor)."""
    template = Template(files("pgio_tui.analysis").joinpath("report.html").read_text(encoding="utf-8"))
    return template.substitute(title=escape(title), body="\n".join(b for b in body if b),
                               version=escape(pgio_tui.__version__))


def build(paths: Sequence[str | os.PathLike], align: str | None = None, baseline: int = 0,
          labels: list[str] | None = None) -> str:
    """The report of one recording, or the comparison of several against paths[baseline], as one
    HTML document."""
    if not paths:
        raise ValueError("a report takes one or more recordings")
    with gc_paused():
        recs: list[Recording] = []
        try:
            for p in paths:
                recs.append(Recording(p))
            align = resolve(align or DEFAULT_ALIGN, *recs)
            comparison = None
            if len(recs) > 1:
                comparison = compare_recordings(recs, align, baseline, labels)
                recs = [recs[baseline]] + [r for i, r in enumerate(recs) if i != baseline]  # as it orders them
                summaries = comparison.summaries
            else:
                summaries = [summarize(recs[0], window(recs[0], align))]
            workloads = [[{**w, "report": rec.workload_report(w)} for w in rec.workloads()] for rec in recs]
            runs = [_load_run(rec, letter(i), s) for i, (rec, s) in enumerate(zip(recs, summaries))]
            found = [findings_of(rec, s.window) for rec, s in zip(recs, summaries)]
        finally:
            for rec in recs:
                rec.close()
        return render(runs, comparison, align, workloads, found)


def timeline(runs: list[Run], labels: list[str]) -> str:
    """One or two runs: their charts overlaid (B dashed); more: one stack per run, one x scale."""
    x1 = max((r.summary.window.length for r in runs), default=1.0) or 1.0
    if len(runs) <= 2:
        out = ["<h2>Timeline</h2><div class=charts><div id=readout></div>"]
        spans = [r.summary.checkpoint_spans for r in runs]
        out += [_legend(ch, len(runs) == 2) + svg.time_chart(ch, 0.0, x1, spans) for ch in charts(runs)]
        return "".join(out) + "</div>"
    out = ["<h2>Timelines</h2><p class=muted>One stack per run, the same time axis; checkpoints shaded.</p>"
           "<div class=charts><div id=readout></div>"]
    for run, label in zip(runs, labels):
        out.append(f"<details{' open' if run is runs[0] else ''}><summary>{escape(run.label)}: "
                   f"{escape(label)}</summary>")
        spans = [run.summary.checkpoint_spans]
        out += [_legend(ch, False) + svg.time_chart(ch, 0.0, x1, spans) for ch in charts([run])]
        out.append("</details>")
    return "".join(out) + "</div>"


def render(runs: list[Run], comparison: Comparison | None, align: str,
           workloads: list[list[dict]] | None = None, found: list[list[Finding]] | None = None) -> str:
    c = comparison
    if c is None:
        title = f"pgio-tui report: {runs[0].summary.path.name}"
        how = " (checkpoints shaded)"
        labels = [runs[0].summary.path.name]
    elif len(runs) == 2:
        title = f"pgio-tui comparison: {' vs '.join(r.summary.path.name for r in runs)}"
        how = " (A solid, B dashed; checkpoints shaded: A top half, B bottom half)"
        labels = c.labels
    else:
        title = f"pgio-tui comparison of {len(runs)} runs against {c.labels[0]}"
        how = ""
        labels = c.labels
    summaries = [r.summary for r in runs]
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="muted">Time axis: seconds from the {escape(ORIGIN[align])}{how}.</p>',
            runs_table(summaries, labels)]
    if found is not None:  # first: what the runs show, then the figures behind it
        body.append(html_section([(f"{r.label}: {label}" if len(runs) > 1 else label, f)
                                  for r, label, f in zip(runs, labels, found)]))
    if c is not None:
        body += ["<h2>What changed</h2>", f'<p class="muted">{escape(legend(c))}</p>', comparison_table(c)]
    else:
        body += ["<h2>Summary</h2>", summary_table(summaries[0])]
    body += [workload_section(runs, workloads or []), timeline(runs, labels), runs_cdf(runs)]
    if c is not None:
        body += ["<h2>Settings that differ</h2>", settings_table(c.settings, c.letters), "<h2>Machine</h2>",
                 settings_table(c.machine, c.letters) if c.machine
                 else f"<p>same machine ({escape(machine_host(c.a.meta) or '?')})</p>"]
        body += [f"<details><summary>All settings of {escape(r.label)}</summary>"
                 f"{settings_table(all_settings(r.summary), [r.label])}</details>" for r in runs]
        notes = c.notes
    else:
        body += ["<h2>Settings</h2>", settings_table(all_settings(summaries[0]), ["value"])]
        notes = summaries[0].notes
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    return page(title, body)
