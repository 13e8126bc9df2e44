"""Waits: what sessions wait on, sampled each tick from pg_stat_activity (every few ticks with many
processes: sources/backends.backends_every), as bars over the window."""

from __future__ import annotations

import textwrap

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.sources.pg_counters import wait_name, wait_type_key
from pgio_tui.tui.drawing import bar
from pgio_tui.tui.plot import ChartSpec, Line, Run
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

CHART = ChartSpec(series=(  # the figures "now": the last wait sample's (taken every few ticks with many processes)
    series_of(M.SESSIONS_ACTIVE, "chart-1"),
    series_of(M.SESSIONS_IO_WAIT, "chart-2"),
    series_of(M.SESSIONS_LOCK_WAIT, "chart-5"),
))
SHORT = {"client backend": "client", "checkpointer": "ckpt", "background writer": "bgw",
         "autovacuum worker": "autovac", "autovacuum launcher": "av-launch", "walwriter": "walwr",
         "walsender": "walsnd", "background worker": "bgworker", "startup": "startup",
         "logical replication launcher": "logrepl", "io worker": "io-wrk"}
MIN_BAR = 8
TYPE_STYLE = {"IO": "chart-2", "Lock": "chart-5", "LWLock": "chart-4", "CPU": "chart-1", "Timeout": "chart-6",
              "IPC": "chart-3", "Client": "chart-6", "Buffer": "chart-5", "Extension": "chart-6"}


class WaitsPane(ChartPane):
    SPEC = PaneSpec(
        "Waits (sampled sessions)", CHART, ("waits",), layout="chart-above", text_name="bars", name="waits",
        short="Waits", vital_rank=5, help="wait events of sampled sessions: mean over the window, now.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        io = view.history.latest_sampled(M.SESSIONS_IO_WAIT, view.t1)
        return [] if io is None else [("IO wait ", "muted"), (str(io), "warn" if io else None)]

    def subtitle(self, view: View) -> str:
        parts = [] if view.session.read_all_stats else ["own sessions only: needs pg_monitor"]
        sampled, ticks = view.history.waits_sampled(view.t0, view.t1)
        if sampled and ticks >= 1.5 * sampled:  # many processes: pg_stat_activity read every few ticks
            parts.append(f"sampled every {fmt.duration(ticks / sampled * view.session.interval)}")
        return "; ".join(parts)

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return self.bar_lines(view, width, height)

    @staticmethod
    def bar_lines(view: View, width: int, height: int) -> list[Line]:
        top = view.history.waits_summary(view.t0, view.t1, top=max(1, height - 1))
        if not top:
            why = view.session.why_no_waits()
            if view.session.read_all_stats and not view.history.waits_sampled(view.t0, view.t1)[0]:
                why = "no wait sample in this window"
            return [(("", None),), *(((part, "muted"),) for part in textwrap.wrap(why, max(10, width - 1)))]
        # Names get the room they need; bars take what is left (at least MIN_BAR).
        labels = [f"{wait_name(wt, ev)} ({SHORT.get(bt, bt)})" for (bt, wt, ev), _, _ in top]
        label_w = max(14, min(max(map(len, labels)), width - 12 - MIN_BAR))
        bar_w = max(4, width - label_w - 12)
        biggest = max(mean for _, mean, _ in top) or 1.0
        mean_head = "mean/" + fmt.window(view.t1 - view.t0)
        head = f"{'wait event (backend)'.ljust(label_w)} {mean_head:>{bar_w + 5}}{'now':>4}"
        lines: list[Line] = [((head, "muted"),)]
        for (bt, wt, ev), mean, now in top:
            who = SHORT.get(bt, bt)
            text = f"{wait_name(wt, ev)} ({who})"
            if len(text) > label_w:  # the event says more than its type (the colour tells the type)
                text = f"{ev} ({who})"
            if len(text) > label_w:
                text = (ev[: max(1, label_w - len(who) - 4)] + "… (" + who + ")")[:label_w]
            done, _rest = bar(mean / biggest, bar_w)
            lines.append(((text.ljust(label_w) + " ", None), (done.ljust(bar_w), TYPE_STYLE.get(wait_type_key(wt) or "", "chart-6")),
                          (f"{fmt.si(mean):>5}", None), (f"{now:>4}", "muted")))
        return lines
