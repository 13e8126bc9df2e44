"""`pgio-tui report` of N recordings (or an experiment folder's runs): one HTML file with the N-way
comparison against the baseline (compare_many.py), the latency CDF with one curve per run, and
each run's timeline as small multiples (the charts of report.py, one stack per run, on one x
scale) — N overlaid runs in one chart are unreadable past two.
"""

from __future__ import annotations

import os
from importlib.resources import files
from string import Template

import pgio_tui
from pgio_tui import metrics as M
from pgio_tui.analysis import latency_cdf, svg
from pgio_tui.analysis.align import DEFAULT_ALIGN, ORIGIN
from pgio_tui.analysis.compare import gc_paused
from pgio_tui.analysis.compare_many import ManyComparison, compare_many_recordings
from pgio_tui.analysis.formats_many import LEGEND, cell, run_columns, run_lines
from pgio_tui.analysis.report import Run, _legend, _load_run, _td, charts, workload_section
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui.format import DASH
from pgio_tui.safe_text import html_text as escape
from pgio_tui.store.reader import Recording


def colour(i: int) -> str:
    return svg.PALETTE[i % len(svg.PALETTE)]


def comparison_table(c: ManyComparison) -> str:
    order = c.order()
    head = "".join(f"<th>{escape(c.letters[i])}</th>" for i in order)
    rows = [f"<table><tr><th>metric</th><th>unit</th>{head}</tr>"]
    for group, items in c.groups().items():
        rows.append(f'<tr class="g"><td colspan="{2 + len(order)}">{escape(group)}</td></tr>')
        for r in items:
            tds = []
            for i in order:
                changed = r.pairs[i] is not None and r.pairs[i].verdict == "changed"
                tds.append(f'<td class="n"><b>{escape(cell(r, i))}</b></td>' if changed else _td(cell(r, i), "n"))
            rows.append("<tr>" + _td(r.name) + _td(r.unit) + "".join(tds) + "</tr>")
    return "".join(rows) + "</table>"


def runs_table(c: ManyComparison) -> str:
    head = "".join(f"<th>{escape(x)}</th>" for x in run_columns(c))
    body = "".join("<tr>" + "".join(_td(x) for x in line) + "</tr>" for line in run_lines(c))
    return f"<table><tr>{head}</tr>{body}</table>"


def settings_table(c: ManyComparison) -> str:
    if not c.settings and not c.machine:
        return f"<p>none; same machine ({escape(machine_host(c.summaries[0].meta) or '?')})</p>"
    order = c.order()
    head = "<tr><th>setting</th><th>kind</th>" + "".join(f"<th>{c.letters[i]}</th>" for i in order) + "</tr>"
    lines = [(n, cat, v) for cat, n, v in c.settings] + [(n, "machine", v) for n, v in c.machine]
    body = "".join("<tr>" + _td(n) + _td(cat) + "".join(_td(v[i] or DASH) for i in order) + "</tr>"
                   for n, cat, v in lines)
    return f"<table>{head}{body}</table>"


def cdf_section(runs: list[Run]) -> str:
    """One latency CDF curve per run, from its transactions when the recording holds histograms."""
    found = []
    for i, run in enumerate(runs):
        d = latency_cdf.from_histogram(run.hist) if run.hist is not None else None
        if d is None:
            weights = [(t or 0.0) * dt for t, dt in zip(run.cols.get(M.LATENCY_TPS) or [0.0] * len(run.x), run.dt)]
            d = latency_cdf.distribution(run.cols, weights if any(weights) else [1.0] * len(run.x))
        if d is not None:
            found.append((i, run, d))
    if not found:
        return ""
    x_max = max(d.top() for _, _, d in found)
    curves = [svg.Line(run.label, d.curve(x_max), colour(i)) for i, run, d in found]
    legend = "".join(f'<span><i style="color:{colour(i)}"></i>{escape(run.label)}</span>' for i, run, _ in found)
    return (f"<h2>Latency distribution</h2><p class=muted>Share of {escape(found[0][2].what)} at or below a "
            f"latency, one curve per run (docs/diff.md says how it is estimated).</p>"
            f'<div class="legend">{legend}</div>' + svg.cdf_chart("latency CDF", "ms", curves, x_max))


def timelines(runs: list[Run], labels: list[str]) -> str:
    """Each run's chart stack, one x scale for all (the longest window)."""
    x1 = max((r.summary.window.length for r in runs), default=1.0) or 1.0
    out = ["<h2>Timelines</h2><p class=muted>One stack per run, the same time axis; checkpoints shaded.</p>"
           "<div class=charts><div id=readout></div>"]
    for run, label in zip(runs, labels):
        out.append(f"<details{' open' if run is runs[0] else ''}><summary>{escape(run.label)}: "
                   f"{escape(label)}</summary>")
        for ch in charts([run]):
            out.append(_legend(ch, False) + svg.time_chart(ch, 0.0, x1, [run.summary.checkpoint_spans]))
        out.append("</details>")
    out.append("</div>")
    return "".join(out)


def build_many(paths: list[str | os.PathLike], align: str | None = None, baseline: int = 0,
               labels: list[str] | None = None) -> str:
    """The N-way report (N >= 2) as one HTML document."""
    with gc_paused():
        recs: list[Recording] = []
        try:
            for p in paths:
                recs.append(Recording(p))
            c = compare_many_recordings(recs, align or DEFAULT_ALIGN, baseline, labels)
            ordered = [recs[baseline]] + [r for i, r in enumerate(recs) if i != baseline]  # as c orders them
            workloads = [[{**w, "report": rec.workload_report(w)} for w in rec.workloads()] for rec in ordered]
            runs = [_load_run(rec, c.letters[i], s) for i, (rec, s) in enumerate(zip(ordered, c.summaries))]
        finally:
            for rec in recs:
                rec.close()
    return render_many(c, runs, workloads)


def render_many(c: ManyComparison, runs: list[Run], workloads: list[list[dict]]) -> str:
    title = f"pgio-tui comparison of {len(runs)} runs against {c.labels[0]}"
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="muted">Time axis: seconds from the {escape(ORIGIN[c.align])}. {escape(LEGEND)}.</p>',
            runs_table(c), "<h2>What changed</h2>", comparison_table(c),
            cdf_section(runs), timelines(runs, c.labels), workload_section(runs, workloads),
            "<h2>Settings that differ</h2>", settings_table(c)]
    if c.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in c.notes) + "</ul>")
    template = Template(files("pgio_tui.analysis").joinpath("report.html").read_text(encoding="utf-8"))
    return template.substitute(title=escape(title), body="\n".join(body), version=pgio_tui.__version__)
