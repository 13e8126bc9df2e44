"""A ManyComparison (N runs against a baseline) as text: a rich table, markdown, CSV and JSON.

The table and markdown show one column per run (A, the baseline, first) with each other run's
value and change against A; a change the block bootstrap judges beyond noise is marked with `*`.
CSV is long (one line per statistic and run) and, with JSON, carries the intervals and verdicts.
"""

from __future__ import annotations

import csv
import io

from pgio_tui.analysis.compare import Row
from pgio_tui.analysis.compare_many import ManyComparison, ManyRow
from pgio_tui.analysis.formats import FORMATS, change, render_with, window_text
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui.analysis.summary import device_labels
from pgio_tui.format import DASH, number
from pgio_tui.safe_text import csv_cell, markdown_cell, plain_text

__all__ = ["FORMATS", "render", "rich_renderables"]
CHANGED = "*"
LEGEND = (f"{CHANGED} changed: the 95 % block-bootstrap interval of the run − A excludes 0 (docs/diff.md); "
          "A is the baseline, (…) the change against it")


def cell(r: ManyRow, i: int) -> str:
    """The run's value, and for a run that is not the baseline its change against it."""
    value = number(r.values[i], r.unit)
    p: Row | None = r.pairs[i]
    if p is None:
        return value
    ch = change(p)
    return f"{value} ({ch}{CHANGED if p.verdict == 'changed' else ''})" if ch != DASH else value


def run_columns(c: ManyComparison) -> tuple[str, ...]:
    """The runs table's columns: `what` only when a run is named by more than its file (an
    experiment's runs are named by their settings)."""
    named = any(label != s.path.name for label, s in zip(c.labels, c.summaries))
    return RUN_COLUMNS if named else tuple(x for x in RUN_COLUMNS if x != "what")


def run_lines(c: ManyComparison) -> list[tuple[str, ...]]:
    """(letter, label, file, host, server, window, devices) per run, the baseline first."""
    def dev(i: int) -> str:
        return ", ".join(f"{role} {d}" for role, d in device_labels(c.summaries[i].role_devices).items()) or DASH
    out = []
    for i in c.order():
        s = c.summaries[i]
        label = c.labels[i] + (" (baseline)" if i == c.baseline else "")
        line = (c.letters[i], label, s.path.name, machine_host(s.meta) or DASH,
                str(s.meta.get("server_version", DASH)), window_text(s), dev(i))
        out.append(line if len(run_columns(c)) == len(RUN_COLUMNS) else line[:1] + line[2:])
    return out


RUN_COLUMNS = ("run", "what", "file", "host", "server", "window", "devices")


def markdown(c: ManyComparison) -> str:
    md = markdown_cell
    order = c.order()
    out = [f"# pgio-tui diff: {len(order)} runs against {c.letters[c.baseline]}", "",
           f"Aligned on: {c.align}. {LEGEND}.", "",
           "| " + " | ".join(run_columns(c)) + " |", "|" + "---|" * len(run_columns(c))]
    out += ["| " + " | ".join(md(x) for x in line) + " |" for line in run_lines(c)]
    head = ["metric", "unit", *(c.letters[i] for i in order)]
    for group, rows in c.groups().items():
        out += ["", f"## {md(group)}", "", "| " + " | ".join(head) + " |",
                "|---|---|" + "---:|" * len(order)]
        out += ["| " + " | ".join([md(r.name), md(r.unit), *(md(cell(r, i)) for i in order)]) + " |" for r in rows]
    out += ["", "## settings that differ", ""]
    if c.settings:
        out += ["| setting | kind | " + " | ".join(c.letters[i] for i in order) + " |",
                "|---|---|" + "---|" * len(order)]
        out += [f"| {md(n)} | {md(cat)} | " + " | ".join(md(v[i] or DASH) for i in order) + " |"
                for cat, n, v in c.settings]
    else:
        out.append("none")
    out += ["", "## machine", ""]
    if c.machine:
        out += ["| fact | " + " | ".join(c.letters[i] for i in order) + " |", "|---|" + "---|" * len(order)]
        out += [f"| {md(n)} | " + " | ".join(md(v[i] or DASH) for i in order) + " |" for n, v in c.machine]
    else:
        out.append(f"same machine ({md(machine_host(c.summaries[0].meta) or '?')})")
    if c.notes:
        out += ["", "## notes", ""] + [f"- {md(n)}" for n in c.notes]
    return "\n".join(out) + "\n"


