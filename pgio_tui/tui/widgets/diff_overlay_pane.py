"""OverlayPane: one metric of run A and run B on the comparison's aligned time axis.

The diff screen's chart pane. It is the live view's Pane (one widget, sections of lines) drawing the
live view's Chart, with each series taken from its run's history (plot.Series.history), so A and B
share one y scale and one x axis: seconds since the alignment point. Below the plot a strip marks
the checkpoints of A (upper half, A's colour) and B (lower half, B's colour), and the axis is
labelled in seconds. The legend quotes the comparison row behind the metric: A, B, change, verdict.

A pane offers a few metrics of its group (↑↓ when focused): two runs in two colours stay readable
only with one metric per chart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from textual.binding import Binding

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.analysis.compare import Row
from pgio_tui.analysis.formats import change
from pgio_tui.metrics import lookup
from pgio_tui.safe_text import plain_text
from pgio_tui.tui.diff_series import DiffSeries, Run
from pgio_tui.tui.drawing import fit
from pgio_tui.tui.plot import GUTTER, ChartSpec, Line, Run as Cell, Series
from pgio_tui.tui.widgets.chart import Chart, hline_of
from pgio_tui.tui.widgets.pane import Pane, Section, View

STYLE = {"A": "diff-a", "B": "diff-b"}
# Dirty's reference lines, (metric, style): labelled and formatted as the catalog says.
THRESHOLDS = ((M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB, "warn"), (M.MEM_DIRTY_THRESHOLD_KB, "crit"))


@dataclass(frozen=True)
class Choice:
    """One metric a pane can chart. `template` may name a device role (`disk.{PGDATA}.util_pct`);
    `pair` gives the two runs' metrics outright (a summary row's metric_a / metric_b). Its format
    and y maximum come from the metric's catalog unit."""

    label: str
    template: str = ""
    stat: str | None = None  # which statistic of the metric the legend quotes (Row.stat); default: its first row
    row: tuple[str, str] | None = None  # or exactly this row, by its key (Row.key): a summary row's chart
    hlines: tuple[tuple[str, str], ...] = ()  # (metric, style) reference lines of both runs
    pair: tuple[str | None, str | None] | None = None

    def metric(self, run: Run) -> str | None:
        if self.pair is not None:
            name = self.pair[0 if run.label == "A" else 1]
            return name if name in run.metrics else None
        return run.resolve(self.template)

    @property
    def _any_metric(self) -> str | None:
        return self.template or next((m for m in self.pair or () if m), None)

    @property
    def fmt(self) -> Callable[[float | None], str]:
        return fmt_for(self._any_metric)

    @property
    def top(self) -> float | None:
        return top_for(self._any_metric)


def fmt_for(metric: str | None) -> Callable[[float | None], str]:
    """How a metric's values are written on an axis: the catalog's formatter of its unit."""
    m = lookup(metric) if metric else None
    return m.fmt if m else fmt.si


def top_for(metric: str | None) -> float | None:
    """A fixed y maximum for bounded units (%: 100, fractions: 1), as the live view has."""
    m = lookup(metric) if metric else None
    return {"%": 100.0, "0-1": 1.0}.get(m.unit) if m else None


def choice_for_row(row: Row | None) -> Choice | None:
    """The chart behind a summary row: its two series; Dirty against the threshold a row counts."""
    if row is None:
        return None
    a, b = row.metric_a, row.metric_b
    if a is None and b is None:
        if row.group == "checkpoints":
            return Choice(f"{row.name}: checkpoint progress", M.CHECKPOINT_PROGRESS)
        return None
    label = f"{row.name} ({row.unit})" if row.unit else row.name
    for metric, style in THRESHOLDS:
        if metric in (a, b):
            return Choice(label, pair=(M.MEM_DIRTY_KB, M.MEM_DIRTY_KB), row=row.key,
                          hlines=((metric, style),))
    return Choice(label, pair=(a, b), row=row.key)


def _role(role: str, fld: str) -> str:
    """A device metric template of a role: disk.{PGDATA}.util_pct (DiffSeries resolves the role)."""
    return M.disk("{" + role + "}", fld)


