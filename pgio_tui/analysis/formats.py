"""A Comparison as text: a rich table for the terminal, markdown, CSV and JSON; and the one way
values, changes, intervals and verdicts are written (the HTML report and the TUI diff screen use
the same functions; numbers: pgio_tui.format).

Two runs get a column each for the change, its 95 % interval and the verdict; more runs get one
column per run holding its value and its change against the baseline (A) with the verdict's code.
Runs of an experiment are named by the settings that differ (their values, and the repeat).
CSV and JSON keep their two shapes: two runs side by side (a, b), N runs one value per run.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import TYPE_CHECKING, Literal

from pgio_tui.analysis.align import ORIGIN
from pgio_tui.analysis.compare import Comparison, Row, letter
from pgio_tui.analysis.noise import MIN_BLOCKS, Judgement
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui.analysis.summary import device_labels
from pgio_tui.analysis.summary_model import Summary
from pgio_tui.format import COUNT_UNITS, DASH, number
from pgio_tui.safe_text import csv_cell, markdown_cell, plain_text

if TYPE_CHECKING:
    from rich.console import RenderableType

FORMATS = ("table", "markdown", "csv", "json")
CHANGED, NOISE = "changed", "noise"
VERDICT_LEGEND = (f"verdict: {CHANGED} = the 95 % block-bootstrap interval of B − A excludes 0, {NOISE} = it "
                  f"does not; ?A, ?B, ?AB: too few independent blocks in that run to judge (under {MIN_BLOCKS}); "
                  "blank: not judged (percentiles, maxima, counts). docs/diff.md")
MAX_WIDTH = 200  # a runs table wider than this wraps its windows and devices
NAMED = ("run", "what", "file")  # the runs table's columns that tell runs apart: never cut
MARKS = {CHANGED: "*"}  # a change's mark in a many-run cell; `?` as the verdict code says


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
    return DASH if j.why else ""


def change(r: Row, i: int = 1) -> str:
    """Run i's change against the baseline."""
    p = r.change_pct_of(i)
    if p is not None:
        return percent(p)
    a, b = r.values[0], r.values[i]
    if a is not None and b is not None and a == 0 and b != 0:
        return "new"
    return DASH


def verdict(r: Row, i: int, letters: list[str]) -> str:
    """Run i's verdict as a short code (VERDICT_LEGEND): changed, noise, ?A / ?B / ?AB, or blank."""
    j = r.judgement_of(i)
    if j.few:
        return "?" + "".join(letters[0] if side == "A" else letters[i] for side in j.few)
    return r.verdict_of(i)


def cells(r: Row) -> tuple[str, ...]:
    """A two-run row as the columns every text format shows (metric, unit, A, B, change, 95 %
    interval, verdict)."""
    return (r.name, r.unit, number(r.a, r.unit), number(r.b, r.unit), change(r), interval(r.judgement, r.unit),
            verdict(r, 1, ["A", "B"]))


def cell(r: Row, i: int, letters: list[str]) -> str:
    """Run i's value in a many-run table, and for a run that is not the baseline its change and
    verdict code (`*` changed, `?…` not judged for too few blocks)."""
    value = number(r.values[i], r.unit)
    if i == 0:
        return value
    ch, v = change(r, i), verdict(r, i, letters)
    mark = MARKS.get(v, " " + v if v.startswith("?") else "")
    return f"{value} ({ch}{mark})" if ch != DASH else value


# --- runs and their names -----------------------------------------------------------------------

def window_text(s: Summary) -> str:
    w = s.window
    ticks = f"ticks {w.start_tick}-{w.end_tick}" if w.start_tick is not None else "no ticks"
    return f"{w.length:.0f} s from the {ORIGIN[w.align]} ({ticks})"


_SETTING = re.compile(r"(?<!\S)[\w.]+=")


def run_names(c: Comparison) -> list[str]:
    """A column name per run: its letter, and for an experiment's runs (labels `name=value … rN`)
    the values that tell them apart, so `diff DIR`'s columns say which setting each run had."""
    out = []
    for i, (letter_, label) in enumerate(zip(c.letters, c.labels)):
        short = _SETTING.sub("", label) if label != c.summaries[i].path.name else ""
        out.append(f"{letter_}: {short}" if short and short != label else letter_)
    return out


def run_facts(ss: list[Summary], labels: list[str]) -> list[tuple[str, list[str]]]:
    """(fact, value per run): what each run is, over which stretch (the runs table, and the TUI's)."""
    def dev(s: Summary) -> str:
        return ", ".join(f"{role} {d}" for role, d in device_labels(s.role_devices).items()) or DASH
    facts = [("file", [s.path.name for s in ss])]
    if any(label != s.path.name for label, s in zip(labels, ss)):  # an experiment's runs: their settings
        facts.insert(0, ("what", list(labels)))
    return facts + [
        ("host", [machine_host(s.meta) or DASH for s in ss]),
        ("server", [str(s.meta.get("server_version", DASH)) for s in ss]),
        ("window", [window_text(s) for s in ss]),
        ("devices", [dev(s) for s in ss]),
    ]


