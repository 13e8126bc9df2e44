"""MonitorScreen: the panes of tui/panes.py on one timeline, laid out for the terminal's size.

The screen draws a FrameHistory; whoever owns it (the live app, replay, diff) pushes Frames into
the history and calls `redraw()`. Layouts:

- grid3 (3 columns, every pane at once; 3 x 2 for six panes) when each pane gets >= 50 columns and
  >= 10 rows (~150 x 24 up);
- grid2 (2 columns; 2 x 3) when each gets >= 48 columns and >= 10 rows (~100 x 32 up, e.g. 120 x 40);
- compact below that (80 x 24): a vitals line with every pane's headline figure, tabs, one pane.

The grids' sizes, the number keys and the tabs follow from the list of panes.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.screen import Screen

from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.panes import KEYS_SHOWN, PANES, pane_key
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.degraded import DISMISS_KEY, DegradedBanner
from pgio_tui.tui.widgets.footer import FooterBar
from pgio_tui.tui.widgets.lines import one_paint
from pgio_tui.tui.widgets.pane import Pane, View
from pgio_tui.tui.widgets.pane_tabs import PaneTabs
from pgio_tui.tui.widgets.status import HeaderState, StatusBar, Vitals, WorkloadStrip

PANE_KEYS = "show / focus a pane: " + " ".join(f"{pane_key(i)} {cls.SPEC.short}" for i, cls in enumerate(PANES))
GRIDS = {"grid3": 3, "grid2": 2}  # the grid layouts and their columns
WINDOWS = (10, 20, 30, 60, 120, 300, 600, 1800, 3600)  # the zoom steps of the shared time window, seconds
DEFAULT_WINDOW = 300


def fitted_window(span_s: float) -> int:
    """The window of a session or recording `span_s` long until it is zoomed: the shortest step
    that holds all of it, at most the default, so that a 20 s run fills the charts rather than
    being a strip at their right edge."""
    return min(DEFAULT_WINDOW, next((w for w in WINDOWS if w >= span_s), DEFAULT_WINDOW))


def grid_rows(columns: int, panes: int = len(PANES)) -> int:
    return -(-panes // columns)


def layout_for(width: int, height: int, chrome: int = 2) -> str:
    body = height - chrome
    if width // GRIDS["grid3"] >= 50 and body // grid_rows(GRIDS["grid3"]) >= 10:
        return "grid3"
    if width // GRIDS["grid2"] >= 48 and body // grid_rows(GRIDS["grid2"]) >= 10:
        return "grid2"
    return "compact"


def grid_css() -> str:
    """The grid layouts' rules (monitor.tcss has the rest): their sizes follow from the panes."""
    return "\n".join(f"MonitorScreen.-{name} #panes {{ layout: grid; grid-size: {cols} {grid_rows(cols)}; "
                     f"grid-gutter: 0; }}" for name, cols in GRIDS.items())


