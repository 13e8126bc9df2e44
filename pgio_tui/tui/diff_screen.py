"""The diff screen: `pgio-tui diff A B` without --format. `run_diff_screen(comparison, args) -> int`.

Three tabs over one Comparison (analysis/compare.py), both runs loaded once (diff_series.py):

- Summary: the rows of `--format table` with the noise verdict; the row under the cursor is charted
  beside (wide terminals) or below (80x24) the table: A and B on the aligned axis; on a large
  terminal (~140 x 40 up) the settings diff sits under that chart too;
- Charts: the main groups (latency, writes by source, Dirty/Writeback with thresholds, devices by
  role, checkpoints), A and B overlaid on one axis, seconds since the alignment point, checkpoint
  spans of both runs under every chart; grid of 3 x 2 (~150 x 28 up), 2 x 3 (~100 x 34 up), else a
  scrolling column;
- Settings: the runs, the settings and machine facts that differ, the comparison's notes.

Nothing here computes a statistic: the table, the legends and the settings read the Comparison.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, ScrollableContainer, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from pgio_tui.analysis.compare import Comparison
from pgio_tui.tui.diff_series import DiffSeries, load_series
from pgio_tui.tui.screens.dialogs import HelpScreen, help_keys
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.textual_private import QuietInput
from pgio_tui.tui.themes import ThemedApp
from pgio_tui.tui.widgets.diff_header import DiffHeader
from pgio_tui.tui.widgets.diff_overlay_pane import (
    CHART_PANES,
    CheckpointsPane,
    OverlayPane,
    chart_templates,
    choice_for_row,
)
from pgio_tui.tui.widgets.diff_settings import SettingsView
from pgio_tui.tui.widgets.diff_summary_table import SummaryTable
from pgio_tui.tui.widgets.pane import View

TABS = (("summary", "Summary"), ("charts", "Charts"), ("settings", "Settings"))
TAB_KEYS = "show a tab: " + " ".join(f"{i + 1} {title}" for i, (_key, title) in enumerate(TABS))
WIDE = 140  # columns from which the summary's row chart sits beside the table
TALL = 40  # rows from which, when wide too, the settings diff is on the Summary tab as well

DIFF_KEYS_NOTE = """\
  [b]↑ ↓[/b]          Summary: move through the rows; the row's series are
                 charted. Charts: the metric of the focused chart (its
                 title lists the choice)
"""
DIFF_READING = """\
[b]Reading the diff[/b]
  [b]■A[/b] and [b]■B[/b] are the two runs, in the same colours everywhere.
  x is seconds since the alignment point (--align start | workload |
  checkpoint); both runs are cut to the same length. Under every chart,
  [b]ckpt[/b] marks checkpoints: ▀ in A, ▄ in B, both at once in A's colour over
  B's; ◆ a setting changed during that run.
  A legend quotes the summary row behind the chart: A, B, change in % of A
  and the verdict. [b]changed[/b]: the 95 % block-bootstrap interval of B − A
  excludes 0; [b]noise[/b]: it does not (docs/diff.md). [b]?A[/b], [b]?B[/b], [b]?AB[/b]:
  too few independent blocks in that run to judge; blank: a figure not
  judged (a max, a p95 over ticks, a count).

[b]Themes[/b]
  The theme variables [b]diff-a[/b] and [b]diff-b[/b] colour the runs (default:
  chart-1 and chart-2); user themes are *.toml files in
  $themes
"""


def grid_for(width: int, height: int, chrome: int = 4) -> str:
    """The Charts tab's layout for a terminal size (chrome: header, tabs, footer)."""
    body = height - chrome
    if width >= 150 and body >= 2 * 12:
        return "grid3"
    if width >= 100 and body >= 3 * 10:
        return "grid2"
    return "column"


