"""PickerApp: the recordings in a folder, one per row (start, duration, host, workload, size); Enter
opens the one under the cursor. `pick_recording()` runs it and returns the chosen path."""

from __future__ import annotations

import os
import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from pgio_tui.format import size as size_text
from pgio_tui.safe_text import plain_text
from pgio_tui.store.listing import RecordingInfo, list_recordings
from pgio_tui.store.player import hms
from pgio_tui.tui.textual_private import QuietInput
from pgio_tui.tui.themes import ThemedApp


def row_of(info: RecordingInfo) -> tuple[str, ...]:
    if info.error:
        return (info.path.name, "", "", "", info.error, size_text(info.size))
    start = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.start_t)) if info.start_t else "(no ticks)"
    return (info.path.name, start, hms(info.duration) if info.duration is not None else "",
            info.host, info.workload or "-", size_text(info.size))


class PickerApp(QuietInput, ThemedApp, App[str | None]):
    TITLE = "pgio-tui replay"
    BINDINGS = [Binding("q,escape", "quit_picker", "Quit"), Binding("enter", "open", "Open", priority=True)]
    DEFAULT_CSS = """
    #where { height: 1; background: $panel; padding: 0 1; }
    DataTable { height: 1fr; }
    """

    def __init__(self, folder: str, infos: list[RecordingInfo], theme: str | None = None):
        super().__init__()
        self.folder, self.infos = folder, infos
        self.init_themes(theme)

    def compose(self) -> ComposeResult:
        yield Static(plain_text(f" {len(self.infos)} recordings in {os.path.abspath(self.folder)}  ·  enter: replay"),
                     id="where")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.apply_wanted_theme()
        table = self.query_one(DataTable)
        table.add_columns("file", "start", "duration", "host", "workload", "size")
        for i, info in enumerate(self.infos):
            table.add_row(*map(plain_text, row_of(info)), key=str(i))
        table.focus()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if not self.infos:
            return
        info = self.infos[table.cursor_row]
        if info.error:
            self.notify(f"{info.path.name}: {info.error}", severity="error", timeout=4)
            return
        self.exit(str(info.path))

    def on_data_table_row_selected(self, _event) -> None:
        self.action_open()

    def action_quit_picker(self) -> None:
        self.exit(None)


def pick_recording(folder: str, theme: str | None = None) -> str | None:
    """Show the folder's recordings; the path picked, or None when the user quit.
    RecordingError when the folder holds none."""
    app = PickerApp(folder, list_recordings(folder), theme=theme)
    app.run()
    return app.return_value
