"""`experiment report DIR --format html -o FILE`: the experiment on one self-contained page.

The plan, at a glance (key figures and the top statements per setting, changes against the
baseline), the results table (the text report's lines, grouped, with verdicts), the runs with their
flags, and charts drawn here as inline SVG: per run, PGDATA's util / write MiB/s / w_await over time
as small multiples on shared scales; the latency CDF of every setting combination (all its
repeats' transactions); a heat map per figure for a two-setting grid; Writeback against latency per
run with their correlation. The page, its styles and the latency CDF are the recording report's
(analysis/report.py); no external asset, no script of its own. Every text from a recording or the
plan is escaped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from pgio_tui import metrics as M
from pgio_tui.analysis import latency_cdf, report, svg
from pgio_tui.analysis.align import aligned_columns
from pgio_tui.analysis.formats import DASH, number
from pgio_tui.analysis.summary_model import KB_PER_MIB as KIB_PER_MIB
from pgio_tui.experiments import charts
from pgio_tui.experiments.figures import GROUP_TITLES, HEADLINE, waits_over_time
from pgio_tui.experiments.report import COLUMNS, RUN_FIGURES, flag_lines, lines
from pgio_tui.experiments.results import Results, RunResult
from pgio_tui.quantiles import LatencyHistogram
from pgio_tui.safe_text import html_text as escape
from pgio_tui.store.reader import Recording
from pgio_tui.workload_facts import workload_command

HEAT_FIGURES = ("tps", "lat_mean", "lat_p99", "pgio_riops", "pgio_tuples_s", "pgio_hit_ratio", "blks_read_s",
                "pgdata_r_s", "sql_elapsed")
STYLE = """<style>
.grid3 { display: grid; grid-template-columns: repeat(3, 1fr); gap: 2px 10px; margin-bottom: .6em; }
.grid3 svg, .scatters svg { width: 100%; height: auto; }
.scatters { display: grid; grid-template-columns: repeat(3, 1fr); gap: 6px 10px; }
figure { margin: 0; } figcaption { font-size: .85em; color: #555; }
.run { font-size: .9em; margin: .5em 0 0; } .flag { color: #b35900; }
svg.mini text { font-size: 9px; } svg.heat text { font-size: 11px; }
td.flag { font-size: .9em; }
</style>"""


@dataclass(slots=True)
class Series:
    """One run's per-tick columns for the charts, and its transactions' histogram."""

    result: RunResult
    x: list[float] = field(default_factory=list)
    cols: dict[str, list] = field(default_factory=dict)
    hist: LatencyHistogram = field(default_factory=LatencyHistogram)
    pgdata: str | None = None
    waits_x: list[float] = field(default_factory=list)
    waits: dict[str, list[float]] = field(default_factory=dict)  # wait type -> client backends per tick

    def col(self, key: str) -> list:
        return self.cols.get(key) or [None] * len(self.x)


def load_series(res: Results) -> list[Series]:
    out = []
    for r in res.runs:
        s = Series(r, pgdata=r.figures.devices.get("PGDATA"))
        win = r.figures.window
        if win is None or win.start_tick is None or r.run.file is None:
            out.append(s)
            continue
        with Recording(res.folder / r.run.file) as rec:
            names = set(rec.metric_names())
            want = {"writeback": M.MEM_WRITEBACK_KB, "p99": M.LATENCY_P99_MS, "mean": M.LATENCY_MEAN_MS,
                    **{f"w.{src}": M.writes(src) for src in M.WRITE_SOURCES}}
            if s.pgdata:
                want |= {"util": M.disk(s.pgdata, M.DISK_UTIL_PCT), "wkb": M.disk(s.pgdata, M.DISK_WKB_S),
                         "w_await": M.disk(s.pgdata, M.DISK_W_AWAIT_MS)}
            want |= {f"pick.{f.key}": m for f in picked(res) if (m := metric_of(f, r.figures.devices))}
            want = {k: m for k, m in want.items() if m in names}
            c = aligned_columns(rec, win, list(want.values()))
            s.x = c.x
            s.cols = {k: c.values[m] for k, m in want.items()}
            s.hist = rec.latency_histogram(win.start_tick, win.end_tick)
            s.waits_x, s.waits = waits_over_time(rec, win)
        out.append(s)
    return out


PICKED_MAX = 12  # figures --figures may chart per run and as heat maps: a page stays readable


def picked(res: Results) -> list:
    """The figures --figures picked (none without it): charted per run over time and as heat maps."""
    return res.shown()[:PICKED_MAX] if res.pick else []


def metric_of(fig, devices: dict[str, str]) -> str | None:
    """The recorded metric behind a figure, for its chart over time: its catalog key, a device's
    role (PGDATA) put back to the run's device; None for figures worked out from several."""
    if fig.of is None:
        return None
    metric = fig.of[0]
    if fig.role:
        return M.disk(devices[fig.role], metric) if fig.role in devices else None
    if metric.startswith(M.DISK_PREFIX):
        role, _, fld = metric[len(M.DISK_PREFIX):].rpartition(".")
        return M.disk(devices[role], fld) if role in devices else None
    return metric


def picked_section(res: Results, series: list[Series]) -> str:
    """Each picked figure's metric over time, per run in run order, on one scale, checkpoints as bands."""
    out = []
    for f in picked(res):
        drawn = [s for s in series if any(v is not None for v in s.col(f"pick.{f.key}"))]
        if not drawn:
            continue
        meta = M.lookup(metric_of(f, drawn[0].result.figures.devices) or "")
        unit = meta.unit if meta is not None else ""
        x1 = max((s.x[-1] for s in drawn if s.x), default=1.0) or 1.0
        top, cut = charts.robust_top([v for s in drawn for v in s.col(f"pick.{f.key}")])
        out.append(f"<h3>{escape(f.label)} <span class=muted>({escape(f.name)})</span></h3><div class=grid3>")
        for s in drawn:
            r = s.result
            title = f"run {r.run.index}: {res.plan.label_of(r.run.settings)} r{r.run.repeat}"
            out.append(charts.mini_time(title + (" (peaks cut)" if cut else ""), unit,
                                        list(zip(s.x, s.col(f"pick.{f.key}"))), x1, top, svg.PALETTE[0],
                                        r.figures.spans))
        out.append("</div>")
    if not out:
        return ""
    return ("<h2>The figures asked for, over time per run</h2><p class=muted>--figures: each one's metric per "
            "tick, every run on one scale, in run order; grey bands: checkpoints.</p>" + "".join(out))


def _scaled(col: list, factor: float) -> list:
    return [None if v is None else v * factor for v in col]


# --- sections -----------------------------------------------------------------------------------

def plan_section(res: Results) -> str:
    p = res.plan
    w = p.workload or {}
    what = " ".join(str(a) for a in w.get("args") or [])
    rows = [("settings swept", "; ".join(f"{n} = {', '.join(v)}" for n, v in p.sweep.items())),
            ("repeats, order", f"{p.repeat}, {p.order}" + (f" (seed {p.seed})" if p.order == "random" else "")),
            ("workload", f"{w.get('kind', '?')} {what}".strip()),
            ("server", "lab cluster" + (f" (PostgreSQL {p.target.get('pg_version')})" if p.target.get("pg_version")
                                        else "") if p.target.get("lab") else "the given server"),
            ("warm-up, first run", f"{p.warmup_s:g} s, {'discarded' if p.discard_first else 'kept'}"),
            ("warm-up after a restart", f"{p.restart_warmup_s:g} s, unrecorded" if p.restart_warmup_s else "none"),
            ("runs", f"{len(res.runs)} of {len(p.runs)} finished"),
            ("settings put back", {True: "yes", False: "no", None: "not yet"}.get(p.restored, "?")),
            ("baseline", " ".join(f"{k}={v}" for k, v in res.baseline.items()))]
    return "<table>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows) + "</table>"


def results_table(res: Results) -> str:
    """The text report's lines, one table per group of figures, each group folding away."""
    head = "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in COLUMNS) + "</tr>"
    groups: dict[str, list[str]] = {}
    for x in lines(res):
        fig = x[10]
        cls = "changed" if x[9] == "changed" else "noise" if x[9] == "within noise" else ""
        name = f'<td title="{escape(fig.text)}">{escape(x[0])}</td>' if fig.text else f"<td>{escape(x[0])}</td>"
        groups.setdefault(fig.group, []).append(
            f'<tr class="{cls}">{name}' + "".join(f'<td class="{c}">{escape(v)}</td>' for v, c in
                                                  zip(x[1:10], ("", "", "n", "n", "n", "n", "n", "n", "v"))) + "</tr>")
    out = []
    for group, rows in groups.items():
        changed = sum('class="changed"' in r for r in rows)
        what = f" · {changed} changed" if changed else ""
        out.append(f"<details open><summary><b>{escape(GROUP_TITLES.get(group, group))}</b>{what}</summary>"
                   f"{head}{''.join(rows)}</table></details>")
    return "".join(out)


def glance(res: Results, keys: tuple[str, ...] | None = None) -> str:
    """The question in one table: per combination a few figures (`keys`; default: the statements'
    mean and stddev, the backend_flush_after article's table), each its mean, its change against the
    baseline and, bold, whether that change beat the noise."""
    shown = {f.key: f for f in res.shown()}
    figs = [shown[k] for k in keys if k in shown] if keys else \
        [f for f in shown.values() if f.group == "statements" and not f.key.endswith("_calls")]
    if not figs:
        return ""
    numbers = statement_numbers(res)  # a statement's column: its number in the list below the results

    def name(f) -> str:
        return f"#{numbers[f.text]} {f.label.rsplit(' · ', 1)[-1]}" if f.text else f.label
    head = "".join(f'<th title="{escape(f.text)}">{escape(name(f))} ({escape(f.unit)})</th>' if f.text else
                   f"<th>{escape(f.label)} ({escape(f.unit)})</th>" for f in figs)
    out = [f"<table><tr><th>settings</th><th>n</th>{head}</tr>"]
    for r in res.rows:
        cells = []
        for f in figs:
            st, ch = r.stats[f.key], r.changes.get(f.key)
            text = number(st.mean, f.unit)
            if ch is not None and ch.pct is not None:
                mark = f"{ch.pct:+.1f} %"
                text += f" ({'<b>' + escape(mark) + '</b>' if ch.verdict == 'changed' else escape(mark)})"
                cells.append(f'<td class="n">{text}</td>')
            else:
                cells.append(f'<td class="n">{escape(text)}</td>')
        n = max((st.n for st in r.stats.values()), default=0)
        base = " (baseline)" if r.baseline else ""
        out.append(f"<tr><td>{escape(r.label + base)}</td><td class=n>{n}</td>{''.join(cells)}</tr>")
    if keys is None:
        return ("<h3>Statements at a glance</h3><p class=muted>pg_stat_statements' execution time of the top "
                "statements: #1, #2 … as numbered under the results (hover a heading for the whole text).</p>"
                + "".join(out) + "</table>")
    return ("<h2>At a glance</h2><p class=muted>Mean of the repeats and change against the baseline; <b>bold</b>: "
            "changed beyond the noise (the verdicts are in the table below).</p>" + "".join(out) + "</table>")


def statement_numbers(res: Results) -> dict[str, int]:
    """The statements of the report, numbered 1, 2 … in the order they are listed."""
    return {t: i for i, t in enumerate(dict.fromkeys(f.text for f in res.shown() if f.text), 1)}


def statements_section(res: Results) -> str:
    texts = list(statement_numbers(res))
    if not texts:
        return ""
    return ("<h3>Statements in the table (whole text)</h3><ol>"
            + "".join(f"<li><code>{escape(t)}</code></li>" for t in texts) + "</ol>")


def runs_table(res: Results, series: list[Series]) -> str:
    """The runs in run order, each with its headline figures (run-order effects show down a column)."""
    present = {f.key: f for f in res.present()}
    figs = [present[k] for k in HEADLINE if k in present][:RUN_FIGURES]
    head = "".join(f"<th>{escape(h)}</th>" for h in ("run", "settings", "repeat", *(f"{f.label} ({f.unit})"
                                                                                   for f in figs),
                                                     "read back", "workload", "file", "r(Writeback, latency)",
                                                     "flags"))
    out = [f"<table><tr>{head}</tr>"]
    for s in series:
        r = s.result
        applied = " ".join(f"{k}={v}" for k, v in r.run.applied.items()) or DASH
        rho, what = writeback_r(s)
        out.append("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in (
            str(r.run.index), res.plan.label_of(r.run.settings), str(r.run.repeat),
            *(number(r.figures.values.get(f.key), f.unit) for f in figs), applied,
            workload_command(r.figures.workload) if r.figures.workload else DASH, r.run.file or DASH,
            DASH if rho is None else f"{rho:+.2f} ({what})"))
            + f'<td class="flag">{"<br>".join(escape(f) for f in r.flags) or DASH}</td></tr>')
    return "".join(out) + "</table>"


