"""A Comparison as text: a rich table for the terminal, markdown, CSV and JSON; and the one way
changes and intervals are written (the HTML report uses the same functions; numbers: pgio_tui.format)."""

from __future__ import annotations

import csv
import io
import json
import math

from pgio_tui.analysis.align import ORIGIN
from pgio_tui.analysis.compare import Comparison, Row
from pgio_tui.analysis.noise import Judgement
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui.analysis.summary import device_labels
from pgio_tui.analysis.summary_model import Summary
from pgio_tui.format import COUNT_UNITS, DASH, number
from pgio_tui.safe_text import csv_cell, markdown_cell, plain_text

FORMATS = ("table", "markdown", "csv", "json")
COLUMNS = ("metric", "unit", "A", "B", "change", "95 % interval", "verdict")


# --- numbers ------------------------------------------------------------------------------------

def _pct(p: float) -> str:
    return f"{round(p, 1) + 0.0:+.1f}"  # + 0.0: no "-0.0"


def percent(p: float | None) -> str:
    return DASH if p is None else f"{_pct(p)} %"


def interval(j: Judgement, unit: str = "") -> str:
    """The 95 % interval of the change in % of A; of the difference itself when A is 0."""
    if j.low_pct is not None and j.high_pct is not None:
        return f"{_pct(j.low_pct)} … {_pct(j.high_pct)} %"
    if j.low is not None and j.high is not None:
        lo, hi = (round(j.low), round(j.high)) if unit in COUNT_UNITS else (j.low, j.high)
        return f"Δ {number(lo, unit)} … {number(hi, unit)}"
    return j.why


def change(r: Row) -> str:
    if r.change_pct is not None:
        return percent(r.change_pct)
    if r.a is not None and r.b is not None and r.a == 0 and r.b != 0:
        return "new"
    return DASH


def cells(r: Row) -> tuple[str, ...]:
    """The row as the COLUMNS every text format shows."""
    return (r.name, r.unit, number(r.a, r.unit), number(r.b, r.unit), change(r), interval(r.judgement, r.unit),
            r.verdict)


def window_text(s: Summary) -> str:
    w = s.window
    ticks = f"ticks {w.start_tick}-{w.end_tick}" if w.start_tick is not None else "no ticks"
    return f"{w.length:.0f} s from the {ORIGIN[w.align]} ({ticks})"


def header_rows(c: Comparison) -> list[tuple[str, str, str]]:
    """(what, A, B) lines that say which runs are compared, over which stretch."""
    def dev(s: Summary) -> str:
        return ", ".join(f"{role} {d}" for role, d in device_labels(s.role_devices).items()) or DASH
    return [
        ("file", c.a.path.name, c.b.path.name),
        ("host", machine_host(c.a.meta) or DASH, machine_host(c.b.meta) or DASH),
        ("server", str(c.a.meta.get("server_version", DASH)), str(c.b.meta.get("server_version", DASH))),
        ("window", window_text(c.a), window_text(c.b)),
        ("devices", dev(c.a), dev(c.b)),
    ]


# --- markdown -----------------------------------------------------------------------------------

_md = markdown_cell


def markdown(c: Comparison) -> str:
    out = ["# pgio-tui diff", "", f"Aligned on: {c.align}. Verdict: *changed* when the 95 % block-bootstrap "
           "interval of B − A excludes 0, *noise* when it does not (see docs/diff.md).", "",
           "| | A | B |", "|---|---|---|"]
    out += [f"| {k} | {_md(a)} | {_md(b)} |" for k, a, b in header_rows(c)]
    for group, rows in c.groups().items():
        out += ["", f"## {_md(group)}", "", "| " + " | ".join(COLUMNS) + " |", "|---|---|---:|---:|---:|---|---|"]
        out += ["| " + " | ".join(_md(x) for x in cells(r)) + " |" for r in rows]
    out += ["", "## settings that differ", ""]
    if c.settings:
        out += ["| setting | kind | A | B |", "|---|---|---|---|"]
        out += [f"| {_md(s.name)} | {_md(s.category)} | {_md(s.a or DASH)} | {_md(s.b or DASH)} |" for s in c.settings]
    else:
        out.append("none")
    out += ["", "## machine", ""]
    if c.machine:
        out += ["| fact | A | B |", "|---|---|---|"]
        out += [f"| {_md(s.name)} | {_md(s.a or DASH)} | {_md(s.b or DASH)} |" for s in c.machine]
    else:
        out.append(f"same machine ({_md(machine_host(c.a.meta) or '?')})")
    if c.notes:
        out += ["", "## notes", ""] + [f"- {_md(n)}" for n in c.notes]
    return "\n".join(out) + "\n"


