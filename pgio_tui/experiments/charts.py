"""The experiment report's charts as inline SVG text (no library, no script): small time charts for
small multiples, a scatter with its correlation, a heat map of a two-setting grid.

Small charts have a viewBox of their own size, so their text stays readable when three share a
row; lines are decimated and drawn by analysis/svg.py's helpers. Every label is escaped.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pgio_tui.analysis.svg import decimate, label, nice_step, path_data, time_step
from pgio_tui.format import clock
from pgio_tui.safe_text import html_text as escape
from pgio_tui.stats import percentile

MINI_W, MINI_H = 320, 96
M_LEFT, M_RIGHT, M_TOP, M_BOTTOM = 38, 8, 16, 14
SCATTER_W, SCATTER_H = 320, 200
HEAT_CELL_W, HEAT_CELL_H = 96, 34
LOW, HIGH = (0xf7, 0xfb, 0xff), (0x08, 0x45, 0x94)  # heat map: light for the lowest value, dark for the highest

Point = tuple[float, float | None]


def _axis_y(top: float, sy, left: int, right: int) -> list[str]:
    step = nice_step(top or 1.0, 3)
    out, v = [], 0.0
    while v <= top + 1e-9:
        y = sy(v)
        out.append(f'<line x1="{left}" x2="{right}" y1="{y:.0f}" y2="{y:.0f}" class="grid"/>'
                   f'<text x="{left - 3}" y="{y + 3:.0f}" class="yl">{label(v)}</text>')
        v += step
    return out


def y_top(values: Sequence[float | None]) -> float:
    """A rounded top for a y axis that holds every value (1 when there is none)."""
    top = max((v for v in values if v is not None), default=0.0) or 1.0
    step = nice_step(top, 3)
    return step * max(1, math.ceil(top / step))


def robust_top(values: Sequence[float | None]) -> tuple[float, bool]:
    """A shared y top for small multiples: past every value, unless a few spikes (above twice the
    99th percentile) would flatten every other chart; then the 99th percentile's top, and True (the
    spikes are drawn at the edge and the title says so)."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return 1.0, False
    p99 = percentile(xs, 99) or 0.0
    if xs[-1] <= 2 * p99 or p99 <= 0:
        return y_top(xs), False
    return y_top([p99 * 1.1]), True


Band = tuple[float, float, str]  # (x start, x end, what): a checkpoint, drawn behind the lines


def _bands(bands: Sequence[Band], sx, plot_h: int) -> list[str]:
    """Checkpoint start-to-end bands, shaded behind a time chart, each titled with its kind."""
    out = []
    for a, b, kind in bands:
        x0, x1 = sx(a), sx(b)
        out.append(f'<rect x="{x0:.0f}" y="{M_TOP}" width="{max(1.0, x1 - x0):.0f}" height="{plot_h}" '
                   f'fill="#e6e6e6"><title>{escape(f"checkpoint ({kind})" if kind else "checkpoint")}</title></rect>')
    return out


def _frame(title: str, top: float, span: float, bands: Sequence[Band]):
    """The parts every small time chart starts with (its bands, y axis and time axis) and its scales."""
    plot_w, plot_h = MINI_W - M_LEFT - M_RIGHT, MINI_H - M_TOP - M_BOTTOM

    def sx(x: float) -> float:
        return M_LEFT + min(max(x, 0.0), span) / span * plot_w

    def sy(y: float) -> float:
        return M_TOP + plot_h - min(max(y, 0.0), top) / top * plot_h

    parts = [f'<svg class="mini" viewBox="0 0 {MINI_W} {MINI_H}" role="img" aria-label="{escape(title)}">']
    parts += _bands(bands, sx, plot_h)
    parts += _axis_y(top, sy, M_LEFT, MINI_W - M_RIGHT)
    step = time_step(span)
    if span / step > 4:
        step *= 2
    t = 0.0
    while t <= span + 1e-9:
        parts.append(f'<text x="{sx(t):.0f}" y="{MINI_H - 3}" class="xl">{clock(t)}</text>')
        t += step
    return parts, sx, sy, plot_w


