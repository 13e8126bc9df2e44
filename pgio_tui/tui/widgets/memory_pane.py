"""Dirty / Writeback: the kernel's dirty page cache against its background and throttle thresholds."""

from __future__ import annotations

from pgio_tui.tui import format as fmt
from pgio_tui.tui.plot import ChartSpec, HLine, Line, Series
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

CHART = ChartSpec(
    series=(Series("mem.dirty_kb", "Dirty", "chart-1", fmt=fmt.kib),
            Series("mem.writeback_kb", "Writeback", "chart-2", fmt=fmt.kib)),
    # Drawn when within 4x of the data (else listed with an arrow: off the scale).
    hlines=(HLine("mem.dirty_background_threshold_kb", "bg", "warn", fmt.kib),
            HLine("mem.dirty_threshold_kb", "throttle", "crit", fmt.kib)),
)


class MemoryPane(ChartPane):
    SPEC = PaneSpec("3", "Dirty / Writeback", CHART, ("memory",))

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
        some, full = h.latest("io.pressure_some_pct", t1), h.latest("io.pressure_full_pct", t1)
        if some is not None or full is not None:
            runs += [("io pressure ", "muted"), (f"some {fmt.pct(some)} full {fmt.pct(full)}",
                                                 "warn" if (full or 0) >= 10 else None), ("  ", None)]
        for metric, label in (("mem.available_kb", "available"), ("mem.cached_kb", "cached")):
            v = h.latest(metric, t1)
            if v is not None:
                runs += [(label + " ", "muted"), (fmt.kib(v), None), ("  ", None)]
        return tuple(runs) or (("",None),)