ROLES = ("PGDATA", "WAL", "TBLSPC")
# The panes of the Charts tab: (id, title, choices). Metrics a run lacks are skipped; a pane whose
# choices both runs lack says so.
CHART_PANES: tuple[tuple[str, str, tuple[Choice, ...]], ...] = (
    ("latency-p", "Latency percentiles", (
        Choice("p95 ms", M.LATENCY_P95_MS), Choice("p99 ms", M.LATENCY_P99_MS),
        Choice("p50 ms", M.LATENCY_P50_MS), Choice("max ms", M.LATENCY_MAX_MS))),
    ("latency-m", "Latency mean / tps", (
        Choice("mean ms", M.LATENCY_MEAN_MS), Choice("stddev ms", M.LATENCY_STDDEV_MS),
        Choice("tps", M.LATENCY_TPS))),
    ("writes", "Buffers written by source /s", (
        Choice("backend /s", M.WRITES_BACKEND), Choice("checkpointer /s", M.WRITES_CHECKPOINTER),
        Choice("bgwriter /s", M.WRITES_BGWRITER), Choice("autovacuum /s", M.WRITES_AUTOVACUUM),
        Choice("other /s", M.WRITES_OTHER), Choice("backend fsyncs /s", M.FSYNCS_BACKEND))),
    ("memory", "Dirty / Writeback", (
        Choice(M.BY_NAME[M.MEM_DIRTY_KB].label, M.MEM_DIRTY_KB, stat="mean", hlines=THRESHOLDS),
        Choice(M.BY_NAME[M.MEM_WRITEBACK_KB].label, M.MEM_WRITEBACK_KB, stat="mean", hlines=THRESHOLDS))),
    ("devices", "Devices by role", tuple(
        c for role in ROLES for c in (
            Choice(f"{role} util %", _role(role, M.DISK_UTIL_PCT), stat="mean"),
            Choice(f"{role} w_await ms", _role(role, M.DISK_W_AWAIT_MS), stat="mean"),
            Choice(f"{role} r_await ms", _role(role, M.DISK_R_AWAIT_MS), stat="mean"),
            Choice(f"{role} write /s", _role(role, M.DISK_WKB_S), stat="mean")))),
    ("checkpoints", "Checkpoints", (  # drawn by CheckpointsPane
        Choice("progress", M.CHECKPOINT_PROGRESS),
        Choice("checkpointer writes /s", M.WRITES_CHECKPOINTER, stat="total"))),
)


def one_per_device(choices: Sequence[Choice], runs: Sequence[Run]) -> list[Choice]:
    """A device holding two roles in both runs (pg_wal on PGDATA's disk) is offered once, named by
    both ("PGDATA+WAL util %"), as the summary's device_labels names it: not twice as two devices."""
    out: list[Choice] = []
    first: dict[tuple, int] = {}
    for c in choices:
        key = tuple(c.metric(r) for r in runs) if "{" in c.template else None
        if key is not None and key in first:
            i = first[key]
            roles, what = out[i].label.split(" ", 1)
            out[i] = replace(out[i], label=f"{roles}+{c.label.split(' ', 1)[0]} {what}")
            continue
        if key is not None:
            first[key] = len(out)
        out.append(c)
    return out


def chart_templates() -> list[str]:
    """Every metric template the Charts tab may draw (what the loader reads)."""
    out = [c.template for _, _, choices in CHART_PANES for c in choices if c.template]
    return out + [M.CHECKPOINT_PROGRESS] + [m for m, _ in THRESHOLDS]