def stacked_time(title: str, unit: str, x: Sequence[float], layers: Sequence[tuple[str, Sequence[float | None],
                 str]], x1: float, bands: Sequence[Band] = ()) -> str:
    """A small stacked-area chart (writes by source, waits by type): each layer (name, column,
    colour) on top of the ones before, per tick; a missing value counts as 0."""
    span = x1 or 1.0
    sums = [0.0] * len(x)
    tops = []
    for _, col, _ in layers:
        sums = [s + (v or 0.0) for s, v in zip(sums, col)]
        tops.append(list(sums))
    top = y_top(tops[-1] if tops else [])
    parts, sx, sy, plot_w = _frame(title, top, span, bands)
    below = [0.0] * len(x)
    for (name, _, color), upper in zip(layers, tops):
        if not any(u > b for u, b in zip(upper, below)):
            below = upper
            continue
        up = [(sx(a), sy(v)) for a, v in zip(x, upper)]
        down = [(sx(a), sy(v)) for a, v in zip(x, below)][::-1]
        d = "M" + "L".join(f"{a:.1f} {b:.1f}" for a, b in up + down) + "Z"
        parts.append(f'<path d="{d}" stroke="none" style="fill:{color};fill-opacity:.75">'
                     f'<title>{escape(name)}</title></path>')
        below = upper
    legend = " ".join(f'<tspan style="fill:{c}">■</tspan> {escape(n)}' for n, col, c in layers
                      if any(v for v in col))
    parts.append(f'<text x="{M_LEFT}" y="11" class="t">{escape(title)} <tspan class="u">({escape(unit)})</tspan> '
                 f'<tspan class="u">{legend}</tspan></text></svg>')
    return "".join(parts)


