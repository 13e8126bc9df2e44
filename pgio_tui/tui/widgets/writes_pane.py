"""Buffers written by source: who writes dirty buffers (checkpointer, bgwriter, backends, ...)."""

from __future__ import annotations

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui.plot import ChartSpec, Line, Run, Series
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View
from pgio_tui.tui.window_sums import WindowTotals

SOURCES = (
    series_of(M.WRITES_CHECKPOINTER, "chart-1", label="ckpt"),
    series_of(M.WRITES_BGWRITER, "chart-3", label="bgw"),
    series_of(M.WRITES_BACKEND, "chart-2"),
    series_of(M.WRITES_AUTOVACUUM, "chart-4", label="autovac"),
    series_of(M.WRITES_OTHER, "chart-6"),
)
SHORT = {M.WRITES_BACKEND: "be", M.WRITES_AUTOVACUUM: "av", M.WRITES_OTHER: "oth"}
CHART = ChartSpec(series=SOURCES, empty_text="rates start at the second tick")


class WritesPane(ChartPane):
    SPEC = PaneSpec(
        "Buffers written by source /s", CHART, ("writes",), name="writes", short="Writes", vital_rank=1,
        help="shared buffers written per second by checkpointer, bgwriter, backends, autovacuum, others; "
             "totals over the window; backend fsyncs.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        return [("wr/s ", "muted"), ("ckpt ", "chart-1"), (fmt.si(view.now(M.WRITES_CHECKPOINTER)) + " ", None),
                ("backend ", "chart-2"), (fmt.si(view.now(M.WRITES_BACKEND)), None)]

    def series(self, view: View) -> list[Series]:
        # Before PostgreSQL 16 there is no pg_stat_io: autovacuum and others are inside "backend".
        return [s for s in SOURCES if view.history.has(s.metric)] or list(SOURCES)

    def subtitle(self, view: View) -> str:
        return "" if view.session.pg_stat_io else "PG<16: backend includes autovacuum+others"

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return self.text_lines(view, self.chart.series, self.window_totals)

    @staticmethod
    def text_lines(view: View, series, totals_of: WindowTotals | None = None) -> list[Line]:
        """`totals_of`, kept by the caller between redraws, adds up the window in C."""
        h, t0, t1 = view.history, view.t0, view.t1
        total = h.total if totals_of is None else (lambda m, a, b: totals_of.total(h, m, a, b))
        totals: list = [(f"Σ{fmt.window(t1 - t0)} ", "muted")]
        for s in series:
            tot = total(s.metric, t0, t1)
            totals += [(SHORT.get(s.metric, s.label) + " ", "muted"), (fmt.si(tot), s.style), (" ", None)]
        totals.append(("buffers", "muted"))
        other: list = []
        for metric, label in ((M.FSYNCS_BACKEND, "backend fsyncs"), (M.EXTENDS_BACKEND, "extends"),
                              (M.WRITEBACKS_TOTAL, "writebacks"), (M.BGWRITER_MAXWRITTEN_S, "bgw stops")):
            v = h.latest(metric, t1)
            if v is not None or h.has(metric):
                style = "crit" if metric == M.FSYNCS_BACKEND and v else None
                other += [(label + " ", "muted"), (fmt.si(v) + "/s", style), (" ", None)]
        return [tuple(totals), tuple(other) or (("",None),)]
