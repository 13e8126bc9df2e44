"""IOViewScreen: one pane full screen, on the monitor's time window and position: the WAL view (W)
and the reads-and-cache view (R). Two views, not one: at 80x24 each needs its text and a chart of
its own, and WAL (writes, flushes) and reads (misses, cache) are asked about separately.

It draws from the same FrameHistory as the monitor (live: now, or where the display was paused;
replay: the player's position), so its figures are those of the monitor's window.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer

from pgio_tui.tui.screens.view_screen import ViewScreen
from pgio_tui.tui.widgets.pane import ChartPane, View
from pgio_tui.tui.widgets.reads_pane import ReadsPane
from pgio_tui.tui.widgets.wal_pane import WalPane

VIEWS: dict[str, type[ChartPane]] = {"wal": WalPane, "reads": ReadsPane}


class IOViewScreen(ViewScreen):
    DEFAULT_CSS = """
    IOViewScreen { layout: vertical; }
    IOViewScreen ChartPane { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", key_display="esc", id="io-view-back")]

    @classmethod
    def over(cls, app, monitor, arg: str) -> IOViewScreen:
        return cls(arg, monitor.view)

    def __init__(self, name: str, view: Callable[[], View]):
        super().__init__()
        self.view_name = name
        self.view = view  # the monitor's View (history, session, window) now
        self.pane = VIEWS[name](id=f"view-{name}")

    def compose(self) -> ComposeResult:
        yield self.pane
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.pane.focus()

    def redraw_view(self, force: bool = False) -> None:
        self.pane.draw(self.view(), force=force)
