"""Devices: iostat -x per device (PGDATA / WAL marked; flushes f/s and f_await when wide enough) and
util + await of the selected device over time."""

from __future__ import annotations

from functools import lru_cache

from textual.binding import Binding

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui.plot import ChartSpec, Line, Run, Series
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

ROLE_MARK = {"data": "DATA", "wal": "WAL", "data,wal": "D+W", "wal,data": "D+W", "tblspc": "TBS"}
ROLE_ORDER = {"data": 0, "data,wal": 0, "wal,data": 0, "wal": 1, "tblspc": 2}
MAX_ROWS = 8
CHART = ChartSpec(series=(), fixed_max={1: 100.0})


def device_series(dev: str) -> list[Series]:
    """The charted series of a device: the same Series objects each call, so the chart sees at
    once that they did not change."""
    return list(_device_series(dev))


@lru_cache(maxsize=64)
def _device_series(dev: str) -> tuple[Series, ...]:
    return (series_of(M.disk(dev, M.DISK_UTIL_PCT), "chart-4", group=1),
            series_of(M.disk(dev, M.DISK_R_AWAIT_MS), "chart-1"),
            series_of(M.disk(dev, M.DISK_W_AWAIT_MS), "chart-2", unit=True))


def ordered(devices: dict[str, str | None]) -> list[str]:
    return sorted(devices, key=lambda d: (ROLE_ORDER.get(devices[d] or "", 9), list(devices).index(d)))


class DevicesPane(ChartPane):
    SPEC = PaneSpec(
        "Devices", CHART, ("devices",), layout="text-above", text_name="table", name="devices", short="Devices",
        vital_rank=4, help="iostat -x per device (DATA / WAL / TBS marked); util and await charted.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        devs = ordered(view.history.devices)
        if not devs:
            return []
        d = devs[0]
        return [(d + " ", "muted"), (fmt.pct(view.now(M.disk(d, M.DISK_UTIL_PCT))) + " ", None),
                (fmt.ms(view.now(M.disk(d, M.DISK_W_AWAIT_MS))) + "ms", None)]
    BINDINGS = [
        Binding("up,k", "select(-1)", "Prev device", show=False),
        Binding("down,j", "select(1)", "Next device", show=False),
    ]
    selected: str | None = None  # the charted device

    def action_select(self, step: int) -> None:
        if self._view is None:
            return
        devs = ordered(self._view.history.devices)
        if not devs:
            return
        i = devs.index(self.selected) if self.selected in devs else 0
        self.selected = devs[(i + step) % len(devs)]
        self.draw(self._view, force=True)

    def series(self, view: View) -> list[Series]:
        devs = ordered(view.history.devices)
        if self.selected not in devs:
            self.selected = devs[0] if devs else None
        return device_series(self.selected) if self.selected else []

    def subtitle(self, view: View) -> str:
        if not self.selected:
            return ""
        role = view.history.devices.get(self.selected)
        return (f"chart: {self.selected}" + (f" ({ROLE_MARK.get(role, role)})" if role else "")
                + ("  ↑↓ select" if len(view.history.devices) > 1 else ""))

    def text(self, view: View, width: int, height: int) -> list[Line]:
        devs = ordered(view.history.devices)
        return self.table_lines(view, devs, width) if devs else []

    def empty_text(self, view: View) -> str | None:
        return view.session.why_no_os() if not view.history.devices else None

    def table_lines(self, view: View, devs: list[str], width: int) -> list[Line]:
        h, t1 = view.history, view.t1
        split = width >= 62  # room for read and write MB/s apart
        cols = ["r/s", "w/s"] + (["rMB/s", "wMB/s"] if split else ["MB/s"]) + ["r_aw", "w_aw", "aqu", "util"]
        # iostat's flush columns (fsync/fdatasync reaching the device) when there is room for them
        flush = width >= 1 + 9 + 5 + 6 * (len(cols) + 2) and any(
            h.has(M.disk(d, M.DISK_F_S)) for d in devs)
        if flush:
            cols[-2:-2] = ["f/s", "f_aw"]
        cw = 6 if width >= 1 + 9 + 5 + 6 * len(cols) else 5
        name_w = max(8, min(13, width - 6 - cw * len(cols)))
        head = " " + "device".ljust(name_w) + "role " + "".join(c.rjust(cw) for c in cols)
        lines: list[Line] = [((head[:width], "muted"),)]
        sel_i = devs.index(self.selected) if self.selected in devs else 0
        first = max(0, min(sel_i - MAX_ROWS + 1, len(devs) - MAX_ROWS)) if sel_i >= MAX_ROWS else 0
        for dev in devs[first:first + MAX_ROWS]:
            names = _metric_names(dev)
            g = lambda f: h.latest(names[f], t1)  # noqa: E731
            num = (lambda v: fmt.si(v, 2)) if cw < 6 else fmt.si  # values stay under the column width
            rkb, wkb = g(M.DISK_RKB_S), g(M.DISK_WKB_S)
            vals = [num(g(M.DISK_R_S)), num(g(M.DISK_W_S))]
            if split:
                vals += [_mb(rkb, num), _mb(wkb, num)]
            else:
                vals += [_mb((rkb or 0) + (wkb or 0), num) if rkb is not None or wkb is not None else "-"]
            vals += [fmt.ms(g(M.DISK_R_AWAIT_MS)), fmt.ms(g(M.DISK_W_AWAIT_MS))]
            if flush:
                vals += [num(g(M.DISK_F_S)), fmt.ms(g(M.DISK_F_AWAIT_MS))]
            vals += [num(g(M.DISK_AQU_SZ)), fmt.pct(g(M.DISK_UTIL_PCT))]
            util = g(M.DISK_UTIL_PCT) or 0
            mark = ROLE_MARK.get(h.devices.get(dev) or "", "")
            sel = dev == self.selected
            name = (dev[: name_w - 1] + " ").ljust(name_w)
            runs = [("▸" if sel else " ", "primary"), (name, "bold" if sel else None),
                    (mark.ljust(5), "accent"), ("".join(_cell(v, cw) for v in vals[:-1]), None),
                    (_cell(vals[-1], cw), "crit" if util >= 90 else ("warn" if util >= 60 else None))]
            lines.append(tuple(runs))
        return lines


@lru_cache(maxsize=64)
def _metric_names(dev: str) -> dict[str, str]:
    """The device's metric names by field, written once, not once per figure per tick."""
    return {f: M.disk(dev, f) for f in (M.DISK_R_S, M.DISK_W_S, M.DISK_RKB_S, M.DISK_WKB_S, M.DISK_R_AWAIT_MS,
                                        M.DISK_W_AWAIT_MS, M.DISK_F_S, M.DISK_F_AWAIT_MS, M.DISK_AQU_SZ,
                                        M.DISK_UTIL_PCT)}


def _cell(value: str, width: int) -> str:
    """A right-aligned column that always keeps a space before it (0.00 and 0.001 never glue)."""
    return " " + value.rjust(width - 1)


def _mb(kb: float | None, num=fmt.si) -> str:
    return "-" if kb is None else num(kb / 1024)
