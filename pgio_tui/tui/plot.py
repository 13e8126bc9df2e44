"""Braille line charts as lines of (text, style-name) runs: the drawing half of ChartPane.

Textual-free and deterministic, so it is unit-tested without a terminal and any view (live,
replay, diff) draws the same picture from a FrameHistory. Style names are theme variable names
(`chart-1`, `ckpt-span`, ...); the widget maps them to colours.

Two choices keep the bytes sent to the terminal low:
- one colour per cell and one style run per stretch of equal colour (no per-cell gradients);
- the x axis is aligned to absolute time (dot column = floor(t / seconds per dot)), so between two
  column shifts only the newest column changes and the widget repaints only the lines that did.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pgio_tui import format as fmt
from pgio_tui.tui.drawing import nice_ceiling
from pgio_tui.tui.history import FrameHistory

Run = tuple[str, str | None]  # text, style name (None: the widget's own colours)
Line = tuple[Run, ...]

# Braille dot bits by (row in cell 0-3, column in cell 0-1).
_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
# _SPANS[column][a][b]: the bits of rows a..b (a <= b) of one cell column.
_SPANS = tuple(tuple(tuple(sum(_BITS[r][col] for r in range(a, b + 1)) for b in range(4)) for a in range(4))
               for col in range(2))
GUTTER = 5
MARKS = {  # event kind -> (character on the time axis, style)
    "annotation": ("▲", "mark"), "gap": ("╳", "crit"), "reconnect": ("╳", "crit"),
    "server_restart": ("╳", "crit"), "stats_reset": ("!", "warn"), "setting_change": ("◆", "mark"),
    "workload_start": ("▶", "mark"), "workload_stop": ("■", "mark"),
}


@dataclass(frozen=True)
class Series:
    metric: str
    label: str
    style: str  # theme variable, e.g. "chart-1"
    group: int = 0  # series of one group share a y scale; group 0 labels the gutter
    fmt: Callable[[float | None], str] = fmt.si
    # Drawn from this history instead of the chart's: the diff screen overlays run B on run A.
    history: FrameHistory | None = field(default=None, compare=False)

    @property
    def key(self) -> object:
        """The series' cache key: its metric, and its history when it has its own."""
        return self.metric if self.history is None else (self.metric, id(self.history))


@dataclass(frozen=True)
class HLine:
    """A horizontal reference line from a metric (e.g. the kernel's dirty thresholds)."""

    metric: str
    label: str
    style: str
    fmt: Callable[[float | None], str] = fmt.si
    history: FrameHistory | None = field(default=None, compare=False)  # as Series.history


@dataclass(frozen=True)
class ChartSpec:
    series: tuple[Series, ...]
    hlines: tuple[HLine, ...] = ()
    fixed_max: dict[int, float] = field(default_factory=dict)  # group -> fixed y maximum
    legend: bool = True
    empty_text: str = "no data yet"


