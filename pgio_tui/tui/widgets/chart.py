"""Chart: a braille line chart with a legend and a time axis, drawn into a pane's lines.

Our own rather than plotext or textual-plot: no extra dependency (textual-plot pulls numpy),
control over the bytes sent (see plot.py), the checkpoint spans and event marks on every chart's
time axis, and independent y scales per series group (latency ms beside tps, util % beside await).

Not a widget of its own: a pane is one widget that stacks its text and its chart, because the
compositor's cost grows with the number of widgets repainted per frame (measured: 22 widgets per
frame cost ~4.4 ms at 120x40, about half of a frame's CPU).
"""

from __future__ import annotations

from collections.abc import Sequence

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.metrics import lookup
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import ChartCache, ChartSpec, HLine, Line, Series, chart_lines

MIN_HEIGHT = 3  # legend-less plot row + axis at the very least


def series_of(metric: str, style: str, *, label: str | None = None, unit: bool = False, **kw) -> Series:
    """A chart series of a catalog metric: its label and formatter from the catalog (`label` for a
    pane's shorter one; `unit` appends the unit, as the last series of a legend does)."""
    m = lookup(metric)
    text = label or (m.label if m else metric)
    kw.setdefault("wait_sample", metric in M.WITH_THE_PROCESSES)
    return Series(metric, f"{text} {m.unit}" if unit and m else text, style, fmt=m.fmt if m else fmt.si, **kw)


def hline_of(metric: str, style: str, *, label: str | None = None, **kw) -> HLine:
    """A reference line of a catalog metric, labelled and formatted as the catalog says."""
    m = lookup(metric)
    return HLine(metric, label or (m.label if m else metric), style, m.fmt if m else fmt.si, **kw)


class Chart:
    def __init__(self, spec: ChartSpec):
        self.spec = spec
        self.series: Sequence[Series] | None = None  # overrides spec.series when set
        self._cache = ChartCache()  # so a redraw draws only what the new samples changed

    def lines(self, history: FrameHistory, t0: float, t1: float, width: int, height: int,
              empty_text: str | None = None) -> list[Line]:
        if height < MIN_HEIGHT or width < 10:
            return []
        return chart_lines(self.spec, history, t0, t1, width, height, self.series, empty_text, cache=self._cache)