class DiffScreen(Screen):
    BINDINGS = [
        *(Binding(str(i + 1), f"show_tab('{key}')", title, show=False, key_display="1-3", tooltip=TAB_KEYS)
          for i, (key, title) in enumerate(TABS)),
        Binding("tab", "cycle_tab(1)", "Tabs", key_display="tab/1-3", priority=True,
                tooltip="next tab (shift+tab: previous)"),
        Binding("shift+tab", "cycle_tab(-1)", "Previous tab", show=False, priority=True),
        Binding("left,h", "focus_chart(-1)", "Prev chart", show=False, key_display="←",
                tooltip="Charts: focus the previous / next chart (h / l too)"),
        Binding("right,l", "focus_chart(1)", "Next chart", show=False, key_display="→",
                tooltip="Charts: focus the previous / next chart (h / l too)"),
    ]
    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    DiffScreen TabbedContent { height: 1fr; }
    DiffScreen TabPane { padding: 0; height: 1fr; }
    #summary-body { layout: vertical; height: 1fr; }
    #table { height: 1fr; }
    #summary-side { height: 10; }
    #row-chart { height: 1fr; }
    #summary-settings { display: none; }
    DiffScreen.-wide #summary-body { layout: horizontal; }
    DiffScreen.-wide #table { width: auto; max-width: 65%; height: 1fr; }
    DiffScreen.-wide #summary-side { width: 1fr; height: 1fr; }
    DiffScreen.-wide.-tall #summary-settings { display: block; height: auto; max-height: 60%; }
    #chart-grid { layout: grid; grid-size: 1; grid-rows: 10; grid-gutter: 0; height: 1fr; }
    DiffScreen.-grid2 #chart-grid { grid-size: 2 3; grid-rows: 1fr; }
    DiffScreen.-grid3 #chart-grid { grid-size: 3 2; grid-rows: 1fr; }
    #settings-scroll { height: 1fr; }
    """

    def __init__(self, data: DiffSeries):
        super().__init__()
        self.data = data
        self.session = SessionInfo(source="diff")
        self.grid = ""
        self._last_chart = 0

    @property
    def comparison(self) -> Comparison:
        return self.data.comparison

    def compose(self) -> ComposeResult:
        yield DiffHeader(self.comparison, id="header")
        with TabbedContent(initial="summary", id="tabs"):
            with TabPane(f"1 {TABS[0][1]}", id="summary"):
                with Container(id="summary-body"):
                    yield SummaryTable(self.comparison, id="table")
                    with Vertical(id="summary-side"):
                        yield OverlayPane(self.data, "row", id="row-chart",
                                          empty_text="no per-tick series in either run")
                        with VerticalScroll(id="summary-settings", can_focus=False):
                            yield SettingsView(self.comparison, runs=False, id="side-settings")
            with TabPane(f"2 {TABS[1][1]}", id="charts"):
                with ScrollableContainer(id="chart-grid", can_focus=False):
                    for i, (key, title, choices) in enumerate(CHART_PANES):
                        cls = CheckpointsPane if key == "checkpoints" else OverlayPane
                        yield cls(self.data, title, choices, key=str(i + 1), id=f"chart-{key}")
            with TabPane(f"3 {TABS[2][1]}", id="settings"):
                with VerticalScroll(id="settings-scroll"):
                    yield SettingsView(self.comparison, id="settings-view")
        yield Footer()

    # --- layout ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._apply_layout(self.app.size.width, self.app.size.height)
        table = self.query_one(SummaryTable)
        self._chart_row(*table.current)
        self.redraw()
        table.focus()

    def on_resize(self, event) -> None:
        self._apply_layout(event.size.width, event.size.height)
        self.call_after_refresh(self.redraw)

    def _apply_layout(self, width: int, height: int) -> None:
        self.set_class(width >= WIDE, "-wide")
        self.set_class(height >= TALL, "-tall")
        grid = grid_for(width, height)
        if grid != self.grid:
            self.grid = grid
            self.set_class(grid == "grid2", "-grid2")
            self.set_class(grid == "grid3", "-grid3")

    @property
    def chart_panes(self) -> list[OverlayPane]:
        return list(self.query_one("#chart-grid").query(OverlayPane))

    @property
    def row_chart(self) -> OverlayPane:
        return self.query_one("#row-chart", OverlayPane)

    def view(self) -> View:
        return View(self.data.a.history, self.session, 0.0, self.data.length)

    def redraw(self) -> None:
        """Draw every pane once it has a size (hidden tabs draw when shown: Pane.on_resize)."""
        view = self.view()
        with self.app.batch_update():
            for pane in [self.row_chart, *self.chart_panes]:
                pane.draw(view, force=True)

    # --- tabs -----------------------------------------------------------------------------------

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    def action_show_tab(self, key: str) -> None:
        self.query_one(TabbedContent).active = key

    def action_cycle_tab(self, step: int) -> None:
        keys = [k for k, _ in TABS]
        i = keys.index(self.active_tab) if self.active_tab in keys else 0
        self.action_show_tab(keys[(i + step) % len(keys)])

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        key = event.pane.id
        if key == "summary":
            self.query_one(SummaryTable).focus()
        elif key == "charts":
            panes = self.chart_panes
            panes[min(self._last_chart, len(panes) - 1)].focus()
        else:
            self.query_one("#settings-scroll").focus()
        self.call_after_refresh(self.redraw)

    def action_focus_chart(self, step: int) -> None:
        if self.active_tab != "charts":
            return
        panes = self.chart_panes
        focused = self.focused
        i = panes.index(focused) if focused in panes else self._last_chart - step
        self._last_chart = (i + step) % len(panes)
        panes[self._last_chart].focus()

    def action_choose_metric(self, step: int) -> None:
        """The palette's "next metric": the focused chart's, else the first chart's."""
        focused = self.focused
        pane = focused if isinstance(focused, OverlayPane) else self.chart_panes[self._last_chart]
        pane.action_choose(step)

    def on_descendant_focus(self, event) -> None:
        panes = self.chart_panes
        if event.widget in panes:
            self._last_chart = panes.index(event.widget)

    # --- the summary's row chart ----------------------------------------------------------------

    def on_summary_table_row_chosen(self, message: SummaryTable.RowChosen) -> None:
        self._chart_row(message.row, message.group)

    def _chart_row(self, row, group: str) -> None:
        choice = choice_for_row(row)
        title = f"{group}: {row.name}" if row is not None else (f"{group} (a group: ↓ to its rows)" if group else "")
        self.row_chart.set_choices([choice] if choice else [], title=title)