class Canvas:
    """A width x height cell grid of braille dots, one owner (style index) per cell."""

    def __init__(self, width: int, height: int):
        self.w, self.h = width, height
        self.xd, self.yd = width * 2, height * 4
        self.mask = bytearray(width * height)
        self.owner = [0] * (width * height)

    def dot(self, x: int, y: int, owner: int) -> None:
        if 0 <= x < self.xd and 0 <= y < self.yd:
            cell = (y >> 2) * self.w + (x >> 1)
            self.mask[cell] |= _BITS[y & 3][x & 1]
            self.owner[cell] = owner

    def vspan(self, x: int, y0: int, y1: int, owner: int) -> None:
        """Dots y0..y1 of dot column x: one mask OR per cell row, not one call per dot."""
        if not 0 <= x < self.xd:
            return
        if y0 > y1:
            y0, y1 = y1, y0
        y0, y1 = max(0, y0), min(self.yd - 1, y1)
        if y0 > y1:
            return
        spans, mask, own, w, c = _SPANS[x & 1], self.mask, self.owner, self.w, x >> 1
        for r in range(y0 >> 2, (y1 >> 2) + 1):
            top = r << 2
            cell = r * w + c
            mask[cell] |= spans[max(y0, top) - top][min(y1, top + 3) - top]
            own[cell] = owner

    def line(self, x0: int, y0: int, x1: int, y1: int, owner: int) -> None:
        """A connected line: every column between the ends gets a vertical run, so steep
        slopes stay continuous."""
        if x1 == x0:
            self.vspan(x0, y0, y1, owner)
            return
        prev = y0
        for x in range(x0, x1 + 1):
            y = round(y0 + (y1 - y0) * (x - x0) / (x1 - x0))
            self.vspan(x, prev, y, owner)
            prev = y

    def hline(self, y: int, owner: int) -> None:
        for x in range(0, self.xd, 2):
            self.dot(x, y, owner)

    def rows(self, styles: Sequence[str | None]) -> list[list[Run]]:
        out = []
        for r in range(self.h):
            runs: list[Run] = []
            text, style = [], None
            base = r * self.w
            for c in range(self.w):
                m = self.mask[base + c]
                s = styles[self.owner[base + c]] if m else None
                ch = chr(0x2800 + m) if m else " "
                if s != style and text:
                    runs.append(("".join(text), style))
                    text = []
                style = s
                text.append(ch)
            if text:
                runs.append(("".join(text), style))
            out.append(runs)
        return out


def _finite(v) -> float | None:
    if v is None or isinstance(v, str):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


class Columns:
    """One series reduced to absolute dot columns (x = floor(t / seconds per dot)) and kept between
    redraws: a redraw reduces only the samples that arrived since the previous one.

    An entry is [x, first, last, min, max, first_tick, last_tick] of consecutive ticks; None marks
    a break (a missing value). Rebuilt when the history, the metric or the dot width changes, or
    when the window's end moves back (replay seeking).
    """

    __slots__ = ("key", "entries", "last_t")

    def __init__(self):
        self.key: tuple | None = None
        self.entries: list = []
        self.last_t = -math.inf

    def update(self, history: FrameHistory, metric: str, t0: float, t1: float, dot_s: float) -> list:
        key = (id(history), history.epoch, metric, dot_s)
        if key != self.key or t1 < self.last_t:
            self.key, self.entries, self.last_t = key, [], -math.inf
        ts = history.t
        i = bisect_right(ts, self.last_t) if self.last_t > t0 else bisect_left(ts, t0)
        j = bisect_right(ts, t1)
        col = history.series.get(metric)
        entries = self.entries
        cur = entries[-1] if entries else None
        if col is not None and i < j:
            floor, ticks = math.floor, history.ticks
            for k in range(i, j):
                raw = col[k]
                if raw is None or raw.__class__ is str or raw != raw or raw in (math.inf, -math.inf):
                    if cur is not None:
                        entries.append(None)
                    cur = None
                    continue
                v, tick = float(raw), ticks[k]
                x = floor(ts[k] / dot_s)
                if cur is not None and cur[0] == x and tick - cur[6] == 1:
                    cur[2] = v
                    if v < cur[3]:
                        cur[3] = v
                    elif v > cur[4]:
                        cur[4] = v
                    cur[6] = tick
                else:
                    cur = [x, v, v, v, v, tick, tick]
                    entries.append(cur)
        if j:
            self.last_t = max(self.last_t, ts[j - 1])
        left = math.floor(t0 / dot_s)
        k = 0
        while k < len(entries) and (entries[k] is None or entries[k][0] < left):
            k += 1
        if k:
            del entries[:k]
        return entries


