"""Dirty / Writeback: the kernel's dirty page cache against its background and throttle thresholds."""

from __future__ import annotations

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui.plot import ChartSpec, Line, Run
from pgio_tui.tui.widgets.chart import hline_of, series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

CHART = ChartSpec(
    series=(series_of(M.MEM_DIRTY_KB, "chart-1"), series_of(M.MEM_WRITEBACK_KB, "chart-2")),
    # Drawn when within 4x of the data (else listed with an arrow: off the scale).
    hlines=(hline_of(M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "warn"), hline_of(M.MEM_DIRTY_THRESHOLD_KB, "crit")),
)


class MemoryPane(ChartPane):
    SPEC = PaneSpec(
        "Dirty / Writeback", CHART, ("memory",), name="memory", short="Dirty", vital_rank=3,
        help="kernel Dirty and Writeback against the vm.dirty_background / vm.dirty thresholds.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        if not view.history.has(M.MEM_DIRTY_KB):
            return []
        return [("dirty ", "muted"), (fmt.kib(view.now(M.MEM_DIRTY_KB)), None)]

    def subtitle(self, view: View) -> str:
        return "remote /proc" if view.session.os_mode == "remote" else ""

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return [self.text_line(view)]

    def empty_text(self, view: View) -> str:
        return view.session.why_no_os()

    @staticmethod
    def text_line(view: View) -> Line:
        h, t1 = view.history, view.t1
        runs: list = []
        some, full = h.latest(M.IO_PRESSURE_SOME_PCT, t1), h.latest(M.IO_PRESSURE_FULL_PCT, t1)
        if some is not None or full is not None:
            runs += [("io pressure ", "muted"), (f"some {fmt.pct(some)} full {fmt.pct(full)}",
                                                 "warn" if (full or 0) >= 10 else None), ("  ", None)]
        for metric, label in ((M.MEM_AVAILABLE_KB, "available"), (M.MEM_CACHED_KB, "cached")):
            v = h.latest(metric, t1)
            if v is not None:
                runs += [(label + " ", "muted"), (fmt.kib(v), None), ("  ", None)]
        return tuple(runs) or (("",None),)
