"""Braille line charts as lines of (text, style-name) runs: the drawing half of ChartPane.

Textual-free and deterministic, so it is unit-tested without a terminal and any view (live,
replay, diff) draws the same picture from a FrameHistory. Style names are theme variable names
(`chart-1`, `ckpt-span`, ...); the widget maps them to colours.

Two choices keep the bytes sent to the terminal low:
- one colour per cell and one style run per stretch of equal colour (no per-cell gradients);
- the x axis is aligned to absolute time (dot column = floor(t / seconds per dot)), so between two
  column shifts only the newest column changes and the widget repaints only the cells that did.

A ChartCache kept by the caller makes a tick cost what changed: Columns (columns.py) reduce only
the new samples, and the Raster (raster.py) redraws only the dot columns whose entries changed.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import is_

from pgio_tui import format as fmt
from pgio_tui.tui.columns import Columns, finite
from pgio_tui.tui.drawing import fit, nice_ceiling
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.raster import Canvas, Raster

__all__ = ["Canvas", "ChartCache", "ChartSpec", "Columns", "HLine", "Line", "Run", "Series", "chart_lines"]

Run = tuple[str, str | None]  # text, style name (None: the widget's own colours)
Line = tuple[Run, ...]

GUTTER = 5
MARKS = {  # event kind -> (character on the time axis, style)
    "annotation": ("▲", "mark"), "gap": ("╳", "crit"), "reconnect": ("╳", "crit"),
    "server_restart": ("╳", "crit"), "stats_reset": ("!", "warn"), "setting_change": ("◆", "mark"),
    "workload_start": ("▶", "mark"), "workload_stop": ("■", "mark"),
}


@dataclass(frozen=True)
class Series:
    """One line of a chart: a metric, drawn in a theme colour on a y scale shared by its group."""

    metric: str
    label: str
    style: str  # theme variable, e.g. "chart-1"
    group: int = 0  # series of one group share a y scale; group 0 labels the gutter
    fmt: Callable[[float | None], str] = fmt.si
    # Drawn from this history instead of the chart's: the diff screen overlays run B on run A.
    history: FrameHistory | None = field(default=None, compare=False)
    wait_sample: bool = False  # read with the processes (M.WITH_THE_PROCESSES): the legend shows the last sample's (latest_sampled)

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
    """A chart as data: its series, reference lines and fixed scales (a pane is data too)."""

    series: tuple[Series, ...]
    hlines: tuple[HLine, ...] = ()
    fixed_max: dict[int, float] = field(default_factory=dict)  # group -> fixed y maximum
    legend: bool = True
    empty_text: str = "no data yet"


_NO_ROW: tuple[object, Run, Line] = (None, ("", None), ())  # a row not drawn yet: None is no draw's runs


class ChartCache:
    """What a chart keeps between redraws: the series' Columns and the plot's Raster."""

    def __init__(self):
        self.columns: dict[object, Columns] = {}
        self.raster = Raster()
        self.axis: tuple[tuple, Line] | None = None  # (what the time axis shows, its line)
        self.gutter: tuple[tuple, list[Run]] | None = None  # (y labels' inputs, a tag run per plot row)
        self.series: tuple[Series, ...] = ()  # the series of the last draw, and their keys
        self.keys: tuple = ()
        self.rows: list[tuple[object, Run, Line]] = []  # per plot row: its raster runs, its tag, its line

    def keep(self, keys: set) -> None:
        """Forget the series not in `keys` (e.g. another device was selected)."""
        for key in [k for k in self.columns if k not in keys]:
            del self.columns[key]


def chart_lines(spec: ChartSpec, history: FrameHistory, t0: float, t1: float, width: int, height: int,
                series: Sequence[Series] | None = None, empty_text: str | None = None,
                cache: ChartCache | None = None) -> list[Line]:
    """The chart as `height` lines of `width` cells: legend, plot rows with a y gutter, time axis.

    `series` overrides spec.series (e.g. the selected device's metrics). `cache`, kept by the
    caller between calls, makes a redraw cost the new samples only; the lines are the same with
    or without it.
    """
    series = tuple(spec.series if series is None else series)
    if width < GUTTER + 4 or height < 2:
        return [(("", None),)] * max(0, height)
    legend_rows = 1 if spec.legend and height >= 4 else 0
    plot_h = max(1, height - 1 - legend_rows)
    plot_w = width - GUTTER
    dot_s = (t1 - t0) / (plot_w * 2) if t1 > t0 else 1.0
    kept = cache is not None  # a fresh draw (no cache) shares nothing with other charts either
    cache = ChartCache() if cache is None else cache
    was = cache.series  # what follows from the series alone, worked out when they are other objects
    if len(series) != len(was) or not all(map(is_, series, was)):
        cache.series = series
        cache.keys = tuple(s.key for s in series)
        cache.keep(set(cache.keys))
    columns, cols, dirty = [], [], []
    kept_columns = cache.columns
    gmax: dict[int, float] = {}  # y scales per group: data maximum, thresholds within 4x of it, rounded up
    for s, k in zip(series, cache.keys):
        c = kept_columns.get(k)
        if c is None:
            c = kept_columns[k] = Columns()
        entries = c.update(history if s.history is None else s.history, s.metric, t0, t1, dot_s)
        columns.append(entries)
        cols.append(c)
        if c.dirty:
            dirty += c.dirty
        if entries and c.top is not None:
            g = s.group
            gmax[g] = max(gmax.get(g, 0.0), c.top)
    hl_values = [finite(_own(h, history).latest(h.metric, t1)) for h in spec.hlines]
    has_data = bool(gmax)
    scale = _scales(gmax, hl_values, spec)

    ydots = plot_h * 4 - 1
    right = math.floor(t1 / dot_s)
    xd = plot_w * 2

    def xof(t: float) -> int:
        return math.floor(t / dot_s) - right + xd - 1

    styles: list[str | None] = [None]
    hrows: dict[int, tuple[int, int]] = {}
    for h, v in zip(spec.hlines, hl_values):
        if v is not None and v <= scale[0]:
            styles.append(h.style)
            y = ydots - min(ydots, max(0, round(v / scale[0] * ydots)))
            dots, _ = hrows.get(y >> 2, (0, 0))
            hrows[y >> 2] = (dots | 1 << (y & 3), len(styles) - 1)
    drawn = []
    for s, entries in zip(series, columns):
        styles.append(s.style)
        drawn.append((entries, scale.get(s.group, 1.0), len(styles) - 1))
    key = (plot_w, plot_h, dot_s, scale, styles, hrows, cache.keys)
    rows = cache.raster.draw(key, drawn, dirty, right, plot_w, plot_h, hrows, styles)

    lines: list[Line] = []
    if legend_rows:
        lines.append(_legend(series, spec.hlines, history, t1, scale, hl_values, width))
    if not has_data:
        rows = _message([list(r) for r in rows], empty_text or spec.empty_text, plot_w)
    tags = _gutter(series, scale[0], plot_h, cache)
    # A row whose runs and tag are the objects of the last draw is the line of the last draw: the
    # same object, so the view sees at once that it did not change.
    kept_rows = cache.rows
    if len(kept_rows) != plot_h:
        kept_rows = cache.rows = [_NO_ROW] * plot_h
    for r, runs in enumerate(rows):
        tag = tags[r]
        was_runs, was_tag, line = kept_rows[r]
        if was_runs is not runs or was_tag is not tag:
            line = (tag, *runs)
            kept_rows[r] = (runs, tag, line)
        lines.append(line)
    lines.append(_axis(history, t0, t1, plot_w, dot_s, xof, cache if kept else None))
    return lines[:height]


def _gutter(series: Sequence[Series], top: float, plot_h: int, cache: ChartCache) -> list[Run]:
    """The y labels as one tag run per plot row (the top, half way when there is room, 0), built
    again only when the scale or the height changed."""
    g0 = next((s for s in series if s.group == 0), None)
    label = g0.fmt if g0 else fmt.si
    key = (label, top, plot_h)
    if cache.gutter is not None and cache.gutter[0] == key:
        return cache.gutter[1]
    tags: list[Run] = []
    for r in range(plot_h):
        if r == 0:
            tag = label(top)
        elif r == plot_h - 1 and plot_h > 1:
            tag = "0"
        elif plot_h >= 5 and r == plot_h // 2:
            tag = label(top / 2)
        else:
            tag = ""
        tags.append((tag[: GUTTER - 1].rjust(GUTTER - 1) + "┤", "axis"))
    cache.gutter = (key, tags)
    return tags


def reference_lines(spec: ChartSpec, history: FrameHistory, t0: float, t1: float, width: int, height: int,
                    series: Sequence[Series] | None = None, empty_text: str | None = None) -> list[Line]:
    """chart_lines drawn the plain way, everything at once on a Canvas: what the cached drawing
    must equal cell for cell (tests compare the two)."""
    series = tuple(spec.series if series is None else series)
    lines = chart_lines(spec, history, t0, t1, width, height, series, empty_text)
    if width < GUTTER + 4 or height < 2:
        return lines
    legend_rows = 1 if spec.legend and height >= 4 else 0
    plot_h = max(1, height - 1 - legend_rows)
    plot_w = width - GUTTER
    dot_s = (t1 - t0) / (plot_w * 2) if t1 > t0 else 1.0
    columns = [Columns().update(_own(s, history), s.metric, t0, t1, dot_s) for s in series]
    hl_values = [finite(_own(h, history).latest(h.metric, t1)) for h in spec.hlines]
    gmax: dict[int, float] = {}
    for s, entries in zip(series, columns):
        top = max((e[4] for e in entries if e is not None), default=None)
        if top is not None:
            gmax[s.group] = max(gmax.get(s.group, 0.0), top)
    if not gmax:
        return lines
    scale = _scales(gmax, hl_values, spec)
    canvas = Canvas(plot_w, plot_h)
    styles: list[str | None] = [None]
    ydots = canvas.yd - 1
    right = math.floor(t1 / dot_s)
    for h, v in zip(spec.hlines, hl_values):
        if v is not None and v <= scale[0]:
            styles.append(h.style)
            canvas.hline(ydots - min(ydots, max(0, round(v / scale[0] * ydots))), len(styles) - 1)
    for s, entries in zip(series, columns):
        styles.append(s.style)
        canvas.trace(entries, len(styles) - 1, scale.get(s.group, 1.0), right)
    for r, runs in enumerate(canvas.rows(styles)):
        lines[legend_rows + r] = (lines[legend_rows + r][0], *runs)
    return lines


def _own(item: Series | HLine, history: FrameHistory) -> FrameHistory:
    return history if item.history is None else item.history


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
        h = _own(s, history)
        v = finite(h.latest_sampled(s.metric, t1) if s.wait_sample else h.latest(s.metric, t1))
        runs += [("■", s.style), (f"{s.label} ", "muted"), (s.fmt(v), None)]
        if s.group != 0:
            runs.append((f"/{s.fmt(scale.get(s.group))}", "muted"))
        runs.append((" ", None))
    for h, v in zip(hlines, hl_values):
        if v is not None:
            off = "↑" if v > scale[0] else ""
            runs += [("─", h.style), (f"{h.label} ", "muted"), (h.fmt(v) + off, None), (" ", None)]
    return fit(runs, width)


CLOCK_STEPS = (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


_GMTOFF: list = [None, 0]  # the last t asked and its offset


def _gmtoff(t: float) -> int:
    """time.localtime(t).tm_gmtoff, asked once for the charts of one redraw (they share t; the C
    library looks the zone up again on every call)."""
    if _GMTOFF[0] != t:
        _GMTOFF[0], _GMTOFF[1] = t, time.localtime(t).tm_gmtoff
    return _GMTOFF[1]


def _clock(t0: float, t1: float, plot_w: int, dot_s: float) -> tuple | None:
    """Where the time-of-day labels go: (format, the round times in the window), or None. A label
    every 12 cells or more (every 2 minutes on a 5-minute window 50 cells wide); the labels sit at
    absolute times, so they move with the data and change only when the chart shifts."""
    cell_s = 2 * dot_s
    step = next((s for s in CLOCK_STEPS if s / cell_s >= (12 if s >= 60 else 16)), None)
    if step is None or plot_w < 12:
        return None
    off = _gmtoff(t1)
    g = math.ceil((t0 + off) / step) * step - off
    times = []
    while g <= t1:
        times.append(g)
        g += step
    return ("%H:%M" if step >= 60 else "%H:%M:%S"), tuple(times)


# The last time axis drawn and what it was drawn from: (the history, weakly; its epoch and version,
# the window, the plot width, seconds per dot), its line. The axis is a function of exactly these:
# the history's spans and events are what its epoch and version say, the clock is t0 and t1's.
_SHARED_AXIS: list = [lambda: None, None, None]


def _axis(history: FrameHistory, t0: float, t1: float, plot_w: int, dot_s: float, xof,
          cache: ChartCache | None = None) -> Line:
    """The time axis (_draw_axis); charts of one redraw with the same window and width share it."""
    if cache is None:
        return _draw_axis(history, t0, t1, plot_w, dot_s, xof)
    inputs = (history.epoch, history.version, t0, t1, plot_w, dot_s)
    ref, kept, line = _SHARED_AXIS
    if kept != inputs or ref() is not history:
        line = _draw_axis(history, t0, t1, plot_w, dot_s, xof, cache)
        _SHARED_AXIS[:] = weakref.ref(history), inputs, line
    return line


def _draw_axis(history: FrameHistory, t0: float, t1: float, plot_w: int, dot_s: float, xof,
               cache: ChartCache | None = None) -> Line:
    """The time axis: the window's length, time of day, checkpoint spans as a thick stretch
    (labels over a span keep its colour), event marks. What it shows is worked out first (cells
    of spans and marks, the clock's times); it is drawn again only when that changed."""
    spans = tuple((max(0, xof(span.start) // 2), min(plot_w - 1, xof(span.end if span.end is not None else t1) // 2))
                  for span in history.spans_in(t0, t1))
    marks = tuple((xof(e.t) // 2, MARKS[e.event.kind]) for e in history.events_in(t0, t1) if e.event.kind in MARKS)
    clock = _clock(t0, t1, plot_w, dot_s)
    clock_at = tuple(xof(g) // 2 for g in clock[1]) if clock else None  # the labels' cells
    key = (plot_w, fmt.window(t1 - t0), spans, marks, clock, clock_at)
    if cache is not None and cache.axis is not None and cache.axis[0] == key:
        return cache.axis[1]
    cells = ["─"] * plot_w
    cstyle: list[str] = ["axis"] * plot_w
    for a, b in spans:
        for c in range(a, b + 1):
            cells[c], cstyle[c] = "━", "ckpt-span"
    for c, mark in marks:
        if 0 <= c < plot_w:
            cells[c], cstyle[c] = mark
    if clock and clock_at is not None:  # never over an event mark
        form, times = clock
        for g, c in zip(times, clock_at):
            label = time.strftime(form, time.localtime(g))
            if 0 <= c and c + len(label) <= plot_w and all(ch in "─━" for ch in cells[c:c + len(label)]):
                cells[c:c + len(label)] = label
    runs: list[Run] = [(("-" + key[1])[: GUTTER - 1].rjust(GUTTER - 1) + "└", "axis")]
    start = 0
    for c in range(1, plot_w + 1):
        if c == plot_w or cstyle[c] != cstyle[start]:
            runs.append(("".join(cells[start:c]), cstyle[start]))
            start = c
    line = tuple(runs)
    if cache is not None:
        cache.axis = (key, line)
    return line


def _scales(gmax: dict[int, float], hl_values: list, spec) -> dict[int, float]:
    """Y scale per group: data maximum, thresholds within 4x of it, rounded up to a nice number."""
    data0 = gmax.get(0, 0.0)
    for v in hl_values:
        if v is not None and (data0 <= 0 or v <= 4 * data0):
            gmax[0] = max(gmax.get(0, 0.0), v)
    scale = {g: spec.fixed_max.get(g) or nice_ceiling(m * 1.05) for g, m in gmax.items()}
    for g, m in spec.fixed_max.items():
        scale.setdefault(g, m)
    scale.setdefault(0, 1.0)
    return scale