def chart_lines(spec: ChartSpec, history: FrameHistory, t0: float, t1: float, width: int, height: int,
                series: Sequence[Series] | None = None, empty_text: str | None = None,
                cache: dict[str, Columns] | None = None) -> list[Line]:
    """The chart as `height` lines of `width` cells: legend, plot rows with a y gutter, time axis.

    `series` overrides spec.series (e.g. the selected device's metrics). `cache` (metric ->
    Columns), kept by the caller between calls, makes a redraw cost the new samples only.
    """
    series = tuple(spec.series if series is None else series)
    if width < GUTTER + 4 or height < 2:
        return [(("", None),)] * max(0, height)
    legend_rows = 1 if spec.legend and height >= 4 else 0
    plot_h = max(1, height - 1 - legend_rows)
    plot_w = width - GUTTER
    dot_s = (t1 - t0) / (plot_w * 2) if t1 > t0 else 1.0
    cache = {} if cache is None else cache
    columns = []
    for s in series:
        c = cache.get(s.key)
        if c is None:
            c = cache[s.key] = Columns()
        columns.append(c.update(_own(s, history), s.metric, t0, t1, dot_s))
    hl_values = [_finite(_own(h, history).latest(h.metric, t1)) for h in spec.hlines]

    # y scales per group: data maximum, thresholds within 4x of it, rounded up to a nice number.
    gmax: dict[int, float] = {}
    for s, entries in zip(series, columns):
        top = max((e[4] for e in entries if e is not None), default=None)
        if top is not None:
            gmax[s.group] = max(gmax.get(s.group, 0.0), top)
    has_data = bool(gmax)
    data0 = gmax.get(0, 0.0)
    for v in hl_values:
        if v is not None and (data0 <= 0 or v <= 4 * data0):
            gmax[0] = max(gmax.get(0, 0.0), v)
    scale = {g: spec.fixed_max.get(g) or nice_ceiling(m * 1.05) for g, m in gmax.items()}
    for g, m in spec.fixed_max.items():
        scale.setdefault(g, m)
    scale.setdefault(0, 1.0)

    canvas = Canvas(plot_w, plot_h)
    styles: list[str | None] = [None]
    ydots = canvas.yd - 1
    right = math.floor(t1 / dot_s)

    def xof(t: float) -> int:
        return math.floor(t / dot_s) - right + canvas.xd - 1

    def yof(v: float, top: float) -> int:
        return ydots - min(ydots, max(0, round(v / top * ydots)))

    for h, v in zip(spec.hlines, hl_values):
        if v is not None and v <= scale[0]:
            styles.append(h.style)
            canvas.hline(yof(v, scale[0]), len(styles) - 1)
    for s, entries in zip(series, columns):
        styles.append(s.style)
        _trace(canvas, entries, len(styles) - 1, scale.get(s.group, 1.0), right)

    lines: list[Line] = []
    if legend_rows:
        lines.append(_legend(series, spec.hlines, history, t1, scale, hl_values, width))
    rows = canvas.rows(styles)
    if not has_data:
        rows = _message(rows, empty_text or spec.empty_text, plot_w)
    g0 = next((s for s in series if s.group == 0), None)
    label = g0.fmt if g0 else fmt.si
    for r, runs in enumerate(rows):
        if r == 0:
            tag = label(scale[0])
        elif r == plot_h - 1 and plot_h > 1:
            tag = "0"
        elif plot_h >= 5 and r == plot_h // 2:
            tag = label(scale[0] / 2)
        else:
            tag = ""
        lines.append(((tag[: GUTTER - 1].rjust(GUTTER - 1) + "┤", "axis"), *runs))
    lines.append(_axis(history, t0, t1, plot_w, dot_s, xof))
    return lines[:height]


def _own(item: Series | HLine, history: FrameHistory) -> FrameHistory:
    return history if item.history is None else item.history