def small_multiples(series: list[Series]) -> str:
    panels = (("util", "PGDATA util", "%", 1.0, svg.PALETTE[0]),
              ("wkb", "PGDATA write", "MiB/s", 1 / KIB_PER_MIB, svg.PALETTE[2]),
              ("w_await", "PGDATA w_await", "ms", 1.0, svg.PALETTE[1]))
    drawn = [s for s in series if any(s.cols.get(k) for k, *_ in panels)]
    if not drawn:
        return ""
    x1 = max((s.x[-1] for s in drawn if s.x), default=1.0) or 1.0
    tops = {k: charts.robust_top([v for s in drawn for v in _scaled(s.col(k), f)]) for k, _, _, f, _ in panels}
    out = ["<h2>PGDATA over time, per run</h2><p class=muted>Seconds from the workload's start; every run on the "
           "same scales (where a few peaks would flatten every other run, they are cut at the top and the "
           "chart says so); grey bands: checkpoints, from start to end.</p>"]
    for s in drawn:
        r = s.result
        flags = f' <span class="flag">⚑ {escape("; ".join(r.flags))}</span>' if r.flags else ""
        out.append(f'<p class="run"><b>run {r.run.index}</b> {escape(r.run.label)} · repeat {r.run.repeat}'
                   f'{" · " + escape(s.pgdata) if s.pgdata else ""}{flags}</p><div class="grid3">')
        for k, title, unit, f, color in panels:
            pts = list(zip(s.x, _scaled(s.col(k), f)))
            top, cut = tops[k]
            above = cut and any(y is not None and y > top for _, y in pts)
            out.append(charts.mini_time(f"{title} (peaks above {svg.label(top)} cut)" if above else title, unit,
                                        pts, x1, top, color, r.figures.spans))
        out.append("</div>")
    return "".join(out)