class DiffApp(QuietInput, ThemedApp, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "pgio-tui diff"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="help", tooltip="this help"),
        Binding("t", "next_theme", "Theme", id="theme",
                tooltip="next theme (the command palette, ctrl+p, lists them all)"),
    ]

    def __init__(self, data: DiffSeries, *, theme: str | None = None):
        super().__init__()
        self.data = data
        self.init_themes(theme)

    def on_mount(self) -> None:
        self.apply_wanted_theme()
        self.push_screen(DiffScreen(self.data))

    @property
    def diff_screen(self) -> DiffScreen | None:
        return next((s for s in reversed(self.screen_stack) if isinstance(s, DiffScreen)), None)

    async def action_quit(self) -> None:
        self.exit(0)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_keys(self.screen.active_bindings.values()), title="pgio-tui diff help",
                                        keys_note=DIFF_KEYS_NOTE, reading=DIFF_READING))

    def _on_diff(self, action: str, *args: Any) -> None:
        screen = self.diff_screen
        if screen is not None:
            getattr(screen, f"action_{action}")(*args)

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        for i, (key, title) in enumerate(TABS):
            yield SystemCommand(f"Show {title}", f"The {title} tab ({i + 1})",
                                lambda key=key: self._on_diff("show_tab", key))
        yield SystemCommand("Next metric", "Chart the next metric of the focused chart (↓)",
                            lambda: self._on_diff("choose_metric", 1))
        yield SystemCommand("Next chart", "Focus the next chart on the Charts tab (→)",
                            lambda: self._on_diff("focus_chart", 1))
        yield SystemCommand("Next theme", "Cycle through the themes (t)", self.action_next_theme)
        yield SystemCommand("Help", "Keys and how to read the diff (? or F1)", self.action_help)


def diff_app(comparison: Comparison, *, theme: str | None = None) -> DiffApp:
    """The app for a Comparison, its series loaded (tests and run_diff_screen build it here)."""
    return DiffApp(load_series(comparison, chart_templates()), theme=theme)


def run_diff_screen(comparison: Comparison, args: Any) -> int:
    """Open the diff screen on a comparison built by `pgio-tui diff` (pgio_tui/commands/diff.py)."""
    app = diff_app(comparison, theme=getattr(args, "theme", None))
    app.run()
    return app.return_code or 0