def _trace(canvas: Canvas, entries: list, owner: int, top: float, right: int) -> None:
    """Draw one series from its Columns entries: a vertical run per dot column (min..max), joined
    to the previous column when the ticks are consecutive (a gap in ticks leaves a gap).
    Written flat (no helper calls per entry): this loop is most of a redraw's cost."""
    shift = canvas.xd - 1 - right
    ydots = canvas.yd - 1
    k = ydots / top if top else 0.0
    xd, w, mask, own = canvas.xd, canvas.w, canvas.mask, canvas.owner
    px = py = ptick = None
    for e in entries:
        if e is None:
            px = None
            continue
        x = e[0] + shift
        lo = ydots - round(e[4] * k)  # the maximum is the top of the run
        hi = ydots - round(e[3] * k)
        if px is not None and e[5] - ptick == 1:
            if x - px == 1:  # the usual case: join by widening this column's run
                if py < lo:
                    lo = py
                elif py > hi:
                    hi = py
            else:
                first = ydots - round(e[1] * k)
                canvas.line(px, min(ydots, max(0, py)), x, min(ydots, max(0, first)), owner)
        px, py, ptick = x, ydots - round(e[2] * k), e[6]
        if not 0 <= x < xd:
            continue
        lo = 0 if lo < 0 else (ydots if lo > ydots else lo)
        hi = 0 if hi < 0 else (ydots if hi > ydots else hi)
        spans, c = _SPANS[x & 1], x >> 1
        for r in range(lo >> 2, (hi >> 2) + 1):
            t = r << 2
            cell = r * w + c
            mask[cell] |= spans[(lo if lo > t else t) - t][(hi if hi < t + 3 else t + 3) - t]
            own[cell] = owner


def _message(rows: list[list[Run]], text: str, width: int) -> list[list[Run]]:
    """An empty plot says why, centred (wrapped to two lines when long)."""
    words, parts, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width - 2:
            parts.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    if cur:
        parts.append(cur)
    parts = parts[: len(rows)]
    top = max(0, (len(rows) - len(parts)) // 2)
    for i, p in enumerate(parts):
        p = p[:width]
        pad = (width - len(p)) // 2
        rows[top + i] = [(" " * pad, None), (p, "muted"), (" " * (width - pad - len(p)), None)]
    return rows


def _legend(series, hlines, history, t1, scale, hl_values, width) -> Line:
    runs: list[Run] = []
    for s in series:
        v = _finite(_own(s, history).latest(s.metric, t1))
        runs += [("■", s.style), (f"{s.label} ", "muted"), (s.fmt(v), None)]
        if s.group != 0:
            runs.append((f"/{s.fmt(scale.get(s.group))}", "muted"))
        runs.append((" ", None))
    for h, v in zip(hlines, hl_values):
        if v is not None:
            off = "↑" if v > scale[0] else ""
            runs += [("─", h.style), (f"{h.label} ", "muted"), (h.fmt(v) + off, None), (" ", None)]
    return _fit(runs, width)


def _fit(runs: list[Run], width: int) -> Line:
    out, used = [], 0
    for text, style in runs:
        if used + len(text) > width:
            out.append((text[: width - used], style))
            break
        out.append((text, style))
        used += len(text)
    return tuple(r for r in out if r[0])


def _axis(history: FrameHistory, t0: float, t1: float, plot_w: int, dot_s: float, xof) -> Line:
    """The time axis: the window's length, checkpoint spans as a thick stretch, event marks."""
    cells = ["─"] * plot_w
    cstyle: list[str] = ["axis"] * plot_w
    for span in history.spans_in(t0, t1):
        a = max(0, xof(span.start) // 2)
        b = min(plot_w - 1, xof(span.end if span.end is not None else t1) // 2)
        for c in range(a, b + 1):
            cells[c], cstyle[c] = "━", "ckpt-span"
    for e in history.events_in(t0, t1):
        mark = MARKS.get(e.event.kind)
        c = xof(e.t) // 2
        if mark and 0 <= c < plot_w:
            cells[c], cstyle[c] = mark
    runs: list[Run] = [(("-" + fmt.window(t1 - t0))[: GUTTER - 1].rjust(GUTTER - 1) + "└", "axis")]
    start = 0
    for c in range(1, plot_w + 1):
        if c == plot_w or cstyle[c] != cstyle[start]:
            runs.append(("".join(cells[start:c]), cstyle[start]))
            start = c
    return tuple(runs)