def stacks_section(series: list[Series]) -> str:
    """Per run in run order, over time: buffers written by source and the client backends' wait
    event types, stacked, with the checkpoints as bands."""
    drawn = [s for s in series if s.x and (any(any(v for v in s.col(f"w.{src}")) for src in M.WRITE_SOURCES)
                                           or s.waits)]
    if not drawn:
        return ""
    x1 = max((s.x[-1] for s in drawn if s.x), default=1.0) or 1.0
    out = ["<h2>Writes by source and wait events over time, per run</h2><p class=muted>Buffers written per second "
           "by each source, stacked; client backends sampled in each wait event type every tick (CPU: active, "
           "not waiting), stacked; grey bands: checkpoints.</p>"]
    for s in drawn:
        r = s.result
        writes = [(src, s.col(f"w.{src}"), svg.PALETTE[i]) for i, src in enumerate(M.WRITE_SOURCES)]
        waits = [(name, col, svg.PALETTE[i % len(svg.PALETTE)]) for i, (name, col) in enumerate(s.waits.items())]
        out.append(f'<p class="run"><b>run {r.run.index}</b> {escape(r.run.label)} · repeat {r.run.repeat}</p>'
                   '<div class="grid3">'
                   + charts.stacked_time("buffers written", "buffers/s", s.x, writes, x1, r.figures.spans)
                   + (charts.stacked_time("wait events", "backends", s.waits_x, waits, x1, r.figures.spans)
                      if waits else "") + "</div>")
    return "".join(out)