class MonitorScreen(Screen):
    CSS_PATH = "../monitor.tcss"
    DEFAULT_CSS = grid_css()
    EXTRA_ROWS = 0  # rows a subclass puts around the panes (replay's timeline): the layout counts them

    class FirstData(Message):
        """The first redraw that had frames to show (start-up time is measured to here)."""

    BINDINGS = [
        *(Binding(pane_key(i), f"show_pane({i})", f"pane {pane_key(i)}", show=False, key_display=KEYS_SHOWN,
                  tooltip=PANE_KEYS) for i in range(len(PANES))),
        Binding("tab", "cycle_pane(1)", "Next pane", show=False, priority=True,
                tooltip="next pane (shift+tab: previous)"),
        Binding("shift+tab", "cycle_pane(-1)", "Previous pane", show=False, priority=True),
        Binding(DISMISS_KEY, "dismiss_banner", "Dismiss", show=False,
                tooltip="dismiss the \"degraded\" banner (the list stays in this help)"),
    ]

    def __init__(self, history: FrameHistory, session: SessionInfo, state: HeaderState | None = None,
                 workload=None):
        super().__init__()
        self.history = history
        self.session = session
        self.state = state or HeaderState()
        self.workload = workload
        self.window_s = DEFAULT_WINDOW
        self.fitted = True  # the window follows span() (fitted_window) until it is zoomed
        self.frozen_t1: float | None = None  # set while the display is paused
        self.active = 0
        self.layout_name = ""
        self._panes: list[Pane] = []
        self._shown_data = False
        self._styled_with: int | None = None  # the app's style-sheet version the widgets were mounted with

    # --- composition and layout ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        self._styled_with = self.app._css_update_count
        yield StatusBar(id="status")
        if self.session.source == "live" and self.session.notes:  # without notes it would never show
            yield DegradedBanner(self.session.notes, id="degraded")
        yield Vitals(id="vitals")
        yield PaneTabs([f"{pane_key(i)} {cls.SPEC.short}" for i, cls in enumerate(PANES)], self.active, id="tabs")
        # the layout's classes before anything is mounted: styled once, not again in on_mount
        compact = self._layout_classes(self.app.size.width, self.app.size.height) == "compact"
        with Container(id="panes"):
            for i, cls in enumerate(PANES):
                pane = cls(id=cls.SPEC.name, key=pane_key(i))
                yield pane.set_class(compact and i != self.active, "-hidden", update=False)
        yield WorkloadStrip(id="workload", classes="-on" if self.workload is not None else "")
        yield FooterBar()

    def show_notes(self) -> None:
        """The session's notes, known only once connected when the screen was composed before."""
        if self.session.source == "live" and self.session.notes and not self.query(DegradedBanner):
            self.mount(DegradedBanner(self.session.notes, id="degraded"), after=self._status)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Textual styles a screen's every widget again when it is shown. Shown the first time, just
        after its mount styled them with the same style sheet, that is the same work twice (a third
        of Textual's styling before the first frame); later (back from a view, after a theme
        change) it restyles as before."""
        if self._styled_with is not None and self._styled_with == self.app._css_update_count:
            event.refresh_styles = False
        self._styled_with = None

    def action_dismiss_banner(self) -> None:
        for banner in self.query(DegradedBanner):
            banner.dismiss()

    @property
    def panes(self) -> list[Pane]:
        return self._panes

    def on_mount(self) -> None:
        self._panes = [self.query_one(f"#{cls.SPEC.name}", Pane) for cls in PANES]
        self._status = self.query_one(StatusBar)
        self._vitals = self.query_one(Vitals)
        self._workload = self.query_one(WorkloadStrip)
        self._apply_layout(self.app.size.width, self.app.size.height)

    def on_resize(self, event) -> None:
        self._apply_layout(event.size.width, event.size.height)
        # the header and the panes' tables are laid out to their width: draw once they have it
        self.call_after_refresh(self.redraw, True)

    def _apply_layout(self, width: int, height: int) -> None:
        if self._layout_classes(width, height) is None:
            return
        self._show_active()
        self.redraw(force=True)

    def _layout_classes(self, width: int, height: int) -> str | None:
        """Set the classes of the layout this size gets; its name, or None when it had them."""
        chrome = 2 + self.EXTRA_ROWS + (3 if self.workload is not None else 0)
        name = layout_for(width, height, chrome)
        if name == self.layout_name:
            return None
        self.layout_name = name
        self.set_class(name == "compact", "-compact")
        self.set_class(name == "grid2", "-grid2")
        self.set_class(name == "grid3", "-grid3")
        return name

    def _show_active(self) -> None:
        compact = self.layout_name == "compact"
        for i, pane in enumerate(self.panes):
            pane.set_class(compact and i != self.active, "-hidden")
        self.query_one(PaneTabs).active = self.active

    def set_workload(self, workload) -> None:
        """A workload launched from the dialog: its strip shows from now on."""
        self.workload = workload
        self._workload.set_class(workload is not None, "-on")
        self.layout_name = ""  # the strip takes rows: lay out again
        self._apply_layout(self.app.size.width, self.app.size.height)

    # --- pane focus -----------------------------------------------------------------------------

    def action_show_pane(self, index: int) -> None:
        self.active = index % len(PANES)
        self._show_active()
        pane = self.panes[self.active]
        self.redraw(force=True)
        pane.focus()

    def action_cycle_pane(self, step: int) -> None:
        focused = self.focused
        current = self.active
        for i, pane in enumerate(self.panes):
            if focused is not None and (focused is pane or pane in focused.ancestors):
                current = i
        self.action_show_pane(current + step)

    def on_pane_tabs_chosen(self, event: PaneTabs.Chosen) -> None:
        if event.index != self.active:
            self.action_show_pane(event.index)

    def on_descendant_focus(self, event) -> None:
        for i, pane in enumerate(self.panes):
            if event.widget is pane or pane in event.widget.ancestors:
                self.active = i

    # --- time window ----------------------------------------------------------------------------

    def zoom(self, step: int) -> int:
        """step < 0 zooms in (a shorter window), > 0 out. Returns the new window in seconds."""
        i = min(range(len(WINDOWS)), key=lambda k: abs(WINDOWS[k] - self.window_s))
        self.fitted = False
        self.window_s = WINDOWS[max(0, min(len(WINDOWS) - 1, i + step))]
        self.redraw(force=True)
        return self.window_s

    def set_paused(self, paused: bool) -> None:
        self.frozen_t1 = (self.history.end_t if paused else None)
        self.state.paused = paused
        self.redraw(force=True)

    @property
    def paused(self) -> bool:
        return self.state.paused

    def span(self) -> float:
        """How long the session (or recording) shown is, seconds: the history's (replay: the file's)."""
        t = self.history.t
        return t[-1] - t[0] if t else 0.0

    def view(self) -> View:
        t1 = self.frozen_t1 if self.frozen_t1 is not None else self.history.end_t
        if t1 is None:
            t1 = 0.0
        if self.fitted:
            self.window_s = fitted_window(self.span())
        return View(self.history, self.session, t1 - self.window_s, t1)

    # --- drawing --------------------------------------------------------------------------------

    def redraw(self, force: bool = False) -> None:
        """Draw what is visible, in one paint. Hidden panes are skipped (drawn when shown)."""
        if not self._panes or not self.is_attached:
            return
        view = self.view()
        with one_paint(self):  # what changed goes out once, at the end, without a message per pane
            self._status.draw(view, self.state)
            if self.layout_name == "compact":
                self._vitals.draw(view)
            if self.paused and not force:
                return  # the display stands still; the header says so and keeps counting
            for pane in self._panes:
                if not pane.has_class("-hidden"):
                    pane.draw(view, force=force)
            if self.workload is not None:
                self._workload.draw(self.workload)
        if not self._shown_data and self.history.t:
            self._shown_data = True
            self.post_message(self.FirstData())