# --- CSV / JSON ---------------------------------------------------------------------------------

CSV_HEADER = ("group", "name", "unit", "a", "b", "change_pct", "ci_low", "ci_high", "ci_low_pct", "ci_high_pct",
              "verdict", "note")


def _raw(v) -> str:
    return "" if v is None else repr(round(v, 6))


def csv_text(c: Comparison) -> str:
    """One line per statistic, then one per differing setting (group setting.<kind> / machine).
    Every cell goes through csv_cell: recorded names and values are untrusted text."""
    rows = [CSV_HEADER]
    for r in c.rows:
        j = r.judgement
        rows.append((r.group, r.name, r.unit, _raw(r.a), _raw(r.b), _raw(r.change_pct), _raw(j.low), _raw(j.high),
                     _raw(j.low_pct), _raw(j.high_pct), r.verdict, r.note))
    blank = ("",) * (len(CSV_HEADER) - 5)
    rows += [(f"setting.{s.category}", s.name, "", s.a or "", s.b or "", *blank) for s in c.settings]
    rows += [("machine", s.name, "", s.a or "", s.b or "", *blank) for s in c.machine]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([map(csv_cell, row) for row in rows])
    return buf.getvalue()


def json_text(c: Comparison) -> str:
    """Strict JSON: a non-finite number is null, never Infinity or NaN."""
    return json.dumps(_finite(c.to_dict()), indent=2, default=str, allow_nan=False) + "\n"


def _finite(v):
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


# --- rich table ---------------------------------------------------------------------------------

def rich_renderables(c: Comparison) -> list:
    """Tables for a terminal: the runs, the statistics by group, the settings that differ."""
    from rich import box
    from rich.table import Table

    Text = plain_text  # recorded text is shown as text, never parsed as markup

    runs = Table(box=box.SIMPLE_HEAD, title=f"pgio-tui diff (aligned on {c.align})", title_justify="left")
    for col in ("", "A", "B"):
        runs.add_column(col)
    for row in header_rows(c):
        runs.add_row(*map(Text, row))

    stats = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col, justify in zip(COLUMNS, ("left", "left", "right", "right", "right", "right", "left")):
        stats.add_column(col, justify=justify)
    for group, rows in c.groups().items():
        stats.add_row(Text(group, style="bold"), end_section=False)
        for r in rows:
            name, unit, a, b, ch, ci, verdict = cells(r)
            style = "bold" if verdict == "changed" else ("dim" if verdict == "noise" else "")
            stats.add_row(Text("  " + name), Text(unit), Text(a), Text(b), Text(ch, style=style), Text(ci),
                          Text(verdict, style="bold yellow" if verdict == "changed" else "dim"))
        stats.add_section()
    out = [runs, stats]
    sett = Table(box=box.SIMPLE_HEAD, title="settings that differ", title_justify="left")
    for col in ("setting", "kind", "A", "B"):
        sett.add_column(col)
    for s in c.settings + c.machine:
        sett.add_row(Text(s.name), Text(s.category), Text(s.a or DASH), Text(s.b or DASH))
    if not c.settings and not c.machine:
        sett.add_row("none", "", "", "")
    out.append(sett)
    if not c.machine:
        out.append(Text(f"same machine ({machine_host(c.a.meta) or '?'})", style="dim"))
    out += [Text(f"note: {n}", style="dim") for n in c.notes]
    out.append(Text("verdict: changed = the 95 % block-bootstrap interval of B − A excludes 0 (docs/diff.md)",
                    style="dim"))
    return out


def render(c: Comparison, fmt: str, width: int | None = None) -> str:
    """The comparison as text in `fmt` (one of FORMATS)."""
    return render_with(c, fmt, width or 120, markdown=markdown, csv_text=csv_text, renderables=rich_renderables)


def render_with(c, fmt: str, width: int, *, markdown, csv_text, renderables) -> str:
    """`c` in `fmt` by the given writers (a two-run comparison here, N runs in formats_many)."""
    if fmt == "markdown":
        return markdown(c)
    if fmt == "csv":
        return csv_text(c)
    if fmt == "json":
        return json_text(c)
    if fmt == "table":
        from rich.console import Console
        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=False, color_system=None)
        for r in renderables(c):
            console.print(r)
        return buf.getvalue()
    raise ValueError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