CSV_HEADER = ("group", "name", "unit", "run", "label", "file", "baseline", "value", "baseline_value", "change_pct",
              "ci_low", "ci_high", "ci_low_pct", "ci_high_pct", "verdict", "note")


def _raw(v) -> str:
    return "" if v is None else repr(round(v, 6))


def csv_text(c: ManyComparison) -> str:
    """Long form: one line per statistic and run (the baseline's line has no change), then one per
    differing setting and run (group setting.<kind> / machine, the value in `value`)."""
    rows: list[tuple] = [CSV_HEADER]
    order = c.order()
    for r in c.rows:
        for i in order:
            p = r.pairs[i]
            j = p.judgement if p is not None else None
            rows.append((r.group, r.name, r.unit, c.letters[i], c.labels[i], c.summaries[i].path.name,
                         "yes" if i == c.baseline else "", _raw(r.values[i]), _raw(r.values[c.baseline]),
                         _raw(p.change_pct if p else None), _raw(j and j.low), _raw(j and j.high),
                         _raw(j and j.low_pct), _raw(j and j.high_pct), p.verdict if p else "", r.note))
    blank = ("",) * 7
    for cat, name, vals in c.settings:
        rows += [(f"setting.{cat}", name, "", c.letters[i], c.labels[i], c.summaries[i].path.name,
                  "yes" if i == c.baseline else "", vals[i] or "", *blank) for i in order]
    for name, vals in c.machine:
        rows += [("machine", name, "", c.letters[i], c.labels[i], c.summaries[i].path.name,
                  "yes" if i == c.baseline else "", vals[i] or "", *blank) for i in order]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([map(csv_cell, row) for row in rows])
    return buf.getvalue()


def rich_renderables(c: ManyComparison) -> list:
    from rich import box
    from rich.table import Table

    Text = plain_text
    order = c.order()
    runs = Table(box=box.SIMPLE_HEAD, title=f"pgio-tui diff: {len(order)} runs against "
                 f"{c.letters[c.baseline]} (aligned on {c.align})", title_justify="left")
    for col in run_columns(c):
        runs.add_column(col)
    for line in run_lines(c):
        runs.add_row(*map(Text, line))
    stats = Table(box=box.SIMPLE_HEAD, show_edge=False)
    stats.add_column("metric")
    stats.add_column("unit")
    for i in order:
        stats.add_column(c.letters[i], justify="right")
    for group, rows in c.groups().items():
        stats.add_row(Text(group, style="bold"), end_section=False)
        for r in rows:
            cells = [Text(cell(r, i), style="bold yellow" if r.pairs[i] is not None and r.pairs[i].verdict == "changed"
                          else "") for i in order]
            stats.add_row(Text("  " + r.name), Text(r.unit), *cells)
        stats.add_section()
    out = [runs, stats]
    sett = Table(box=box.SIMPLE_HEAD, title="settings that differ", title_justify="left")
    for col in ("setting", "kind", *(c.letters[i] for i in order)):
        sett.add_column(col)
    for cat, name, vals in c.settings:
        sett.add_row(Text(name), Text(cat), *(Text(vals[i] or DASH) for i in order))
    for name, vals in c.machine:
        sett.add_row(Text(name), Text("machine"), *(Text(vals[i] or DASH) for i in order))
    if not c.settings and not c.machine:
        sett.add_row("none", "", *("" for _ in order))
    out.append(sett)
    if not c.machine:
        out.append(Text(f"same machine ({machine_host(c.summaries[0].meta) or '?'})", style="dim"))
    out += [Text(f"note: {n}", style="dim") for n in c.notes]
    out.append(Text(LEGEND, style="dim"))
    return out


def table_width(c: ManyComparison) -> int:
    """Wide enough for every run's column (a terminal narrower than this wraps the cells)."""
    widest = max((len(cell(r, i)) for r in c.rows for i in range(len(c.summaries))), default=8)
    return max(120, 40 + 8 + (widest + 3) * len(c.summaries))


def render(c: ManyComparison, fmt: str, width: int | None = None) -> str:
    """The N-way comparison as text in `fmt` (one of FORMATS)."""
    return render_with(c, fmt, width or table_width(c), markdown=markdown, csv_text=csv_text,
                       renderables=rich_renderables)

