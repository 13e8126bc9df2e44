"""Charts as inline SVG text: time series on a shared x axis, and a CDF. No library, no script.

Long series are decimated before drawing: the x range is cut into COLUMNS buckets (about one per
2 px) and each bucket keeps its lowest and its highest point, in time order. A spike of one tick in
an hour therefore still shows, and an hour at 1 Hz (3600 points) becomes at most 2 × COLUMNS points
per line. Paths use whole pixels and relative moves, and runs of equal values collapse to their
ends, so a line costs a few kB.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pgio_tui.safe_text import html_text as escape

from pgio_tui.format import clock

WIDTH = 960  # viewBox units (px at 100 %)
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 20, 18  # TOP holds the title
COLUMNS = (WIDTH - LEFT - RIGHT) // 2
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
SPAN_FILL = ("#1f77b4", "#ff7f0e")  # checkpoint shading of run A, run B

Point = tuple[float, float | None]


@dataclass(slots=True)
class Line:
    label: str
    points: Sequence[Point]  # (x, y); y None breaks the line (a gap)
    color: str
    dashed: bool = False


@dataclass(slots=True)
class Chart:
    title: str
    unit: str
    lines: list[Line] = field(default_factory=list)
    hlines: list[tuple[str, float, str, bool]] = field(default_factory=list)  # (label, y, color, dashed)
    height: int = 150


def decimate(points: Sequence[Point], x0: float, x1: float, columns: int = COLUMNS) -> list[Point]:
    """Min and max of each of `columns` x buckets, in time order; a bucket with no value between
    two with values keeps the line broken (y None)."""
    if len(points) <= 2 * columns:
        return list(points)
    span = (x1 - x0) or 1.0
    buckets: list[list[Point]] = [[] for _ in range(columns)]
    for x, y in points:
        i = min(columns - 1, max(0, int((x - x0) / span * columns)))
        buckets[i].append((x, y))
    out: list[Point] = []
    for b in buckets:
        vals = [(x, y) for x, y in b if y is not None]
        if not vals:
            if b:
                out.append((b[0][0], None))
            continue
        lo = min(vals, key=lambda p: p[1])
        hi = max(vals, key=lambda p: p[1])
        if b[0][1] is None:
            out.append((b[0][0], None))
        out += sorted({lo, hi}, key=lambda p: p[0])
    return out


def nice_step(span: float, target: int = 4) -> float:
    """A 1-2-5 step that cuts `span` into about `target` parts."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def time_step(span: float) -> float:
    """Seconds between x-axis labels: 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1 h ..."""
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400):
        if span / step <= 10:
            return step
    return nice_step(span, 8)