class OverlayPane(Pane):
    BINDINGS = [
        Binding("up,k", "choose(-1)", "Prev metric", show=False),
        Binding("down,j", "choose(1)", "Next metric", show=False),
    ]
    DEFAULT_CSS = """
    OverlayPane { height: 1fr; }
    """

    def __init__(self, data: DiffSeries, title: str, choices: Sequence[Choice] = (), *, key: str = "",
                 id: str | None = None, empty_text: str = "neither run recorded this"):
        super().__init__(id=id)
        self.data = data
        self.title = title
        self.key = key
        self.empty_text = empty_text
        self.border_title = plain_text(f"{key} {title}".strip())
        self.choices: list[Choice] = []
        self.selected = 0
        self._charts: dict[Choice, Chart] = {}
        self.set_choices(choices)

    # --- what is charted ------------------------------------------------------------------------

    def set_choices(self, choices: Sequence[Choice], title: str | None = None) -> None:
        """Chart these (the ones either run has); keeps the selection when it is still offered."""
        current = self.choice
        offered = [c for c in choices if any(c.metric(r) for r in self.data.runs)]
        self.choices = one_per_device(offered, self.data.runs) or list(choices[:1])
        self.selected = self.choices.index(current) if current in self.choices else 0
        if title is not None:
            self.title = title
            self.border_title = plain_text(f"{self.key} {title}".strip())
        if self._view is not None:
            self.draw(self._view, force=True)

    @property
    def choice(self) -> Choice | None:
        return self.choices[self.selected] if self.choices else None

    def action_choose(self, step: int) -> None:
        if len(self.choices) > 1:
            self.selected = (self.selected + step) % len(self.choices)
            if self._view is not None:
                self.draw(self._view, force=True)

    def _chart(self, choice: Choice) -> Chart:
        chart = self._charts.get(choice)
        if chart is None:
            hlines = []
            for run in self.data.runs:
                for metric, style in choice.hlines:
                    if metric in run.metrics:
                        hlines.append(hline_of(metric, style, label=f"{run.label} {M.BY_NAME[metric].label}",
                                               history=run.history))
            spec = ChartSpec(series=(), hlines=tuple(hlines), legend=False, empty_text=self.empty_text,
                             fixed_max={0: choice.top} if choice.top else {})
            chart = self._charts[choice] = Chart(spec)
            chart.series = [Series(m, run.label, STYLE[run.label], fmt=choice.fmt, history=run.history)
                            for run in self.data.runs if (m := choice.metric(run))]
        return chart

    # --- drawing --------------------------------------------------------------------------------

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        choice = self.choice
        hint = "  ↑↓" if len(self.choices) > 1 else ""
        self.set_subtitle((choice.label if choice else "") + hint)
        if choice is None:
            return [("legend", [(("nothing to chart for this row", "muted"),)])]
        extra = self.extra_lines(width)
        legend = [self.legend(choice, width)] if height >= 5 else []
        rest = height - len(legend) - len(extra)
        plot_w = width - GUTTER
        if rest < 4 or plot_w < 8:
            return [("legend", legend), ("text", extra[: max(0, height - len(legend))])]
        length = self.data.length or 1.0
        t0, t1 = -length / (2 * plot_w - 1), length  # x = 0 on the first dot column
        chart = self._chart(choice)
        plot = chart.lines(view.history, t0, t1, width, rest - 1)[:-1]  # our own axis below
        dot_s = (t1 - t0) / (2 * plot_w)
        axis = [self.span_line(plot_w, 2 * dot_s), axis_line(plot_w, 2 * dot_s, length)]
        return [("legend", legend), ("chart", plot + axis), ("text", extra)]

    def extra_lines(self, width: int) -> list[Line]:
        """Text under the chart (a subclass's); none by default."""
        return []

    def legend(self, choice: Choice, width: int) -> Line:
        """A and B (the summary row's figures when there is one), change and verdict, then the
        row's name: what matters most first, as the line may be cut."""
        ma, mb = (choice.metric(r) for r in self.data.runs)
        row = self.data.row_for(ma, mb, choice.stat, choice.row) if choice.row or ma or mb else None
        if row is not None:
            va, vb, unit, what = fmt.number(row.a, row.unit), fmt.number(row.b, row.unit), row.unit, row.name
        else:  # no statistic behind it: the plain mean of the ticks
            va = choice.fmt(_mean(self.data.a.history, ma)) if ma else "–"
            vb = choice.fmt(_mean(self.data.b.history, mb)) if mb else "–"
            unit, what = "", "mean of the ticks"
        runs: list[Cell] = [("■", "diff-a"), ("A ", "muted"), (va, None), ("  ", None),
                            ("■", "diff-b"), ("B ", "muted"), (vb, None)]
        if unit:
            runs.append((f" {unit}", "muted"))
        if row is not None:
            verdict = row.verdict
            runs += [("  ", None), (change(row), "bold" if verdict == "changed" else None)]
            if verdict:
                runs += [(" ", None), (verdict, "warn" if verdict == "changed" else "muted")]
        runs.append((f"  {what}", "muted"))
        return fit(runs, width)

    def span_line(self, plot_w: int, cell_s: float) -> Line:
        return span_line(self.data.a, self.data.b, plot_w, cell_s)