def cdf_section(res: Results, series: list[Series]) -> str:
    """One curve per setting combination: the transactions of all its repeats."""
    found = []
    for i, row in enumerate(res.rows):
        merged = LatencyHistogram()
        for s in series:
            if s.result.arm == row.arm and s.hist.count:
                merged.merge(s.hist.buckets)
                if s.hist.max_ms is not None:
                    merged.max_ms = max(merged.max_ms or 0.0, s.hist.max_ms)
        d = latency_cdf.from_histogram(merged)
        if d is not None:
            found.append((f"{row.label} ({merged.count:,} transactions)", d, report.colour(i), False))
    return report.cdf_section(found, "Latency distribution per setting", "Share of transactions at or below a "
                              "latency, all repeats of a setting together (their per-transaction histograms, within "
                              "0.5 %).")


def heat_maps(res: Results) -> str:
    sweep = res.plan.varied()  # the fixed settings are the plan's, not the grid's
    if len(sweep) < 2 or any(len(set(v)) < len(v) for v in sweep.values()):
        return ""  # one dimension, or a value given twice (A vs A): no grid
    *rest, (y_name, y_values), (x_name, x_values) = sweep.items()  # the last two: the grid; one per other value
    shown = {f.key: f for f in res.shown()}
    out = []
    for key in [f.key for f in picked(res)] or HEAT_FIGURES:
        if key not in shown:
            continue
        fig = shown[key]
        for fixed in itertools.product(*(vals for _, vals in rest)):
            at = dict(zip((n for n, _ in rest), fixed))
            rows = [r for r in res.rows if all(r.settings.get(n) == v for n, v in at.items())]
            cells = {(r.settings[y_name], r.settings[x_name]): r.stats[key].mean for r in rows}
            where = "".join(f", {n}={v}" for n, v in at.items())
            out.append(charts.heat_map(f"{fig.label}{where}, mean of repeats", fig.unit, x_name, x_values, y_name,
                                       y_values, cells, lambda v, u=fig.unit: number(v, u)))
    if not out:
        return ""
    return ("<h2>The grid</h2><p class=muted>Each cell: the mean across repeats; light is the lowest value, dark "
            "the highest.</p>" + "".join(out))


