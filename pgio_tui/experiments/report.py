"""`experiment report` as text: one line per figure and setting combination, with the mean and
95 % interval across repeats, the change against the baseline, the noise floor and the verdict;
then the runs' flags and notes (table, markdown). csv is the lines alone, json everything
(results.as_json), html the page with charts (html.py)."""

from __future__ import annotations

import csv
import io
import json

from pgio_tui.analysis.formats import DASH, number, percent
from pgio_tui.experiments.figures import HEADLINE
from pgio_tui.experiments.results import Results, as_json
from pgio_tui.safe_text import csv_cell, markdown_cell, printable

COLUMNS = ("figure", "unit", "settings", "n", "mean", "95 % interval", "change", "noise floor", "detectable",
           "verdict")
FORMATS = ("table", "markdown", "csv", "json", "html")
_RIGHT = (3, 4, 6, 7, 8)  # columns aligned right in the table
RUN_FIGURES = 4  # headline figures in the runs table


SHOWN_UP_TO_PCT = 10_000.0  # a floor or detectable change past it reads "> 10,000 %" (JSON and CSV keep the number)


def _amount(pct: float | None, value: float | None, unit: str, bound: bool = False) -> str:
    """A change or floor in % of the baseline's mean, or in the figure's unit where that mean is 0;
    `bound`: past SHOWN_UP_TO_PCT (two repeats of a figure that varies 100× make a t-interval of
    millions of %) as "> 10,000 %", which says as much."""
    if pct is not None:
        if bound and abs(pct) > SHOWN_UP_TO_PCT:
            return f"> {SHOWN_UP_TO_PCT:,.0f} %"
        return percent(pct)
    return DASH if value is None else f"{'+' if value > 0 else ''}{number(value, unit)} {unit}"


def lines(res: Results) -> list[tuple]:
    """(figure, unit, settings, n, mean, interval, change, floor, detectable, verdict) as text, then
    the Figure, the Interval and the Change (None for the baseline) for the csv and the html."""
    out = []
    for fig in res.shown():
        for r in res.rows:
            st = r.stats[fig.key]
            ci = DASH if st.low is None else f"{number(st.low, fig.unit)} … {number(st.high, fig.unit)}"
            ch = r.changes.get(fig.key)
            if r.baseline:
                change, floor, least, verdict = "baseline", DASH, DASH, ""
            elif ch is None:
                change, floor, least, verdict = DASH, DASH, DASH, "no baseline runs"
            else:
                change = _amount(ch.pct, ch.diff, fig.unit)
                floor = _amount(ch.floor_pct, ch.floor, fig.unit, bound=True).lstrip("+")
                least = _amount(ch.detectable_pct, ch.detectable, fig.unit, bound=True).lstrip("+")
                if ch.detectable is None:
                    least = DASH
                elif not least.startswith(">"):
                    least = ("-" if ch.as_ratio and (ch.diff or 0) < 0 else "+" if ch.as_ratio else "±") + least
                verdict = ch.verdict
            out.append((fig.label, fig.unit, r.label, str(st.n), number(st.mean, fig.unit), ci, change, floor,
                        least, verdict, fig, st, ch))
    return out


def flag_lines(res: Results) -> list[str]:
    """One line per flagged run: `run 3 (name=value, repeat 1): what happened; what else`; then the
    figures that drift with run order."""
    return [f"run {r.run.index} ({res.plan.label_of(r.run.settings)}, repeat {r.run.repeat}): {'; '.join(r.flags)}"
            for r in res.runs
            if r.flags] + res.drift


def run_lines(res: Results) -> list[str]:
    """The runs in run order, each with its headline figures and its flags."""
    shown = {f.key: f for f in res.present()}
    figs = [shown[k] for k in HEADLINE if k in shown][:RUN_FIGURES]
    out = []
    for r in res.runs:
        vals = " · ".join(f"{f.label} {number(r.figures.values.get(f.key), f.unit)} {f.unit}" for f in figs)
        flags = f"  ⚑ {'; '.join(r.flags)}" if r.flags else ""
        out.append(f"run {r.run.index:>3}  {res.plan.label_of(r.run.settings)} r{r.run.repeat}  {vals}{flags}")
    return out


def render(res: Results, fmt: str) -> str:
    from pgio_tui.experiments.findings import collect
    found = collect(res)
    if fmt == "json":
        doc = json.loads(as_json(res))
        doc["findings"], doc["findings_that_differ"] = found.to_list(), [d.to_dict() for d in found.differences]
        return json.dumps(doc, indent=2) + "\n"
    if fmt == "html":
        from pgio_tui.experiments.html import page
        return page(res, found.html())
    rows = lines(res)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "unit", "settings", "n", "mean", "ci95_low", "ci95_high", "change_pct",
                    "noise_floor_pct", "verdict", "name", "detectable_pct"])
        for x in rows:
            fig, st, ch = x[10], x[11], x[12]
            w.writerow([csv_cell(x[0]), x[1], csv_cell(x[2]), st.n, st.mean, st.low, st.high,
                        None if ch is None else ch.pct, None if ch is None else ch.floor_pct,
                        csv_cell(x[9] if ch is not None else ""), csv_cell(fig.name),
                        None if ch is None else ch.detectable_pct])
        return buf.getvalue()
    cells = [tuple(printable(c) for c in x[:10]) for x in rows]
    after = [("findings", found.lines()), ("flags", flag_lines(res)), ("runs in run order", run_lines(res)),
             ("notes", res.notes)]
    if fmt == "markdown":
        head = "| " + " | ".join(COLUMNS) + " |\n|" + "|".join("---:" if i in _RIGHT else "---"
                                                              for i in range(len(COLUMNS))) + "|\n"
        text = head + "".join("| " + " | ".join(markdown_cell(c) for c in row) + " |\n" for row in cells)
        for title, items in after:
            if items:
                text += f"\n**{title}**\n\n" + "".join(f"- {markdown_cell(i)}\n" for i in items)
        return text
    widths = [max(len(c) for c in col) for col in zip(COLUMNS, *cells)]
    fmt_row = "  ".join(f"{{:{'>' if i in _RIGHT else '<'}{w}}}" for i, w in enumerate(widths))
    text = "\n".join(fmt_row.format(*row).rstrip() for row in [COLUMNS, *cells]) + "\n"
    for title, items in after:
        if items:
            text += f"\n{title}:\n" + "".join(f"  {printable(i)}\n" for i in items)
    return text