def _mean(history, metric: str) -> float | None:
    vals = [v for v in history.series.get(metric, ()) if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(vals) / len(vals) if vals else None


def _cells_of(spans: Sequence[tuple[float, float, str]], plot_w: int, cell_s: float) -> list[bool]:
    marked = [False] * plot_w
    for start, end, _kind in spans:
        a = max(0, math.floor(start / cell_s + 0.5))
        b = min(plot_w - 1, math.floor(end / cell_s + 0.5))
        for c in range(a, b + 1):
            marked[c] = True
    return marked


def span_line(a: Run, b: Run, plot_w: int, cell_s: float) -> Line:
    """Checkpoint spans of both runs on one line: ▀ A, ▄ B, both: A's colour over B's; ◆ a setting
    changed during a run (in that run's colour)."""
    in_a = _cells_of(a.checkpoint_spans, plot_w, cell_s)
    in_b = _cells_of(b.checkpoint_spans, plot_w, cell_s)
    cells: list[Cell] = []
    for c in range(plot_w):
        if in_a[c] and in_b[c]:
            cells.append(("▀", "diff-both"))
        elif in_a[c]:
            cells.append(("▀", "diff-a"))
        elif in_b[c]:
            cells.append(("▄", "diff-b"))
        else:
            cells.append((" ", None))
    for run in (a, b):
        for x, _text in run.setting_events:
            c = math.floor(x / cell_s + 0.5)
            if 0 <= c < plot_w:
                cells[c] = ("◆", STYLE[run.label])
    runs: list[Cell] = [("ckpt".rjust(GUTTER - 1) + "│", "axis")]
    for text, style in cells:  # one run per stretch of one style
        if runs and runs[-1][1] == style and len(runs) > 1:
            runs[-1] = (runs[-1][0] + text, style)
        else:
            runs.append((text, style))
    return tuple(runs)


def axis_line(plot_w: int, cell_s: float, length: float) -> Line:
    """The aligned x axis: seconds since the alignment point, labelled at 0, the quarters (when there
    is room) and the end."""
    cells = ["─"] * plot_w
    parts = 4 if plot_w >= 60 else 2
    marks = [length * i / parts for i in range(parts + 1)]
    for i, x in enumerate(marks):
        label = fmt.duration(x)
        c = min(plot_w - 1, math.floor(x / cell_s + 0.5))
        start = c if i == 0 else (c - len(label) + 1 if i == parts else c - len(label) // 2)
        start = max(0, min(plot_w - len(label), start))
        if all(ch == "─" for ch in cells[max(0, start - 1):start + len(label) + 1]):
            cells[start:start + len(label)] = list(label)
    return (("x s".rjust(GUTTER - 1) + "└", "axis"), ("".join(cells), "axis"))


class CheckpointsPane(OverlayPane):
    """The checkpoint chart, and under it each run's checkpoints: kind and when (x seconds)."""

    def extra_lines(self, width: int) -> list[Line]:
        lines = []
        for run in self.data.runs:
            spans = run.checkpoint_spans
            runs: list[Cell] = [("■", STYLE[run.label]), (f"{run.label} ", "muted")]
            if not spans:
                runs.append(("no checkpoint in the window", "muted"))
            else:
                runs.append((checkpoint_count_text(run.summary), None))
                runs.append(("  " + " ".join(f"{fmt.duration(s)}–{fmt.duration(e)}" for s, e, _ in spans[:6])
                             + (" …" if len(spans) > 6 else ""), "muted"))
            lines.append(fit(runs, width))
        return lines


def checkpoint_count_text(summary) -> str:
    """The Summary tab's count (checkpoints that started and finished in the window, by kind), and
    what else the chart shades: one begun before the window or still running at its end."""
    count = int(summary.value("checkpoints", "count") or 0)
    kinds = [(st.name[len("count ("):-1], int(st.value or 0)) for st in summary.stats
             if st.group == "checkpoints" and st.name.startswith("count (")]
    text = f"{count} in the window" + (f" ({', '.join(f'{k} {n}' for k, n in kinds)})" if kinds else "")
    other = len(summary.checkpoint_spans) - count
    return text + (f" + {other} overlapping its edges" if other > 0 else "")
