"""`experiment report` as text: one line per figure and setting combination, with the mean and
95 % interval across repeats, the change against the baseline, the noise floor and the verdict."""

from __future__ import annotations

import csv
import io

from pgio_tui.analysis.formats import DASH, number, percent
from pgio_tui.experiments.results import FIGURES, Row, as_json
from pgio_tui.safe_text import csv_cell, markdown_cell, printable

COLUMNS = ("figure", "unit", "settings", "n", "mean", "95 % interval", "change", "noise floor", "verdict")


def _lines(rows: list[Row], baseline: dict[str, str]) -> list[tuple]:
    out = []
    for key, label, unit in FIGURES:
        if all(r.stats[key].mean is None for r in rows):
            continue  # a figure no run has (no PGDATA device, a source that never wrote)
        for r in rows:
            st = r.stats[key]
            ci = DASH if st.low is None else f"{number(st.low, unit)} … {number(st.high, unit)}"
            ch = r.changes.get(key)
            if r.settings == baseline:
                change, floor, verdict = "baseline", DASH, ""
            elif ch is None:
                change, floor, verdict = DASH, DASH, "no baseline runs"
            else:
                change, floor, verdict = percent(ch.pct), percent(ch.floor_pct).lstrip("+"), ch.verdict
            out.append((label, unit, r.label, str(st.n), number(st.mean, unit), ci, change, floor, verdict,
                        key, st, ch))
    return out


def render(rows: list[Row], baseline: dict[str, str], fmt: str) -> str:
    if fmt == "json":
        return as_json(rows, baseline)
    lines = _lines(rows, baseline)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "unit", "settings", "n", "mean", "ci95_low", "ci95_high", "change_pct",
                    "noise_floor_pct", "verdict"])
        for x in lines:
            st, ch = x[10], x[11]
            w.writerow([csv_cell(x[0]), x[1], csv_cell(x[2]), st.n, st.mean, st.low, st.high,
                        None if ch is None else ch.pct, None if ch is None else ch.floor_pct,
                        csv_cell(x[8] if ch is not None else "")])
        return buf.getvalue()
    cells = [tuple(printable(c) for c in x[:9]) for x in lines]
    if fmt == "markdown":
        head = "| " + " | ".join(COLUMNS) + " |\n|" + "|".join("---" for _ in COLUMNS) + "|\n"
        return head + "".join("| " + " | ".join(markdown_cell(c) for c in row) + " |\n" for row in cells)
    widths = [max(len(c) for c in col) for col in zip(COLUMNS, *cells)]
    fmt_row = "  ".join(f"{{:{'>' if i in (3, 4, 6, 7) else '<'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt_row.format(*row).rstrip() for row in [COLUMNS, *cells]) + "\n"