def header_rows(c: Comparison) -> list[tuple[str, ...]]:
    """(fact, value per run) lines that say which runs are compared, over which stretch."""
    return [(what, *values) for what, values in run_facts(c.summaries, c.labels)]


def run_lines(ss: list[Summary], labels: list[str]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The runs table: its columns (run, then the facts) and a line per run, the baseline first."""
    facts = run_facts(ss, labels)
    lines = [(letter(i) + (" (baseline)" if i == 0 and len(ss) > 1 else ""), *(v[i] for _, v in facts))
             for i in range(len(ss))]
    return ("run", *(what for what, _ in facts)), lines


def title(c: Comparison) -> str:
    n = len(c.summaries)
    return f"pgio-tui diff: {n} runs against A (aligned on {c.align})" if n > 2 else \
        f"pgio-tui diff (aligned on {c.align})"


Justify = Literal["left", "right"]  # a column's, as rich's tables take it


def stats_columns(c: Comparison) -> list[tuple[str, Justify]]:
    """(name, justify) of the statistics table's columns."""
    if len(c.summaries) == 2:
        return [("metric", "left"), ("unit", "left"), ("A", "right"), ("B", "right"), ("change", "right"),
                ("95 % interval", "right"), ("verdict", "left")]
    return [("metric", "left"), ("unit", "left"), *((name, "right") for name in run_names(c))]


def stats_cells(c: Comparison, r: Row) -> list[str]:
    if len(c.summaries) == 2:
        return list(cells(r))
    return [r.name, r.unit, *(cell(r, i, c.letters) for i in range(len(c.summaries)))]


def legend(c: Comparison) -> str:
    if len(c.summaries) == 2:
        return VERDICT_LEGEND
    return ("A is the baseline; in brackets a run's change against it and its verdict: * changed (the 95 % "
            "block-bootstrap interval of the change excludes 0); ?A, ?C …: too few independent blocks in that run "
            f"to judge (under {MIN_BLOCKS}); no mark: within noise, or not judged. docs/diff.md")


# --- markdown -----------------------------------------------------------------------------------

_md = markdown_cell


def _md_row(cells_: list[str] | tuple[str, ...]) -> str:
    return "| " + " | ".join(_md(x) for x in cells_) + " |"


def markdown(c: Comparison) -> str:
    cols = stats_columns(c)
    head, lines = run_lines(c.summaries, c.labels)
    out = [f"# {title(c)}", "", _md(legend(c)), "", _md_row(head), "|" + "---|" * len(head)]
    out += [_md_row(line) for line in lines]
    for group, rows in c.groups().items():
        out += ["", f"## {_md(group)}", "", _md_row([name for name, _ in cols]),
                "|" + "".join("---:|" if j == "right" else "---|" for _, j in cols)]
        out += [_md_row(stats_cells(c, r)) for r in rows]
    out += ["", "## settings that differ", ""]
    if c.settings:
        out += [_md_row(["setting", "kind", *c.letters]), "|---|---|" + "---|" * len(c.letters)]
        out += [_md_row([s.name, s.category, *(v or DASH for v in s.values)]) for s in c.settings]
    else:
        out.append("none")
    out += ["", "## machine", ""]
    if c.machine:
        out += [_md_row(["fact", *c.letters]), "|---|" + "---|" * len(c.letters)]
        out += [_md_row([s.name, *(v or DASH for v in s.values)]) for s in c.machine]
    else:
        out.append(f"same machine ({_md(machine_host(c.a.meta) or '?')})")
    if c.notes:
        out += ["", "## notes", ""] + [f"- {_md(n)}" for n in c.notes]
    return "\n".join(out) + "\n"


# --- CSV / JSON ---------------------------------------------------------------------------------

CSV_HEADER = ("group", "name", "unit", "a", "b", "change_pct", "ci_low", "ci_high", "ci_low_pct", "ci_high_pct",
              "verdict", "note")
CSV_HEADER_MANY = ("group", "name", "unit", "run", "label", "file", "baseline", "value", "baseline_value",
                   "change_pct", "ci_low", "ci_high", "ci_low_pct", "ci_high_pct", "verdict", "note")


def _raw(v) -> str:
    return "" if v is None else repr(round(v, 6))


def csv_text(c: Comparison) -> str:
    """Two runs: one line per statistic (a, b), then one per differing setting (group
    setting.<kind> / machine). N runs: one line per statistic and run (the baseline's line has no
    change), then one per differing setting and run. Every cell goes through csv_cell: recorded
    names and values are untrusted text."""
    def ci(r: Row, i: int) -> tuple[str, ...]:
        j = r.judgement_of(i)
        return (_raw(r.change_pct_of(i)), _raw(j.low), _raw(j.high), _raw(j.low_pct), _raw(j.high_pct),
                r.verdict_of(i))
    rows: list[tuple] = []
    if len(c.summaries) == 2:
        rows.append(CSV_HEADER)
        rows += [(r.group, r.name, r.unit, _raw(r.a), _raw(r.b), *ci(r, 1), r.note) for r in c.rows]
        blank = ("",) * (len(CSV_HEADER) - 5)
        rows += [(f"setting.{s.category}", s.name, "", s.a or "", s.b or "", *blank) for s in c.settings]
        rows += [("machine", s.name, "", s.a or "", s.b or "", *blank) for s in c.machine]
    else:
        rows.append(CSV_HEADER_MANY)
        runs = [(c.letters[i], c.labels[i], s.path.name, "yes" if i == 0 else "") for i, s in enumerate(c.summaries)]
        for r in c.rows:
            rows += [(r.group, r.name, r.unit, *runs[i], _raw(r.values[i]), _raw(r.values[0]),
                      *(ci(r, i) if i else ("",) * 6), r.note) for i in range(len(runs))]
        blank = ("",) * 7
        for s in c.settings + c.machine:
            group = "machine" if s.category == "machine" else f"setting.{s.category}"
            rows += [(group, s.name, "", *runs[i], s.values[i] or "", *blank) for i in range(len(runs))]
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

def rich_renderables(c: Comparison) -> list[RenderableType]:
    """Tables for a terminal: the runs, the statistics by group, the settings that differ."""
    from rich import box
    from rich.table import Table

    Text = plain_text  # recorded text is shown as text, never parsed as markup
    head, lines = run_lines(c.summaries, c.labels)
    runs = Table(box=box.SIMPLE_HEAD, title=title(c), title_justify="left")
    for col in head:
        runs.add_column(col, no_wrap=col in NAMED)
    for line in lines:
        runs.add_row(*map(Text, line))

    stats = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col, justify in stats_columns(c):
        stats.add_column(col, justify=justify)
    two = len(c.summaries) == 2
    for group, rows in c.groups().items():
        stats.add_row(Text(group, style="bold"), end_section=False)
        for r in rows:
            texts = stats_cells(c, r)
            if two:
                v = texts[-1]
                style = "bold" if v == CHANGED else ("dim" if v == NOISE else "")
                row_cells = [Text(x) for x in texts[:4]] + [Text(texts[4], style=style), Text(texts[5]),
                                                            Text(v, style="bold yellow" if v == CHANGED else "dim")]
            else:
                row_cells = [Text(texts[0]), Text(texts[1])] + [
                    Text(x, style="bold yellow" if i and r.verdict_of(i) == CHANGED else "")
                    for i, x in enumerate(texts[2:])]
            row_cells[0] = Text("  " + r.name)
            stats.add_row(*row_cells)
        stats.add_section()
    out: list[RenderableType] = [runs, stats]
    sett = Table(box=box.SIMPLE_HEAD, title="settings that differ", title_justify="left")
    for col in ("setting", "kind", *c.letters):
        sett.add_column(col)
    for s in c.settings + c.machine:
        sett.add_row(Text(s.name), Text(s.category), *(Text(v or DASH) for v in s.values))
    if not c.settings and not c.machine:
        sett.add_row("none", "", *("" for _ in c.letters))
    out.append(sett)
    if not c.machine:
        out.append(Text(f"same machine ({machine_host(c.a.meta) or '?'})", style="dim"))
    out += [Text(f"note: {n}", style="dim") for n in c.notes]
    out.append(Text(legend(c), style="dim"))
    return out


def table_width(c: Comparison) -> int:
    """Wide enough for every column of the statistics whole (names indented by 2), for the runs'
    names and files, and for the whole runs table up to MAX_WIDTH (a terminal narrower than this
    wraps the other cells)."""
    cols = [name for name, _ in stats_columns(c)]
    widths = [len(x) for x in cols]
    for r in c.rows:
        for k, x in enumerate(stats_cells(c, r)):
            widths[k] = max(widths[k], len(x) + (2 if k == 0 else 0))
    head, lines = run_lines(c.summaries, c.labels)
    runs = [max(len(line[k]) for line in lines) + 3 for k in range(len(head))]
    named = sum(w for w, col in zip(runs, head) if col in NAMED)
    return max(120, sum(w + 3 for w in widths), named + 60, min(sum(runs) + 4, MAX_WIDTH))


def render(c: Comparison, fmt: str, width: int | None = None) -> str:
    """The comparison as text in `fmt` (one of FORMATS)."""
    if fmt == "markdown":
        return markdown(c)
    if fmt == "csv":
        return csv_text(c)
    if fmt == "json":
        return json_text(c)
    if fmt == "table":
        from rich.console import Console
        buf = io.StringIO()
        console = Console(file=buf, width=width or table_width(c), force_terminal=False, color_system=None)
        for r in rich_renderables(c):
            console.print(r)
        return buf.getvalue()
    raise ValueError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
