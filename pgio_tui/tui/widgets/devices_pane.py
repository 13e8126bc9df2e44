"""Devices: iostat -x per device (PGDATA / WAL marked) and util + await of the selected device over time."""

from __future__ import annotations

from textual.binding import Binding

from pgio_tui.tui import format as fmt
from pgio_tui.tui.plot import ChartSpec, Line, Series
from pgio_tui.tui.widgets.chart import Chart
from pgio_tui.tui.widgets.pane import Pane, Section, View, fit

ROLE_MARK = {"data": "DATA", "wal": "WAL", "data,wal": "D+W", "wal,data": "D+W", "tblspc": "TBS"}
ROLE_ORDER = {"data": 0, "data,wal": 0, "wal,data": 0, "wal": 1, "tblspc": 2}
MAX_ROWS = 8
SPEC = ChartSpec(series=(), fixed_max={1: 100.0})


def _util(v):
    return fmt.pct(v)


def device_series(dev: str) -> list[Series]:
    return [Series(f"disk.{dev}.util_pct", "util", "chart-4", group=1, fmt=_util),
            Series(f"disk.{dev}.r_await_ms", "r_await", "chart-1", fmt=fmt.ms),
            Series(f"disk.{dev}.w_await_ms", "w_await ms", "chart-2", fmt=fmt.ms)]


def ordered(devices: dict[str, str | None]) -> list[str]:
    return sorted(devices, key=lambda d: (ROLE_ORDER.get(devices[d] or "", 9), list(devices).index(d)))


class DevicesPane(Pane):
    KEY, TITLE = "4", "Devices"
    CATALOG_PANES = ("devices",)
    BINDINGS = [
        Binding("up,k", "select(-1)", "Prev device", show=False),
        Binding("down,j", "select(1)", "Next device", show=False),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.selected: str | None = None
        self.chart = Chart(SPEC)

    def action_select(self, step: int) -> None:
        if self._view is None:
            return
        devs = ordered(self._view.history.devices)
        if not devs:
            return
        i = devs.index(self.selected) if self.selected in devs else 0
        self.selected = devs[(i + step) % len(devs)]
        self.draw(self._view, force=True)

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        h = view.history
        devs = ordered(h.devices)
        if self.selected not in devs:
            self.selected = devs[0] if devs else None
        table, rest = fit(self.table_lines(view, devs, width) if devs else [], height)
        self.chart.series = device_series(self.selected) if self.selected else []
        chart = self.chart.lines(h, view.t0, view.t1, width, rest,
                                 empty_text=view.session.why_no_os() if not devs else None)
        if self.selected:
            role = h.devices.get(self.selected)
            self.set_subtitle(f"chart: {self.selected}" + (f" ({ROLE_MARK.get(role, role)})" if role else "")
                              + ("  ↑↓ select" if len(devs) > 1 else ""))
        else:
            self.set_subtitle("")
        return [("table", table), ("chart", chart)]

    def table_lines(self, view: View, devs: list[str], width: int) -> list[Line]:
        h, t1 = view.history, view.t1
        split = width >= 62  # room for read and write MB/s apart
        cols = ["r/s", "w/s"] + (["rMB/s", "wMB/s"] if split else ["MB/s"]) + ["r_aw", "w_aw", "aqu", "util"]
        cw = 6 if width >= 1 + 9 + 5 + 6 * len(cols) else 5
        name_w = max(8, min(13, width - 6 - cw * len(cols)))
        head = " " + "device".ljust(name_w) + "role " + "".join(c.rjust(cw) for c in cols)
        lines: list[Line] = [((head[:width], "muted"),)]
        sel_i = devs.index(self.selected) if self.selected in devs else 0
        first = max(0, min(sel_i - MAX_ROWS + 1, len(devs) - MAX_ROWS)) if sel_i >= MAX_ROWS else 0
        for dev in devs[first:first + MAX_ROWS]:
            g = lambda f: h.latest(f"disk.{dev}.{f}", t1)  # noqa: E731
            num = (lambda v: fmt.si(v, 2)) if cw < 6 else fmt.si  # values stay under the column width
            rkb, wkb = g("rkb_s"), g("wkb_s")
            vals = [num(g("r_s")), num(g("w_s"))]
            if split:
                vals += [_mb(rkb, num), _mb(wkb, num)]
            else:
                vals += [_mb((rkb or 0) + (wkb or 0), num) if rkb is not None or wkb is not None else "-"]
            vals += [fmt.ms(g("r_await_ms")), fmt.ms(g("w_await_ms")), num(g("aqu_sz")), _util(g("util_pct"))]
            util = g("util_pct") or 0
            mark = ROLE_MARK.get(h.devices.get(dev) or "", "")
            sel = dev == self.selected
            name = (dev[: name_w - 1] + " ").ljust(name_w)
            runs = [("▸" if sel else " ", "primary"), (name, "bold" if sel else None),
                    (mark.ljust(5), "accent"), ("".join(v.rjust(cw) for v in vals[:-1]), None),
                    (vals[-1].rjust(cw), "crit" if util >= 90 else ("warn" if util >= 60 else None))]
            lines.append(tuple(runs))
        return lines


def _mb(kb: float | None, num=fmt.si) -> str:
    return "-" if kb is None else num(kb / 1024)
