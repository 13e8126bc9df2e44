"""DiffSeries: both runs of a Comparison as per-tick series on its aligned axis, loaded once.

Textual-free, like history.py. Each run becomes a FrameHistory whose time is x = t − origin (seconds
since the comparison's alignment point), so the live view's chart code draws A and B on one axis
(a plot.Series may name the history it comes from). Each side is read in one query over its
comparison window; redraws only read these histories.

Device metrics are named by role in chart templates (`disk.{PGDATA}.util_pct`) and resolved to each
run's own device (the Summary's role_devices), since two machines name their disks differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pgio_tui.analysis.compare import Comparison, Row
from pgio_tui.analysis.summary_model import Summary
from pgio_tui.frame import Frame
from pgio_tui.store.reader import Recording
from pgio_tui.tui.history import FrameHistory


@dataclass
class Run:
    """One side of the comparison: its summary and its series on the aligned axis."""

    label: str  # "A" or "B"
    summary: Summary
    history: FrameHistory
    metrics: set[str] = field(default_factory=set)  # what was loaded (and holds data)

    def resolve(self, template: str) -> str | None:
        """The metric a template names in this run (`{PGDATA}` -> its device), None when absent."""
        try:
            name = template.format_map(self.summary.role_devices)
        except (KeyError, IndexError, ValueError):
            return None
        return name if name in self.metrics else None

    @property
    def checkpoint_spans(self) -> list[tuple[float, float, str]]:
        return self.summary.checkpoint_spans

    @property
    def setting_events(self) -> list[tuple[float, str]]:
        return self.summary.setting_events


@dataclass
class DiffSeries:
    comparison: Comparison
    a: Run
    b: Run

    @property
    def runs(self) -> tuple[Run, Run]:
        return self.a, self.b

    @property
    def length(self) -> float:
        """Seconds on the aligned axis (both windows have this length)."""
        return max(self.a.summary.window.length, self.b.summary.window.length)

    def row_for(self, metric_a: str | None, metric_b: str | None, stat: str | None = None,
                key: tuple[str, str] | None = None) -> Row | None:
        """The comparison row behind a pair of series: the row `key` (Row.key) when given, else the
        statistic `stat` of those metrics (Row.stat), else the first row that uses them."""
        if key is not None:
            return next((r for r in self.comparison.rows if r.key == key), None)
        rows = [r for r in self.comparison.rows
                if (metric_a and r.metric_a == metric_a) or (metric_b and r.metric_b == metric_b)]
        if stat is not None:
            return next((r for r in rows if r.stat == stat), None)
        return rows[0] if rows else None


def row_metrics(comparison: Comparison) -> tuple[set[str], set[str]]:
    """Every metric the comparison's rows name, per side."""
    a = {r.metric_a for r in comparison.rows if r.metric_a}
    b = {r.metric_b for r in comparison.rows if r.metric_b}
    return a, b


def _wanted(rec: Recording, summary: Summary, templates: Iterable[str], extra: set[str]) -> list[str]:
    have = set(rec.metric_names())
    out: dict[str, None] = {}
    for t in templates:
        try:
            out[t.format_map(summary.role_devices)] = None
        except (KeyError, IndexError, ValueError):
            pass
    for m in sorted(extra):
        out[m] = None
    return [m for m in out if m in have]


def load_run(rec: Recording, label: str, summary: Summary, templates: Iterable[str] = (),
             extra: set[str] | None = None) -> Run:
    """Read one run's window (one query) into a FrameHistory on the aligned axis."""
    win = summary.window
    metrics = _wanted(rec, summary, templates, extra or set())
    n = 0 if win.start_tick is None or win.end_tick is None else win.end_tick - win.start_tick + 1
    history = FrameHistory(capacity=max(16, n))
    loaded: set[str] = set()
    if win.start_tick is not None:
        for row in rec.rows(metrics, win.start_tick, win.end_tick):
            tick, t, elapsed, values = row[0], row[1], row[2], row[3:]
            history.push(Frame(tick=tick, t=t - win.origin_t, elapsed=elapsed, dt=None,
                               values=dict(zip(metrics, values))))
        loaded = {m for m in metrics if history.has(m)}
    return Run(label, summary, history, loaded)


def load_series(comparison: Comparison, templates: Iterable[str] = ()) -> DiffSeries:
    """Open both recordings once and load the series the charts (`templates`) and rows need."""
    templates = list(templates)
    extra_a, extra_b = row_metrics(comparison)
    with Recording(comparison.a.path) as ra:
        a = load_run(ra, "A", comparison.a, templates, extra_a)
    with Recording(comparison.b.path) as rb:
        b = load_run(rb, "B", comparison.b, templates, extra_b)
    return DiffSeries(comparison, a, b)