def label(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 or v == int(v) else f"{v:.3g}"


def path_data(points: Sequence[Point], sx, sy) -> str:
    """The `d` of an SVG path through points already in chart units (sx, sy map them to pixels):
    whole pixels, relative moves, equal-value runs collapsed to their ends, a gap at a None."""
    px = [(round(sx(x)), None if y is None else round(sy(y))) for x, y in points]
    keep: list[tuple[int, int | None]] = []
    for i, p in enumerate(px):
        if p[1] is not None and 0 < i < len(px) - 1 and px[i - 1][1] == p[1] == px[i + 1][1]:
            continue
        if keep and keep[-1] == p:
            continue
        keep.append(p)
    out, prev, drawing = [], None, False
    for x, y in keep:
        if y is None:
            drawing = False
            continue
        if not drawing or prev is None:
            out.append(f"M{x} {y}")
            drawing, first_l = True, True
        else:
            out.append(("l" if first_l else " ") + f"{x - prev[0]} {y - prev[1]}")
            first_l = False
        prev = (x, y)
    return "".join(out)


def time_chart(chart: Chart, x0: float, x1: float, spans: Sequence[Sequence[tuple[float, float, str]]] = (),
               y_max: float | None = None) -> str:
    """One chart of the shared-x stack. `spans`: per run, checkpoint (x start, x end, kind) to shade;
    with two runs A shades the top half, B the bottom half."""
    h = chart.height
    plot_w, plot_h = WIDTH - LEFT - RIGHT, h - TOP - BOTTOM
    ys = [y for ln in chart.lines for _, y in ln.points if y is not None] + [y for _, y, _, _ in chart.hlines]
    top = y_max if y_max is not None else (max(ys) if ys else 1.0)
    step = nice_step(top or 1.0)
    top = step * max(1, math.ceil((top or 1.0) / step))
    span = (x1 - x0) or 1.0

    def sx(x: float) -> float:
        return LEFT + (x - x0) / span * plot_w

    def sy(y: float) -> float:
        return TOP + plot_h - min(max(y, 0.0), top) / top * plot_h

    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {h}" data-x0="{x0:g}" data-x1="{x1:g}" '
             f'data-left="{LEFT}" data-right="{WIDTH - RIGHT}" role="img" aria-label="{escape(chart.title)}">']
    for run, run_spans in enumerate(spans):
        y_a, y_h = (TOP, plot_h) if len(spans) == 1 else (TOP + run * plot_h / 2, plot_h / 2)
        for a, b, kind in run_spans:
            parts.append(f'<rect x="{sx(a):.0f}" y="{y_a:.0f}" width="{max(1, sx(b) - sx(a)):.0f}" '
                         f'height="{y_h:.0f}" fill="{SPAN_FILL[run % 2]}" fill-opacity=".12">'
                         f'<title>checkpoint {escape(kind)} {clock(a)}-{clock(b)}</title></rect>')
    v = 0.0
    while v <= top + 1e-9:
        y = sy(v)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.0f}" y2="{y:.0f}" class="grid"/>'
                     f'<text x="{LEFT - 4}" y="{y + 3:.0f}" class="yl">{label(v)}</text>')
        v += step
    tstep = time_step(span)
    t = math.ceil(x0 / tstep) * tstep
    while t <= x1 + 1e-9:
        parts.append(f'<text x="{sx(t):.0f}" y="{h - 4}" class="xl">{clock(t)}</text>')
        t += tstep
    for name, y, color, dashed in chart.hlines:
        dash = ' stroke-dasharray="6 4"' if dashed else ' stroke-dasharray="2 3"'
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{sy(y):.0f}" y2="{sy(y):.0f}" stroke="{color}"'
                     f'{dash}><title>{escape(name)} {label(y)} {escape(chart.unit)}</title></line>')
    for ln in chart.lines:
        d = path_data(decimate(ln.points, x0, x1), sx, sy)
        if d:
            dash = ' stroke-dasharray="5 3"' if ln.dashed else ""
            parts.append(f'<path d="{d}" stroke="{ln.color}"{dash}><title>{escape(ln.label)}</title></path>')
    parts.append(_title(chart.title, chart.unit) + "</svg>")
    return "".join(parts)


def _title(title: str, unit: str) -> str:
    return f'<text x="{LEFT}" y="13" class="t">{escape(title)} <tspan class="u">({escape(unit)})</tspan></text>'


def cdf_chart(title: str, unit: str, curves: list[Line], x_max: float, height: int = 220) -> str:
    """Cumulative share (0-1) against a value, one curve per run."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM
    x_top = x_max or 1.0
    step = nice_step(x_top, 8)

    def sx(x: float) -> float:
        return LEFT + min(x, x_top) / x_top * plot_w

    def sy(y: float) -> float:
        return TOP + plot_h - y * plot_h

    parts = [f'<svg class="cdf" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}">']
    for q in (0, 0.25, 0.5, 0.75, 0.9, 1.0):
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{sy(q):.0f}" y2="{sy(q):.0f}" class="grid"/>'
                     f'<text x="{LEFT - 4}" y="{sy(q) + 3:.0f}" class="yl">{q:g}</text>')
    v = 0.0
    while v <= x_top + 1e-9:
        parts.append(f'<text x="{sx(v):.0f}" y="{height - 4}" class="xl">{label(v)}</text>')
        v += step
    for c in curves:
        d = path_data(c.points, sx, sy)
        dash = ' stroke-dasharray="5 3"' if c.dashed else ""
        parts.append(f'<path d="{d}" stroke="{c.color}"{dash}><title>{escape(c.label)}</title></path>')
    parts.append(_title(title, unit) + "</svg>")
    return "".join(parts)
