"""WAL: how much WAL, how many records and full-page images, and what writing and flushing it costs,
with the WAL device's iostat figures (its flushes are the commits' fsyncs)."""

from __future__ import annotations

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.ratios import fpi_share, per_op_ms
from pgio_tui.tui.plot import ChartSpec, Line
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

CHART = ChartSpec(series=(
    series_of(M.WAL_BYTES_S, "chart-1", label="WAL B/s"),
    series_of(M.WAL_SYNCS_S, "chart-2", label="syncs/s", group=1),
    series_of(M.WAL_FPI_S, "chart-3", label="FPI/s", group=1),
), empty_text="rates start at the second tick")


def wal_device(view: View) -> str | None:
    """The device pg_wal lives on (its own before one shared with the data)."""
    devs = view.history.devices
    return next((d for d, r in devs.items() if r == "wal"), None) or next(
        (d for d, r in devs.items() if r and "wal" in r.split(",")), None)


def mean(view: View, metric: str) -> float | None:
    """A rate's mean over the view's window (its total over the window's length)."""
    h = view.history
    tot = h.total(metric, view.t0, view.t1)
    w = h.window(metric, view.t0, view.t1)
    return tot / (w.t[-1] - w.t[0]) if tot is not None and len(w.t) > 1 and w.t[-1] > w.t[0] else None


WAL_WRITERS = 3  # backend types in the WAL-by-writer lines


class WalPane(ChartPane):
    SPEC = PaneSpec("WAL", CHART, ("wal",), layout="text-above", key="W")

    def subtitle(self, view: View) -> str:
        if not view.history.has(M.WAL_RECORDS_S) and view.history.has(M.WAL_BYTES_S):
            return "no pg_stat_wal (PG 13): WAL bytes only"
        return ""

    def text(self, view: View, width: int, height: int) -> list[Line]:
        h, t1 = view.history, view.t1
        now = lambda m: h.latest(m, t1)  # noqa: E731
        lines = [self.figures("now", view, now), self.figures(f"{fmt.window(t1 - view.t0)} mean", view,
                                                                 lambda m: mean(view, m))]
        io: list = [(" " * 8, None)]
        timing = view.session.settings.get("track_wal_io_timing")
        for label, ops, time_ms in (("writes", M.WAL_WRITES_S, M.WAL_WRITE_TIME_MS_S),
                                    ("syncs", M.WAL_SYNCS_S, M.WAL_SYNC_TIME_MS_S)):
            n = now(ops)
            if n is None and not h.has(ops):
                continue
            io += [(label + " ", "muted"), (fmt.si(n) + "/s", None)]
            each = per_op_ms(now(time_ms), n) if timing != "off" else None
            io += [(f" {fmt.ms(each)} ms each  ", None) if each is not None else ("  ", None)]
        if timing == "off" and len(io) > 1:
            io.append(("(times: track_wal_io_timing off)", "muted"))
        if len(io) > 1:
            lines.insert(1, tuple(io))
        dev = wal_device(view)
        if dev is not None:
            g = lambda f: h.latest(M.disk(dev, f), t1)  # noqa: E731
            runs: list = [("WAL device ", "muted"), (dev, "accent"), ("  w/s ", "muted"), (fmt.si(g(M.DISK_W_S)), None),
                          ("  wMB/s ", "muted"), (fmt.si(None if g(M.DISK_WKB_S) is None else g(M.DISK_WKB_S) / 1024), None),
                          ("  w_aw ", "muted"), (fmt.ms(g(M.DISK_W_AWAIT_MS)), None)]
            if h.has(M.disk(dev, M.DISK_F_S)):
                runs += [("  f/s ", "muted"), (fmt.si(g(M.DISK_F_S)), None),
                         ("  f_aw ", "muted"), (fmt.ms(g(M.DISK_F_AWAIT_MS)) + " ms", None)]
            lines.append(tuple(runs))
        lines += self.writer_lines(view)
        return lines

    @staticmethod
    def writer_lines(view: View) -> list[Line]:
        """18+: who writes and flushes WAL (pg_stat_io object wal, context normal) over the window, with
        the mean ms per write and per flush (track_wal_io_timing; "-" while it is off)."""
        rows = sorted(((bt, r) for (bt, obj, ctx), r in view.history.io_summary(view.t0, view.t1).items()
                       if obj == "wal" and ctx == "normal" and (r["writes"] or r["fsyncs"])),
                      key=lambda kv: -(kv[1]["writes"] or 0.0))[:WAL_WRITERS]
        if not rows:
            return []
        out: list[Line] = [((f"WAL by writer, {fmt.window(view.t1 - view.t0)} mean", "muted"),)]
        for bt, r in rows:
            out.append(((f"  {bt[:20]:<20}", None), ("writes ", "muted"), (fmt.si(r["writes"]) + "/s", None),
                        (f" {fmt.ms(r['write_ms_per_op'])} ms", None), ("  flushes ", "muted"),
                        (fmt.si(r["fsyncs"]) + "/s", None), (f" {fmt.ms(r['fsync_ms_per_op'])} ms", None)))
        return out

    @staticmethod
    def figures(label: str, view: View, get) -> Line:
        runs: list = [(label.ljust(7) + " ", "muted"), ("WAL ", "muted"), (fmt.si(get(M.WAL_BYTES_S)) + "B/s", "bold")]
        if view.history.has(M.WAL_RECORDS_S):
            fpi, rec = get(M.WAL_FPI_S), get(M.WAL_RECORDS_S)
            share = fpi_share(fpi, rec)
            runs += [("  records ", "muted"), (fmt.si(rec) + "/s", None), ("  FPI ", "muted"), (fmt.si(fpi) + "/s", None),
                     (f" ({fmt.fraction(share)} of records)" if share is not None else "", "muted"),
                     ("  buffers full ", "muted"), (fmt.si(get(M.WAL_BUFFERS_FULL_S)) + "/s",
                                                   "warn" if get(M.WAL_BUFFERS_FULL_S) else None)]
        return tuple(runs)
