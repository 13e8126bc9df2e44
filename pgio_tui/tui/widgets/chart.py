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

from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import ChartCache, ChartSpec, Line, Series, chart_lines

MIN_HEIGHT = 3  # legend-less plot row + axis at the very least


class Chart:
    def __init__(self, spec: ChartSpec):
        self.spec = spec
        self.series: Sequence[Series] | None = None  # overrides spec.series when set
        self._cache = ChartCache()  # so a redraw draws only what the new samples changed

    def lines(self, history: FrameHistory, t0: float, t1: float, width: int, height: int,
              empty_text: str | None = None) -> list[Line]:
        if height < MIN_HEIGHT or width < 10:
            return []
        self._cache.keep({s.key for s in (self.series if self.series is not None else self.spec.series)})
        return chart_lines(self.spec, history, t0, t1, width, height, self.series, empty_text, cache=self._cache)
