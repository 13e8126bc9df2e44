"""Pane: what every pane shares: border title, focus, tooltip, the View they draw, their sections.
ChartPane: the monitor panes and the extra views' panes, each a PaneSpec (title, chart, where its
text goes, its help and its place in the vitals line) and a few hooks (series, subtitle, text,
empty text, vital) instead of its own `__init__` and `sections`. The monitor's panes are the list
in tui/panes.py: their grid, number keys, tabs, help and vitals line follow from it.

A pane draws from a View (a FrameHistory, the SessionInfo and the time window) and never from a
sampler or a recording, so live, replay and diff use the same pane classes. A pane is one widget:
it stacks named sections (text, a table, a chart) into its lines and repaints only what changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgio_tui.metrics import CATALOG, DISK_METRICS
from pgio_tui.safe_text import plain_text
from pgio_tui.tui.drawing import fit as fit_runs
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import ChartSpec, Line, Run, Series
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.chart import Chart
from pgio_tui.tui.widgets.lines import LinesView
from pgio_tui.tui.window_sums import Rows, WindowSums, WindowTotals

Section = tuple[str, list[Line]]


@dataclass(frozen=True)
class View:
    """What a pane draws from: the history, the session and the time window."""

    history: FrameHistory
    session: SessionInfo
    t0: float
    t1: float

    def now(self, metric: str):
        """The metric's value at the window's end (the newest tick up to t1), None without one."""
        return self.history.latest(metric, self.t1)


class Pane(LinesView, can_focus=True):
    KEY = "0"
    TITLE = "pane"
    CATALOG_PANES: tuple[str, ...] = ()  # metric catalog panes whose help is this pane's tooltip

    DEFAULT_CSS = """
    Pane {
        height: 1fr;
        border: round $foreground 25%;
        border-title-color: $foreground-muted;
        border-subtitle-color: $warning;
        padding: 0 1 0 0;
    }
    Pane:focus { border: round $primary; border-title-color: $primary; }
    """

    def __init__(self, *, id: str | None = None, key: str | None = None):
        """`key`: the key that shows it (a monitor pane's number: its place in tui/panes.py)."""
        super().__init__(id=id)
        self.border_title = f"{key or self.KEY} {self.TITLE}"
        self._drawn: tuple | None = None
        self._view: View | None = None
        self._sections: dict[str, tuple[int, int]] = {}
        self._subtitle_text: str | None = None

    def on_mount(self) -> None:
        super().on_mount()
        metrics = [m for m in CATALOG + DISK_METRICS if m.pane in self.CATALOG_PANES]
        if metrics:
            self.tooltip = "\n".join(f"{m.name} ({m.unit}): {m.help}" for m in metrics[:12])

    def draw(self, view: View, force: bool = False) -> None:
        """Redraw from the view unless nothing it shows has changed."""
        self._view = view
        width, height = self.area
        key = (view.history.version, view.t0, view.t1, width, height)
        if not width or not height or (not force and key == self._drawn):
            return
        self._drawn = key
        sections = self.sections(view, width, height)
        lines: list[Line] = []
        self._sections = {}
        for name, part in sections:
            self._sections[name] = (len(lines), len(lines) + len(part))
            lines.extend(part)
        self.set_lines(lines[:height])

    def on_resize(self) -> None:
        if self._view is not None:
            self.draw(self._view, force=True)

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        """The pane's content as named blocks of lines, `height` lines in all (or fewer)."""
        raise NotImplementedError

    def section_text(self, name: str) -> str:
        """What a section shows now, as text (tests, and a later `copy` action)."""
        a, b = self._sections.get(name, (0, 0))
        return "\n".join("".join(t for t, _ in line) for line in self._lines[a:b])

    def set_subtitle(self, text: str) -> None:
        """The border subtitle, as plain text (it may hold a device name or a setting)."""
        if self._subtitle_text != text:
            self._subtitle_text = text
            self.border_subtitle = plain_text(text)


@dataclass(frozen=True)
class PaneSpec:
    """One pane: its title, the catalog panes whose help is its tooltip, its chart, and where its
    text goes. Layouts: "text-above" (text first, trimmed so the chart keeps 3 rows),
    "text-below" (chart first, the text under it at most height - 3 rows), "chart-above" (a chart
    of at most `chart_rows` rows and half the pane, the text gets the rest).

    A monitor pane (tui/panes.py) also has `name` (its widget id), `short` (its tab), `help` (its
    paragraph in the help screen, plain text) and `vital_rank` (how long its figure in the
    vitals line stays when the line is short: 0 never goes); its key is its number. An extra
    view's pane (screens/io_view.py) has `key`, the letter that shows it."""

    title: str
    chart: ChartSpec
    catalog_panes: tuple[str, ...] = ()
    layout: str = "text-below"
    text_name: str = "text"
    chart_rows: int = 9
    key: str = ""
    name: str = ""
    short: str = ""
    help: str = ""
    vital_rank: int = 9


class ChartPane(Pane):
    """A pane drawn from its SPEC: a chart and a block of text; subclasses fill in the hooks."""

    SPEC: PaneSpec

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("SPEC")
        if spec is not None:
            cls.KEY, cls.TITLE, cls.CATALOG_PANES = spec.key, spec.title, spec.catalog_panes

    def __init__(self, *, id: str | None = None, key: str | None = None):
        super().__init__(id=id, key=key)
        self.chart = Chart(self.SPEC.chart)
        self._sums: dict[Rows, WindowSums] = {}
        self.window_totals = WindowTotals()  # rates x tick lengths over the window, kept between redraws

    def window_sums(self, rows: Rows) -> WindowSums:
        """Counts over the window kept between redraws (window_sums.py), one per `rows`."""
        sums = self._sums.get(rows)
        if sums is None:
            sums = self._sums[rows] = WindowSums(rows)
        return sums

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        spec = self.SPEC
        series = self.series(view)
        if series is not None:
            self.chart.series = series
        subtitle = self.subtitle(view)
        if subtitle is not None:
            self.set_subtitle(subtitle)

        def chart(rows: int) -> list[Line]:
            return self.chart.lines(view.history, view.t0, view.t1, width, rows, empty_text=self.empty_text(view))

        if spec.layout == "text-above":
            text, rest = fit(self.fitted_text(view, width, height), height)
            return [(spec.text_name, text), ("chart", chart(rest))]
        if spec.layout == "chart-above":
            lines = chart(min(spec.chart_rows, height // 2) if height >= 5 else 0)
            return [("chart", lines), (spec.text_name, self.fitted_text(view, width, height - len(lines)))]
        text = self.fitted_text(view, width, height)[: max(0, height - 3)]
        return [("chart", chart(height - len(text))), (spec.text_name, text)]

    def fitted_text(self, view: View, width: int, height: int) -> list[Line]:
        """The text, each line cut to the width at a separator or a word (drawing.fit)."""
        return [fit_runs(line, width) for line in self.text(view, width, height)]

    # --- hooks ----------------------------------------------------------------------------------

    def series(self, view: View) -> list[Series] | None:
        """The series to chart now (None: the spec's)."""
        return None

    def subtitle(self, view: View) -> str | None:
        """The border subtitle (None: leave it as it is)."""
        return None

    def text(self, view: View, width: int, height: int) -> list[Line]:
        """The text beside the chart; the layout trims it to its room."""
        return []

    def empty_text(self, view: View) -> str | None:
        """What the chart says when it has nothing to draw (None: the chart spec's)."""
        return None

    @staticmethod
    def vital(view: View) -> list[Run]:
        """The pane's headline figure for the vitals line (widgets/status.py), [] for none."""
        return []


def fit(head: list[Line], body_height: int) -> tuple[list[Line], int]:
    """Text above a chart: keep all of it if the chart still gets 3 rows, else trim the text."""
    room = body_height - len(head)
    if room >= 3 or not head:
        return head, max(0, room)
    keep = max(0, body_height - 3)
    return head[:keep], body_height - keep