def mini_time(title: str, unit: str, points: Sequence[Point], x1: float, top: float, color: str,
              bands: Sequence[Band] = ()) -> str:
    """One small time chart (x: seconds from the run's start, 0..x1; y: 0..top), checkpoints shaded."""
    span = x1 or 1.0
    parts, sx, sy, plot_w = _frame(title, top, span, bands)
    d = path_data(decimate(points, 0.0, span, plot_w // 2), sx, sy)
    if d:
        parts.append(f'<path d="{d}" stroke="{color}"/>')
    parts.append(f'<text x="{M_LEFT}" y="11" class="t">{escape(title)} <tspan class="u">({escape(unit)})</tspan>'
                 "</text></svg>")
    return "".join(parts)


def correlation(xs: Sequence[float | None], ys: Sequence[float | None]) -> float | None:
    """Pearson's r of the pairs where both have a value; None with fewer than 3 pairs or a constant side."""
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 3:
        return None
    try:
        return statistics.correlation([p[0] for p in pairs], [p[1] for p in pairs])
    except statistics.StatisticsError:
        return None


def scatter(title: str, x_unit: str, y_unit: str, xs: Sequence[float | None], ys: Sequence[float | None],
            x_top: float, y_top_: float, color: str) -> str:
    """Points (one per tick) of y against x, both from 0, with the axes' units."""
    plot_w, plot_h = SCATTER_W - M_LEFT - M_RIGHT, SCATTER_H - M_TOP - M_BOTTOM - 10

    def sx(x: float) -> float:
        return M_LEFT + min(max(x, 0.0), x_top) / x_top * plot_w

    def sy(y: float) -> float:
        return M_TOP + plot_h - min(max(y, 0.0), y_top_) / y_top_ * plot_h

    parts = [f'<svg class="mini" viewBox="0 0 {SCATTER_W} {SCATTER_H}" role="img" aria-label="{escape(title)}">']
    parts += _axis_y(y_top_, sy, M_LEFT, SCATTER_W - M_RIGHT)
    step = nice_step(x_top, 3)
    v = 0.0
    while v <= x_top + 1e-9:
        parts.append(f'<text x="{sx(v):.0f}" y="{M_TOP + plot_h + 12}" class="xl">{label(v)}</text>')
        v += step
    parts.append(f'<text x="{M_LEFT + plot_w / 2:.0f}" y="{SCATTER_H - 2}" class="xl">{escape(x_unit)}</text>')
    # one dot per 2-pixel cell, each a zero-length round-capped stroke (~10 bytes): an hour stays small
    at = dict.fromkeys((2 * round(sx(x) / 2), 2 * round(sy(y) / 2)) for x, y in zip(xs, ys)
                       if x is not None and y is not None)
    dots = "".join(f"M{cx} {cy}h0" for cx, cy in at)
    if dots:
        parts.append(f'<path d="{dots}" stroke="{color}" style="stroke-width:4;stroke-linecap:round;'
                     'stroke-opacity:.6"/>')
    parts.append(f'<text x="{M_LEFT}" y="11" class="t">{escape(title)} <tspan class="u">({escape(y_unit)})</tspan>'
                 "</text></svg>")
    return "".join(parts)


def _shade(frac: float) -> str:
    r, g, b = (round(lo + (hi - lo) * frac) for lo, hi in zip(LOW, HIGH))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map(title: str, unit: str, x_name: str, x_values: Sequence[str], y_name: str, y_values: Sequence[str],
             cells: dict[tuple[str, str], float | None], fmt) -> str:
    """A grid of the two settings' values (y rows, x columns), each cell shaded from the lowest
    value (light) to the highest (dark) and labelled with its value; "—" for a cell with none."""
    left, top = 110, 50
    w, h = left + HEAT_CELL_W * len(x_values) + 8, top + HEAT_CELL_H * len(y_values) + 8
    vals = [v for v in cells.values() if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 0.0)
    parts = [f'<svg class="heat" viewBox="0 0 {w} {h}" style="max-width:{w}px" role="img" '
             f'aria-label="{escape(title)}">',
             f'<text x="4" y="12" class="t">{escape(title)} <tspan class="u">({escape(unit)})</tspan></text>',
             f'<text x="{left}" y="29" class="u">{escape(x_name)} →</text>',
             f'<text x="4" y="{top - 4}" class="u">{escape(y_name)} ↓</text>']
    for i, xv in enumerate(x_values):
        parts.append(f'<text x="{left + HEAT_CELL_W * (i + .5):.0f}" y="{top - 4}" class="xl">{escape(xv)}</text>')
    for j, yv in enumerate(y_values):
        y = top + HEAT_CELL_H * j
        parts.append(f'<text x="{left - 6}" y="{y + HEAT_CELL_H / 2 + 4:.0f}" class="yl">{escape(yv)}</text>')
        for i, xv in enumerate(x_values):
            v = cells.get((yv, xv))
            frac = 0.0 if v is None or hi == lo else (v - lo) / (hi - lo)
            fill = "#ffffff" if v is None else _shade(frac)
            ink = "#ffffff" if v is not None and frac > 0.55 else "#222222"
            x = left + HEAT_CELL_W * i
            parts.append(f'<rect x="{x}" y="{y}" width="{HEAT_CELL_W - 2}" height="{HEAT_CELL_H - 2}" fill="{fill}" '
                         f'stroke="#ddd"><title>{escape(f"{y_name}={yv} {x_name}={xv}: {fmt(v)} {unit}")}</title></rect>'
                         f'<text x="{x + HEAT_CELL_W / 2 - 1:.0f}" y="{y + HEAT_CELL_H / 2 + 3:.0f}" class="xl" '
                         f'style="fill:{ink}">{escape(fmt(v))}</text>')
    parts.append("</svg>")
    return "".join(parts)
