"""Buffers written by source: who writes dirty buffers (checkpointer, bgwriter, backends, ...)."""

from __future__ import annotations

from pgio_tui.tui import format as fmt
from pgio_tui.tui.plot import ChartSpec, Line, Series
from pgio_tui.tui.widgets.chart import Chart
from pgio_tui.tui.widgets.pane import Pane, Section, View

SOURCES = (
    Series("writes.checkpointer", "ckpt", "chart-1"),
    Series("writes.bgwriter", "bgw", "chart-3"),
    Series("writes.backend", "backend", "chart-2"),
    Series("writes.autovacuum", "autovac", "chart-4"),
    Series("writes.other", "other", "chart-6"),
)
SHORT = {"writes.backend": "be", "writes.autovacuum": "av", "writes.other": "oth"}
SPEC = ChartSpec(series=SOURCES, empty_text="rates start at the second tick")


class WritesPane(Pane):
    KEY, TITLE = "2", "Buffers written by source /s"
    CATALOG_PANES = ("writes",)

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.chart = Chart(SPEC)

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        h = view.history
        # Before PostgreSQL 16 there is no pg_stat_io: autovacuum and others are inside "backend".
        series = [s for s in SOURCES if h.has(s.metric)] or list(SOURCES)
        self.chart.series = series
        self.set_subtitle("" if view.session.pg_stat_io else "PG<16: backend includes autovacuum+others")
        text = self.text_lines(view, series)[: max(0, height - 3)]
        chart = self.chart.lines(h, view.t0, view.t1, width, height - len(text))
        return [("chart", chart), ("text", text)]

    @staticmethod
    def text_lines(view: View, series) -> list[Line]:
        h, t0, t1 = view.history, view.t0, view.t1
        totals: list = [(f"Σ{fmt.window(t1 - t0)} ", "muted")]
        for s in series:
            tot = h.total(s.metric, t0, t1)
            totals += [(SHORT.get(s.metric, s.label) + " ", "muted"), (fmt.si(tot), s.style), (" ", None)]
        totals.append(("buffers", "muted"))
        other: list = []
        for metric, label in (("fsyncs.backend", "backend fsyncs"), ("extends.backend", "extends"),
                              ("writebacks.total", "writebacks"), ("bgwriter.maxwritten_s", "bgw stops")):
            v = h.latest(metric, t1)
            if v is not None or h.has(metric):
                style = "crit" if metric == "fsyncs.backend" and v else None
                other += [(label + " ", "muted"), (fmt.si(v) + "/s", style), (" ", None)]
        return [tuple(totals), tuple(other) or (("",None),)]
