"""Checkpoint pane: is one running, which kind, how far along, when is the next one due (time, WAL)."""

from __future__ import annotations

from pgio_tui.sources.checkpoint import checkpoint_buffers
from pgio_tui.tui import format as fmt
from pgio_tui.tui.plot import ChartSpec, Line, Series
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View


def _frac(v: float | None) -> str:
    return fmt.pct(v, 100)


CHART = ChartSpec(
    series=(Series("checkpoint.progress", "progress", "chart-1", fmt=_frac),
            Series("checkpoint.time_progress", "time", "chart-2", fmt=_frac),
            Series("checkpoint.wal_progress", "WAL", "chart-3", fmt=_frac)),
    fixed_max={0: 1.0},
    empty_text="waiting for the first tick",
)
LABEL = 9


class CheckpointPane(ChartPane):
    SPEC = PaneSpec("1", "Checkpoint", CHART, ("checkpoint",), layout="text-above")

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return self.text_lines(view, width)

    @staticmethod
    def text_lines(view: View, width: int) -> list[Line]:
        h, s, t1 = view.history, view.session, view.t1
        get = lambda name: h.latest(name, t1)  # noqa: E731
        if h.frame_index(t1) < 0:
            return [(("waiting for the first tick", "muted"),)]
        active = bool(get("checkpoint.active"))
        kind = get("checkpoint.kind") or ""
        # The settings in force at the shown tick (recorded per tick); older recordings: the start's.
        timeout = get("checkpoint.timeout_s") or s.setting_seconds("checkpoint_timeout")
        time_p, wal_p = get("checkpoint.time_progress"), get("checkpoint.wal_progress")
        bar_w = max(4, min(30, width - LABEL - 28))

        def bar(label: str, frac, style: str, note: str) -> Line:
            done, rest = fmt.bar(frac, bar_w)
            return ((label.ljust(LABEL), "muted"), (done, style), (rest, "axis"),
                    (f" {_frac(frac):>4} ", None), (note, "muted"))

        # One meaning per label, as in the chart's legend: "progress" is the running checkpoint's
        # estimated progress, "time" the time since the last start against checkpoint_timeout.
        timebar = bar("time", time_p, "chart-2", f"of {fmt.duration(timeout)}" if timeout else "timeout unknown")
        if active:
            elapsed = get("checkpoint.elapsed_s")
            written, estimate = get("checkpoint.buffers_written"), get("checkpoint.buffers_estimate")
            state: Line = (("● ", "warn"), ("checkpoint running", "bold"), (f" {kind}", "warn"),
                           (f" · {fmt.duration(elapsed)} elapsed", "muted"))
            buf_note = f"{fmt.si(written)}/{fmt.si(estimate)} buf" if estimate else f"{fmt.si(written)} buf"
            buffers = bar("progress", get("checkpoint.progress"), "chart-1", buf_note)
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