def writeback_r(s: Series) -> tuple[float | None, str]:
    """Pearson's r between Writeback and the tick's p99 latency (its mean latency without p99)."""
    what = "p99" if any(v is not None for v in s.col("p99")) else "mean"
    return charts.correlation(s.col("writeback"), s.col(what)), what


def writeback_section(series: list[Series]) -> str:
    drawn = [s for s in series if any(v is not None for v in s.col("writeback"))
             and any(v is not None for v in s.col("p99") + s.col("mean"))]
    if not drawn:
        return ""
    x_top = charts.y_top([v / KIB_PER_MIB for s in drawn for v in s.col("writeback") if v is not None])
    out = ["<h2>Writeback against latency, per run</h2><p class=muted>One dot per tick: the kernel's Writeback "
           "(MiB) and the latency of the tick's transactions (p99; the mean where no p99 was recorded); r is "
           "Pearson's correlation over the run.</p><div class=scatters>"]
    for s in drawn:
        rho, what = writeback_r(s)
        ys = s.col(what)
        r_text = DASH if rho is None else f"{rho:+.2f}"
        title = f"run {s.result.run.index}: r = {r_text}"
        out.append("<figure>" + charts.scatter(title, "Writeback MiB", f"{what} ms",
                                               _scaled(s.col("writeback"), 1 / KIB_PER_MIB), ys, x_top,
                                               charts.y_top(ys), svg.PALETTE[0])
                   + f"<figcaption>{escape(s.result.run.label)} · repeat {s.result.run.repeat}</figcaption></figure>")
    return "".join(out) + "</div>"


# --- the page -----------------------------------------------------------------------------------

def page(res: Results, findings: str = "") -> str:
    series = load_series(res)
    title = f"pgio-tui experiment: {res.folder.resolve().name}"
    flags = flag_lines(res)
    body = [STYLE, f"<h1>{escape(title)}</h1>", findings, plan_section(res), glance(res, HEADLINE), glance(res),
            ("<h2>Flags</h2><ul>" + "".join(f'<li class="flag">{escape(f)}</li>' for f in flags) + "</ul>")
            if flags else "",
            "<h2>Results</h2><p class=muted>Per setting combination: the mean of its repeats and the 95 % "
            "t-interval of that mean; the change against the baseline is <b>changed</b> when Welch's interval "
            "excludes 0 <i>and</i> it is larger than the noise floor (what two baseline repeats differ by: as a ratio "
            "for a figure above 0); <i>detectable</i>: the smallest change these repeats could call changed. "
            "Latency percentiles are of every transaction of a run; statements are pg_stat_statements' "
            "execution times (docs/experiments.md).</p>", results_table(res), statements_section(res),
            heat_maps(res), picked_section(res, series), cdf_section(res, series), small_multiples(series),
            stacks_section(series),
            writeback_section(series),
            "<h2>Runs, in run order</h2>", runs_table(res, series)]
    if res.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in res.notes) + "</ul>")
    return report.page(title, body)
