"""Checkpoint pane: is one running, which kind, how far along, when is the next one due (time, WAL)."""

from __future__ import annotations

from pgio_tui.sources.checkpoint_rows import checkpoint_buffers
from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui import drawing
from pgio_tui.tui.plot import ChartSpec, Line, Run
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View


CHART = ChartSpec(
    series=(series_of(M.CHECKPOINT_PROGRESS, "chart-1"), series_of(M.CHECKPOINT_TIME_PROGRESS, "chart-2"),
            series_of(M.CHECKPOINT_WAL_PROGRESS, "chart-3")),
    fixed_max={0: 1.0},
    empty_text="waiting for the first tick",
)
LABEL = 9


class CheckpointPane(ChartPane):
    SPEC = PaneSpec(
        "Checkpoint", CHART, ("checkpoint",), layout="text-above", name="checkpoint", short="Ckpt", vital_rank=0,
        help="running or idle and its kind; progress: the running checkpoint's estimated progress (buffers "
             "written vs the estimate, or its schedule); time: since the last start, of checkpoint_timeout; "
             "WAL: toward the WAL-triggered one. Settings as in force at each tick.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        if view.now(M.CHECKPOINT_ACTIVE):
            return [("CKPT ", "warn"),
                    (f"{fmt.pct(view.now(M.CHECKPOINT_PROGRESS), 100)} {view.now(M.CHECKPOINT_KIND) or ''}", None)]
        return [("ckpt ", "muted"), ("idle", None)]

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return self.text_lines(view, width)

    @staticmethod
    def text_lines(view: View, width: int) -> list[Line]:
        h, s, t1 = view.history, view.session, view.t1
        get = lambda name: h.latest(name, t1)  # noqa: E731
        if h.frame_index(t1) < 0:
            return [(("waiting for the first tick", "muted"),)]
        active = bool(get(M.CHECKPOINT_ACTIVE))
        kind = get(M.CHECKPOINT_KIND) or ""
        # The settings in force at the shown tick (recorded per tick); older recordings: the start's.
        timeout = get(M.CHECKPOINT_TIMEOUT_S) or s.setting_seconds("checkpoint_timeout")
        time_p, wal_p = get(M.CHECKPOINT_TIME_PROGRESS), get(M.CHECKPOINT_WAL_PROGRESS)
        bar_w = max(4, min(30, width - LABEL - 28))

        def bar(label: str, frac, style: str, note: str) -> Line:
            done, rest = drawing.bar(frac, bar_w)
            return ((label.ljust(LABEL), "muted"), (done, style), (rest, "axis"),
                    (f" {fmt.fraction(frac):>4} ", None), (note, "muted"))

        # One meaning per label, as in the chart's legend: "progress" is the running checkpoint's
        # estimated progress, "time" the time since the last start against checkpoint_timeout.
        timebar = bar("time", time_p, "chart-2", f"of {fmt.duration(timeout)}" if timeout else "timeout unknown")
        if active:
            elapsed = get(M.CHECKPOINT_ELAPSED_S)
            written, estimate = get(M.CHECKPOINT_BUFFERS_WRITTEN), get(M.CHECKPOINT_BUFFERS_ESTIMATE)
            state: Line = (("● ", "warn"), ("checkpoint running", "bold"), (f" {kind}", "warn"),
                           (f" · {fmt.duration(elapsed)} elapsed", "muted"))
            buf_note = f"{fmt.si(written)}/{fmt.si(estimate)} buf" if estimate else f"{fmt.si(written)} buf"
            buffers = bar("progress", get(M.CHECKPOINT_PROGRESS), "chart-1", buf_note)
        else:
            due = timeout * (1 - time_p) if timeout and time_p is not None else None
            state = (("○ ", "muted"), ("idle", None),
                     (f" · next timed in {fmt.duration(due)}" if due is not None else "", "muted"),
                     (f" · last kind {kind}" if kind else "", "muted"))
            buffers = bar("progress", None, "chart-1", "idle")
        walbar = bar("WAL", wal_p, "chart-3", "to a WAL-triggered one")
        return [state, buffers, timebar, walbar, _last_line(h.checkpoints, t1)]


def _last_line(checkpoints: list[dict], t1: float) -> Line:
    done = [c for c in checkpoints if (c.get("end_t") or 0) <= t1]
    if not done:
        return (("last: none finished in this window yet", "muted"),)
    c = done[-1]
    text = f"{c.get('kind') or '?'}, {fmt.si(checkpoint_buffers(c))} buf"
    if c.get("total_s") is not None:
        text += f" in {c['total_s']:.1f}s"
    if c.get("sync_s") is not None:
        text += f" (sync {c['sync_s']:.1f}s)"
    ago = t1 - c["end_t"] if c.get("end_t") else None
    return (("last: ", "muted"), (text, None), (f", {fmt.duration(ago)} ago" if ago is not None else "", "muted"))
